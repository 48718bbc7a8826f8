//! The measured loop, run inside a child process ("fork"): P named producer threads, one
//! consumer thread, a start barrier, a self-check of every run, per-thread CPU time and
//! context switches from `getrusage(RUSAGE_THREAD)`, perf counters per message over one
//! counted run after the measured ones ([`crate::profile::counters`]; never on a timed run),
//! and end-to-end latency of sampled messages in an HDR histogram.
//!
//! Generic over `H: Handoff` and the payload size `N`, and over `TRACE` (whether the run
//! emits the lab's own publish/consume spans and counters); the by-name choice happens once
//! in [`crate::measure::variants::dispatch`].

use crate::measure::variants::{self, Settings, WithHandoff};
use crate::profile::usage::{page_faults, process_cpu_ms, thread_usage, ThreadUsage};
use crate::protocol::{Ctx, Pass};
use crate::stats::percentiles::Percentiles;
use handoff::{Checker, Consumer, Handoff, Message, Producer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

/// The most measured runs a fork makes to reach `min_measure_ms`.
pub const MAX_RUNS: usize = 100;

/// Messages in each warm-up run of a timed fork (fewer if the run has fewer): a warm-up
/// warms the code, the allocator and the caches, which a short run does as well as a long
/// one (docs/results-schema.md), and a full-length one takes as long as a measured run.
pub const WARMUP_MESSAGES: u64 = 1 << 17;

/// Runs that spread this widely (interquartile range over median) make a fork measure on to
/// `spread_measure_ms`: time-sliced runs, where threads outnumber cores, vary run by run
/// with where the kernel put each thread, and their median needs more of them.
pub const WIDE_SPREAD: f64 = 0.3;

/// The fewest measured runs whose spread is judged.
pub const SPREAD_MIN_RUNS: usize = 8;

/// Payload sizes the lab compiles the loop for (`handoff::Message<N>` is const-generic).
pub const PAYLOADS: &[usize] = &[16, 64, 256];

/// Everything a child needs to run one (variant, P) cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellSpec {
    /// Variant name.
    pub variant: String,
    /// Ring wait strategy, when the variant takes one.
    pub wait: Option<String>,
    /// Producer threads.
    pub producers: usize,
    /// Messages per run, over all producers.
    pub messages: u64,
    /// Warm-up runs (timed mode).
    pub warmup: usize,
    /// Measured runs (timed mode).
    pub runs: usize,
    /// Ring size (ring, disruptor-rs) and bound of the channel peers.
    pub ring_size: usize,
    /// Bound of the locked queue; `None` is unbounded.
    pub capacity: Option<usize>,
    /// Prefetch of the reactive pipeline.
    pub prefetch: usize,
    /// Payload bytes per message.
    pub payload: usize,
    /// Stamp every K-th message of each producer for latency; 0 turns sampling off.
    pub sample_every: u64,
    /// Most messages the consumer takes per `recv_batch`; 1 uses `recv`.
    pub batch: usize,
    /// A timed fork keeps measuring past `runs` until its measured runs add up to this
    /// many ms (at most [`MAX_RUNS`] runs), as a JMH iteration has a measurement time:
    /// short runs (a fast handoff's) are noisy one by one, and their median needs more.
    #[serde(default)]
    pub min_measure_ms: f64,
    /// A timed fork whose runs spread wider than [`WIDE_SPREAD`] keeps measuring until they
    /// add up to this many ms (0: never).
    #[serde(default)]
    pub spread_measure_ms: f64,
    /// Extra sampled/unsampled run pairs measuring the cost of sampling (timed forks).
    pub sampling_ab_pairs: usize,
    /// Messages in a heap pass's run.
    pub heap_messages: u64,
    /// Messages in a trace pass's run.
    pub trace_messages: u64,
    /// The JVM's settings, for the `jvm-*` variants.
    #[serde(default)]
    pub jvm: Option<JvmSettings>,
    /// A traced twin's file stem (`--trace in-run`): its timed forks record their measured
    /// runs with the flight recorder and dump it under this stem (`crate::profile::inrun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_run_trace: Option<String>,
    /// The global allocator the cell must run on (`system`, `mimalloc`, `jemalloc`; the
    /// heap pass runs on dhat's whatever this says); `None`: not checked (JVM rows).
    #[serde(default)]
    pub allocator: Option<String>,
    /// Where the runs' threads run (`crate::machine::placement`).
    #[serde(default)]
    pub placement: crate::machine::placement::Placement,
    /// A calibration cell of this kind (`crate::measure::calibration`, which the
    /// experiment runs in place of [`run_spec`]): the child runs
    /// the competitor through its own API in a plain loop instead of the harness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
}

impl CellSpec {
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            variant: self.variant.clone(),
            wait: self.wait.clone(),
            ring_size: self.ring_size,
            capacity: self.capacity,
            prefetch: self.prefetch,
        }
    }
}

/// The JVM's side of a `jvm-*` cell (run by `crate::measure::jvm`): where Bus lives, how to call it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct JvmSettings {
    /// The class path to run Bus with (`crate::measure::jvm::class_path`: the base class
    /// folder and the Disruptor jar, a group's classes and jars before them).
    pub classes: String,
    /// JVM flags, split on whitespace.
    pub flags: String,
    /// The JVM wait strategy (`--wait` of Bus).
    pub wait: String,
    /// The message form (`--message` of Bus): `inline` or `byte-array`.
    #[serde(default)]
    pub message: String,
    /// The collector setting (`--jvm-gc`'s name) the flags came from.
    #[serde(default)]
    pub gc: String,
    /// JIT warm-up passes before the runs.
    pub jit_warmup: u64,
    /// Plant a lost message (`--fault drop-one`): every run must come out invalid.
    pub drop_one: bool,
}

/// What a `jvm-*` fork adds to its outcome (from `crate::measure::jvm`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct JvmReport {
    /// `java.version`, VM name and flags as the JVM reports them.
    pub jvm: Value,
    /// Disruptor version from its jar, when the cell is the Disruptor.
    pub disruptor_version: Option<String>,
    /// A JVM group's queue library and its version as its jar states it (`jctools-core
    /// 2.1-SNAPSHOT`), for `jvm-jctools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// `SINGLE` or `MULTI`.
    pub producer_type: String,
    /// The JVM wait strategy (Bus's `--wait` name).
    pub wait: String,
    /// Its `WaitStrategy` class (`BlockingWaitStrategy`, ...), for the Disruptor.
    #[serde(default)]
    pub wait_strategy: Option<String>,
    /// The message form: `inline` or `byte-array`.
    #[serde(default)]
    pub message: String,
    /// The collector setting (`--jvm-gc`'s name).
    #[serde(default)]
    pub gc: String,
    /// JIT warm-up passes run before the warm-up runs.
    pub jit_warmup_passes: u64,
    /// Per measured run: bytes allocated per message (ThreadMXBean), GC count and ms.
    pub allocated_bytes_per_message: Vec<f64>,
    /// See `allocated_bytes_per_message`.
    pub gc_count: Vec<u64>,
    /// See `allocated_bytes_per_message`.
    pub gc_ms: Vec<f64>,
    /// The trace pass's top allocation sites (JFR's allocation samples).
    #[serde(default)]
    pub allocation_sites: Vec<crate::profile::jfr::AllocationSite>,
}

/// One run's outcome.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// Barrier release to the consumer seeing the end, ms.
    pub ms: f64,
    /// Whether the run's checks passed (count, per-producer order, checksum).
    pub valid: bool,
    /// The checks' account: "ok" or what failed.
    pub verdict: String,
    /// Messages sent (as planned).
    pub sent: u64,
    /// Messages received.
    pub received: u64,
    /// Sends that failed (the channel closed under a producer).
    pub send_failures: u64,
    /// Process CPU time over the run, ms (all threads).
    pub process_cpu_ms: f64,
    /// Process CPU time / wall time × 100 (200% = two cores busy).
    pub process_pct: f64,
    /// Per-thread CPU and context switches.
    pub threads: Vec<ThreadUsage>,
    /// Whether sampling was on.
    pub sampled: bool,
    /// Page faults from after the handoff was opened until every thread ended (the run's
    /// own, not its set-up's).
    #[serde(default)]
    pub page_faults: u64,
    /// perf counters per message, process and per thread (measured runs of timed forks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::profile::counters::RunCounters>,
}

/// What a timed child prints: its runs and merged latency.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CellOutput {
    /// Warm-up runs (checked, not used in statistics).
    pub warmup: Vec<RunResult>,
    /// Measured runs.
    pub runs: Vec<RunResult>,
    /// Latency over the valid measured runs.
    pub latency_ns: Option<Percentiles>,
    /// Messages sent by each producer.
    pub per_producer: Vec<u64>,
    /// Cost of one sample (two clock reads and a histogram record), ns, measured in-process.
    pub sample_cost_ns: f64,
    /// Sampled / unsampled pairs (ms), when asked for.
    pub ab_sampled_ms: Vec<f64>,
    /// Unsampled runs of the pairs, ms.
    pub ab_unsampled_ms: Vec<f64>,
    /// The fork's counted run, after its measured runs: the one run with perf counters on,
    /// which is never timed for the score (each enabled event is switched out and in with
    /// its thread at every context switch, a cost a fast handoff shows where threads
    /// outnumber cores: docs/harness.md).
    #[serde(default)]
    pub counted: Vec<RunResult>,
    /// Heap statistics (heap mode).
    pub heap: Option<HeapStats>,
    /// Trace file written (trace mode), relative to nothing: the path given.
    pub trace_file: Option<String>,
    /// Notes from the child (e.g. why a trace could not be written).
    pub notes: Vec<String>,
    /// What the JVM reported, for the `jvm-*` variants.
    #[serde(default)]
    pub jvm: Option<JvmReport>,
    /// Per thread name, its off-CPU account over the trace run (trace mode, where the
    /// scheduler's tracepoints could be recorded: `crate::profile::sched`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<std::collections::BTreeMap<String, crate::profile::sched::ThreadOffCpu>>,
    /// Why `off_cpu` is missing from a trace run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu_note: Option<String>,
    /// A traced twin's timed fork: its flight recorder's dump, relative to the run folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_run_trace: Option<String>,
    /// The child binary's global allocator, as the child itself names it.
    #[serde(default)]
    pub allocator: Option<String>,
    /// The CPU each thread of the runs was pinned to, consumer first; `None`: the kernel
    /// placed them.
    #[serde(default)]
    pub pinned_cpus: Option<Vec<usize>>,
}

/// Heap totals of one profiled run, from `dhat::HeapStats`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HeapStats {
    /// Allocations over the run.
    pub total_blocks: u64,
    /// Bytes allocated over the run.
    pub total_bytes: u64,
    /// Peak live bytes.
    pub max_bytes: u64,
    /// Live blocks at the peak.
    pub max_blocks: u64,
    /// Messages in the profiled run.
    pub messages: u64,
    /// Whether the profiled run passed its checks.
    pub valid: bool,
}

pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// The consumer's histogram: full range when sampling, a minimal one (a few hundred bytes,
/// so heap profiles show the variant, not the lab) when not.
fn run_histogram(sampling: bool) -> Histogram<u64> {
    if sampling {
        new_histogram()
    } else {
        Histogram::new_with_bounds(1, 2, 1).expect("valid histogram bounds")
    }
}

struct Consumed {
    checker: Checker,
    hist: Histogram<u64>,
    start: Instant,
    end: Instant,
    usage: ThreadUsage,
    counted: Option<crate::profile::counters::ThreadReading>,
}

/// The consumer's `messages_per_ms` counter of traced runs (`TRACE`; otherwise nothing).
struct Rate<const TRACE: bool> {
    last_ms: u64,
    since: u64,
    batches: u32,
}

impl<const TRACE: bool> Rate<TRACE> {
    /// Consumer batches between two looks at the clock: reading `Instant` costs about as
    /// much as a record, and batches may hold a few messages (figures:
    /// docs/design-figures.md).
    const CLOCK_EVERY: u32 = 16;

    fn new() -> Self {
        let last_ms = if TRACE { handoff::now_ns() / 1_000_000 } else { 0 };
        Rate { last_ms, since: 0, batches: 0 }
    }

    /// Counts `n` messages taken; emits the counter when a millisecond has passed.
    #[inline(always)]
    fn add(&mut self, n: u64) {
        if !TRACE {
            return;
        }
        self.since += n;
        self.batches += 1;
        if self.batches % Self::CLOCK_EVERY != 0 {
            return;
        }
        let now_ms = handoff::now_ns() / 1_000_000;
        if now_ms > self.last_ms {
            handoff::counter!("messages_per_ms", self.since / (now_ms - self.last_ms));
            self.last_ms = now_ms;
            self.since = 0;
        }
    }
}

/// One run: open, start everyone at a barrier, send, consume, check.
pub fn run_once<H: Handoff, const N: usize, const TRACE: bool>(
    handoff: &H,
    spec: &CellSpec,
    messages: u64,
    sample_every: u64,
) -> Result<(RunResult, Histogram<u64>), String> {
    run_counted::<H, N, TRACE>(handoff, spec, messages, sample_every, false)
}

/// [`run_once`], with perf counters read over the run when `count` (see
/// [`crate::profile::counters`]).
pub fn run_counted<H: Handoff, const N: usize, const TRACE: bool>(
    handoff: &H,
    spec: &CellSpec,
    messages: u64,
    sample_every: u64,
    count: bool,
) -> Result<(RunResult, Histogram<u64>), String> {
    let p = spec.producers;
    let per = handoff::spread(messages, p);
    let (txs, rx) = handoff
        .open::<Message<N>>(p)
        .map_err(|e| format!("{}: open({p}) failed: {e}", spec.variant))?;
    // Producers and the consumer start together; the run's clock starts when the first of
    // them leaves the barrier (the main thread may be descheduled at that moment).
    let barrier = Arc::new(Barrier::new(p + 1));
    let cpus = crate::machine::placement::plan(spec.placement, p + 1)?;
    let cpu_of = |thread: usize| cpus.as_ref().map(|c| c[thread]);
    // Opened before the usage baselines, so its own set-up stays out of them.
    let probe = crate::profile::counters::Probe::start(count);
    let cpu0 = process_cpu_ms();
    // After `open`: faults from here on are the run's own (and its threads' stacks).
    let faults0 = page_faults();
    let mut producers = Vec::with_capacity(p);
    for (i, tx) in txs.into_iter().enumerate() {
        let (n, barrier, counters, cpu) = (per[i], barrier.clone(), probe.thread(), cpu_of(i + 1));
        producers.push(spawn_producer::<N, TRACE, _>(
            i,
            tx,
            n,
            sample_every,
            barrier,
            counters,
            cpu,
        )?);
    }
    let (batch, counters, cpu) = (spec.batch.max(1), probe.thread(), cpu_of(0));
    let consumer =
        spawn_consumer::<N, TRACE, _>(rx, p, sample_every, batch, barrier, counters, cpu)?;
    let started = Started { producers, consumer, probe, cpu0, faults0 };
    finish_run::<N>(started, messages, &per, sample_every)
}

/// What a producer thread hands back: when it left the barrier, its failed sends, its CPU
/// use and its counters.
type Produced = (Instant, u64, ThreadUsage, Option<crate::profile::counters::ThreadReading>);

/// Starts producer `i`, which sends its `n` messages once every thread is at `barrier`
/// (the timed section is the loop between the barrier and the drop of `tx`).
fn spawn_producer<const N: usize, const TRACE: bool, P: Producer<Message<N>> + 'static>(
    i: usize,
    mut tx: P,
    n: u64,
    sample_every: u64,
    barrier: Arc<Barrier>,
    counters: crate::profile::counters::ThreadProbe,
    cpu: Option<usize>,
) -> Result<thread::JoinHandle<Result<Produced, String>>, String> {
    thread::Builder::new()
        .name(format!("producer-{i}"))
        .spawn(move || {
            // Before the barrier: a failed pin is reported once every thread is in.
            let pinned = cpu.map_or(Ok(()), crate::machine::placement::pin_current);
            let counters = counters.open();
            ready::<TRACE>();
            barrier.wait();
            counters.enable();
            let start = Instant::now();
            // Untraced, the producer's loop is the own loops' ([`produce`]): the same
            // message, stamping and loop shape, so that the lab's row and its own loop
            // differ only in the handoff's send (a loop of the harness's own, doing the same
            // per message, compiled differently and cost the ring: docs/harness.md).
            let failures = if TRACE {
                produce_traced::<N, P>(i, &mut tx, n, sample_every)
            } else {
                produce::<N>(i, n, sample_every, |m| tx.send(m).is_ok())
            };
            // Closing is the producer's last act of the run: counted.
            drop(tx);
            let name = format!("producer-{i}");
            let counted = counters.read(&name);
            pinned.map(|()| (start, failures, thread_usage(&name), counted))
        })
        .map_err(|e| format!("spawning producer-{i}: {e}"))
}

/// In a traced run, a thread's `ready` instant, just before it waits at the start barrier:
/// it marks in the trace when the thread was ready, and it is the thread's first record, so
/// the recorder gives the thread its ring here (a lock, the kernel's thread id, the name
/// copied) rather than at its first message, inside the timed section.
#[inline]
fn ready<const TRACE: bool>() {
    if TRACE {
        handoff::instant!("ready");
    }
}

/// Producer `i`'s loop, the harness's untraced one and every own loop's (`plain`):
/// `Message::new`, every `every`-th stamped.
/// Returns its failed sends (it stops at the first).
#[inline]
pub(crate) fn produce<const N: usize>(
    i: usize,
    n: u64,
    every: u64,
    mut send: impl FnMut(Message<N>) -> bool,
) -> u64 {
    let mut countdown = 0u64;
    for seq in 0..n {
        let mut m = Message::<N>::new(i as u32, seq);
        if every > 0 {
            if countdown == 0 {
                countdown = every;
                m.sampled = 1;
                m.sent_ns = handoff::now_ns();
            }
            countdown -= 1;
        }
        if !send(m) {
            return 1;
        }
    }
    0
}

/// A traced run's producer loop: [`produce`], with a `publish` span entered around each
/// stamped message's send. Returns its failed sends (it stops at the first).
///
/// An unstamped message's send is the untraced loop's, inline; the stamped one's, with its
/// span, is out of line, and it gets the message's fields by value and makes the message
/// again there. Handed the message itself, the loop built every message on the stack for
/// the call's sake and copied it into the slot from there, reading it back in wider loads
/// than it was written in, which the store buffer cannot forward: a stall per message that
/// made a fast handoff's traced runs slower than its untraced ones (`lab trace-overhead
/// --workloads ring-yielding-p1`; figures: docs/design-figures.md).
fn produce_traced<const N: usize, P: Producer<Message<N>>>(
    i: usize,
    tx: &mut P,
    n: u64,
    sample_every: u64,
) -> u64 {
    produce::<N>(i, n, sample_every, |m| {
        if m.sampled != 0 {
            send_in_span::<N, P>(tx, m.producer, m.seq, m.sent_ns)
        } else {
            tx.send(m).is_ok()
        }
    })
}

/// A stamped message's send inside its `publish` span (one in `sample_every`): the message
/// [`produce`] made, made again from its fields.
#[cold]
#[inline(never)]
fn send_in_span<const N: usize, P: Producer<Message<N>>>(
    tx: &mut P,
    producer: u32,
    seq: u64,
    sent_ns: u64,
) -> bool {
    let mut m = Message::<N>::new(producer, seq);
    m.sampled = 1;
    m.sent_ns = sent_ns;
    let flow = handoff::trace::flow_id(producer, seq);
    let _span = handoff::publish_span!(flow);
    tx.send(m).is_ok()
}

/// Starts the consumer, which takes messages until every producer has closed, checking
/// each and recording the sampled ones' latency (the timed section starts at `barrier`).
fn spawn_consumer<const N: usize, const TRACE: bool, C: Consumer<Message<N>> + 'static>(
    mut rx: C,
    p: usize,
    sample_every: u64,
    batch: usize,
    barrier: Arc<Barrier>,
    counters: crate::profile::counters::ThreadProbe,
    cpu: Option<usize>,
) -> Result<thread::JoinHandle<Result<Consumed, String>>, String> {
    thread::Builder::new()
        .name("consumer".to_string())
        .spawn(move || {
            let pinned = cpu.map_or(Ok(()), crate::machine::placement::pin_current);
            let counters = counters.open();
            let mut checker = Checker::new(p);
            let mut hist = run_histogram(sample_every > 0);
            ready::<TRACE>();
            barrier.wait();
            counters.enable();
            let start = Instant::now();
            drain::<N, TRACE, C>(&mut rx, batch, &mut checker, &mut hist);
            let end = Instant::now();
            let counted = counters.read("consumer");
            drop(rx);
            pinned.map(|()| Consumed {
                checker,
                hist,
                start,
                end,
                usage: thread_usage("consumer"),
                counted,
            })
        })
        .map_err(|e| format!("spawning the consumer: {e}"))
}

/// The consumer's timed loop: takes messages until every producer has closed, checking
/// each and recording the sampled ones' latency.
///
/// The per-message work is small enough to inline into the handoff's receive loop, as a
/// plain loop's check is: the sampled message's record (one in `sample_every`) is out of
/// line, and the closure is made at each call rather than borrowed (borrowed, it was not
/// inlined: docs/harness.md). One loop shape for traced and untraced runs, so that both
/// compile to the same consumer code but for `rate` (a no-op unless TRACE).
///
/// A function of its own, out of line, taking what it works on by reference, as the own
/// loops' drain is: written inline in the thread's closure, beside the probes and the
/// histogram's set-up, the compiled loop reached the handoff's slots through one more
/// dependent load per message than the contract loop's, and a fast handoff's row ran
/// measurably below the same adapter in the contract loop (docs/harness.md).
#[inline(never)]
fn drain<const N: usize, const TRACE: bool, C: Consumer<Message<N>>>(
    rx: &mut C,
    batch: usize,
    checker: &mut Checker,
    hist: &mut Histogram<u64>,
) {
    let mut rate = Rate::<TRACE>::new();
    if batch == 1 {
        while let Some(m) = rx.recv() {
            take::<N, TRACE>(checker, hist, &m);
            rate.add(1);
        }
    } else {
        loop {
            let n = rx.recv_batch(batch, |m: Message<N>| take::<N, TRACE>(checker, hist, &m));
            if n == 0 {
                break;
            }
            rate.add(n as u64);
        }
    }
}

/// The consumer's work per message: the check, and the record of a sampled one.
#[inline(always)]
fn take<const N: usize, const TRACE: bool>(
    checker: &mut Checker,
    hist: &mut Histogram<u64>,
    m: &Message<N>,
) {
    checker.observe(m);
    if m.sampled != 0 {
        record_sample::<TRACE>(hist, m.sent_ns, m.producer, m.seq);
    }
}

/// Records a sampled message's latency (and, traced, its consume span). Out of line and
/// cold: it runs once per `sample_every` messages, and inlined it would make the consumer's
/// per-message closure too large for the handoff's receive loop to inline. It takes the
/// message's fields by value, not the message by reference: a reference to the message
/// passed out of line makes the receive loop copy every message to the stack first, where
/// the plain loop's check reads it in place.
#[cold]
#[inline(never)]
fn record_sample<const TRACE: bool>(
    hist: &mut Histogram<u64>,
    sent_ns: u64,
    producer: u32,
    seq: u64,
) {
    let lat = handoff::now_ns().saturating_sub(sent_ns).max(1);
    let _ = hist.record(lat);
    if TRACE {
        let flow = handoff::trace::flow_id(producer, seq);
        let _s = handoff::consume_span!(flow);
    }
}

/// A run's threads, started, and the baselines its CPU time and page faults are taken
/// against.
struct Started {
    producers: Vec<thread::JoinHandle<Result<Produced, String>>>,
    consumer: thread::JoinHandle<Result<Consumed, String>>,
    probe: crate::profile::counters::Probe,
    cpu0: f64,
    faults0: u64,
}

/// Joins a run's threads and makes its result: wall time from the first thread to leave
/// the barrier to the consumer seeing the end, the checks' verdict, CPU and page faults.
fn finish_run<const N: usize>(
    started: Started,
    messages: u64,
    per: &[u64],
    sample_every: u64,
) -> Result<(RunResult, Histogram<u64>), String> {
    let Started { producers, consumer, probe, cpu0, faults0 } = started;
    let p = producers.len();
    let mut send_failures = 0;
    let mut threads = Vec::with_capacity(p + 1);
    let mut starts = Vec::with_capacity(p + 1);
    let mut counted = Vec::with_capacity(p + 1);
    for (i, h) in producers.into_iter().enumerate() {
        let (start, f, usage, c) = h.join().map_err(|_| format!("producer-{i} panicked"))??;
        send_failures += f;
        starts.push(start);
        threads.push(usage);
        counted.extend(c);
    }
    let consumed = consumer.join().map_err(|_| "the consumer panicked".to_string())??;
    counted.extend(consumed.counted);
    let counters = probe.finish(messages, counted);
    starts.push(consumed.start);
    let t0 = starts.into_iter().min().expect("at least the consumer");
    let cpu1 = process_cpu_ms();
    let faults = page_faults() - faults0;
    threads.push(consumed.usage);
    let ms = consumed.end.duration_since(t0).as_secs_f64() * 1e3;
    let verdict = consumed.checker.verdict_against(per, expected_checksum::<N>(per));
    let process_cpu_ms = cpu1 - cpu0;
    Ok((
        RunResult {
            ms,
            valid: verdict.ok(),
            verdict: verdict.describe(),
            sent: verdict.sent,
            received: verdict.received,
            send_failures,
            process_cpu_ms,
            process_pct: if ms > 0.0 { process_cpu_ms / ms * 100.0 } else { 0.0 },
            threads,
            sampled: sample_every > 0,
            page_faults: faults,
            counters,
        },
        consumed.hist,
    ))
}

/// [`handoff::expected_checksum`] of `per`, computed once per run shape: a fork repeats
/// one shape, and the sum costs a digest per message (milliseconds a run, outside its
/// timing, but a share of the fork's wall time).
pub(crate) fn expected_checksum<const N: usize>(per: &[u64]) -> u64 {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(usize, Vec<u64>, u64)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((n, p, sum)) if *n == N && p == per => *sum,
        _ => {
            let sum = handoff::expected_checksum::<N>(per);
            *last = Some((N, per.to_vec(), sum));
            sum
        }
    })
}

/// Measures what one sample costs: a clock read at send, one at receipt, a histogram
/// record. Median of 5 rounds of 40,000 (a few milliseconds a fork: every fork measures it,
/// so it is kept short).
pub fn sample_cost_ns() -> f64 {
    let mut hist = new_histogram();
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let n = 40_000u64;
        let t = Instant::now();
        for _ in 0..n {
            let sent = std::hint::black_box(handoff::now_ns());
            let lat = handoff::now_ns().saturating_sub(sent).max(1);
            let _ = hist.record(std::hint::black_box(lat));
        }
        rounds.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

struct CellJob<'a, 'b> {
    spec: &'a CellSpec,
    ctx: &'b mut Ctx,
}

impl WithHandoff for CellJob<'_, '_> {
    type Out = Result<CellOutput, String>;

    fn run<H: Handoff + 'static>(self, handoff: H) -> Self::Out {
        match self.spec.payload {
            16 => run_cell::<H, 16>(&handoff, self.spec, self.ctx),
            64 => run_cell::<H, 64>(&handoff, self.spec, self.ctx),
            256 => run_cell::<H, 256>(&handoff, self.spec, self.ctx),
            other => Err(format!("payload {other} is not compiled in; valid: {PAYLOADS:?}")),
        }
    }
}

fn run_cell<H: Handoff, const N: usize>(
    handoff: &H,
    spec: &CellSpec,
    ctx: &mut Ctx,
) -> Result<CellOutput, String> {
    let mut out = CellOutput {
        per_producer: handoff::spread(spec.messages, spec.producers),
        pinned_cpus: crate::machine::placement::plan(spec.placement, spec.producers + 1)?,
        ..Default::default()
    };
    match ctx.pass.clone() {
        Pass::Timed => {
            let warm = spec.messages.min(WARMUP_MESSAGES);
            for _ in 0..spec.warmup {
                out.warmup.push(run_once::<H, N, false>(handoff, spec, warm, spec.sample_every)?.0);
                ctx.heartbeat();
            }
            // A traced twin records its measured runs only: the warm-up stays unrecorded.
            let recording = match &spec.in_run_trace {
                Some(stem) => Some(crate::profile::inrun::Recording::start(stem)?),
                None => None,
            };
            let mut merged = new_histogram();
            while more_runs(spec, &out.runs) {
                let (n, every) = (spec.messages, spec.sample_every);
                let (r, h) = if recording.is_some() {
                    run_once::<H, N, true>(handoff, spec, n, every)?
                } else {
                    run_once::<H, N, false>(handoff, spec, n, every)?
                };
                if r.valid && spec.sample_every > 0 {
                    merged.add(&h).map_err(|e| format!("merging histograms: {e:?}"))?;
                }
                out.runs.push(r);
                ctx.heartbeat();
            }
            if let Some(rec) = recording {
                match rec.finish() {
                    Ok(file) => out.in_run_trace = Some(file),
                    Err(why) => out.notes.push(why),
                }
            }
            if spec.sample_every > 0 && !merged.is_empty() {
                out.latency_ns = Some(Percentiles::of(&merged));
            }
            let (n, every) = (spec.messages, spec.sample_every);
            out.counted.push(run_counted::<H, N, false>(handoff, spec, n, every, true)?.0);
            ctx.heartbeat();
            for _ in 0..spec.sampling_ab_pairs {
                let n = spec.messages;
                let (a, _) = run_once::<H, N, false>(handoff, spec, n, spec.sample_every.max(1))?;
                ctx.heartbeat();
                let (b, _) = run_once::<H, N, false>(handoff, spec, n, 0)?;
                ctx.heartbeat();
                if a.valid && b.valid {
                    out.ab_sampled_ms.push(a.ms);
                    out.ab_unsampled_ms.push(b.ms);
                }
            }
            out.sample_cost_ns = sample_cost_ns();
        }
        Pass::Heap { .. } => {
            // lab-heap wraps this in the profiler; one run, no sampling.
            let (r, _) = run_once::<H, N, false>(handoff, spec, spec.heap_messages, 0)?;
            out.runs.push(r);
            ctx.heartbeat();
        }
        Pass::Trace { .. } => {
            // The child installed the recorder around this cell; the scheduler's events
            // go into its file after it is written (`tracehook::traced`).
            let sched = crate::profile::sched::Session::start();
            let (r, _) =
                run_once::<H, N, true>(handoff, spec, spec.trace_messages, spec.sample_every)?;
            match sched.finish(&r.threads) {
                Ok((by_thread, caveats)) => {
                    out.off_cpu = Some(by_thread);
                    out.notes.extend(caveats);
                }
                Err(why) => {
                    out.notes.push(why.clone());
                    out.off_cpu_note = Some(why);
                }
            }
            out.runs.push(r);
            ctx.heartbeat();
        }
    }
    Ok(out)
}

/// Whether a timed fork makes another measured run after `runs`: up to `spec.runs`; then
/// until they add up to about `min_measure_ms` (it stops where one more run would overshoot
/// by more than the fork now falls short, so that a cell of 130 ms runs makes two, not
/// three, for 300 ms); then, while they spread wider than [`WIDE_SPREAD`], until
/// `spread_measure_ms`. Never past [`MAX_RUNS`].
pub(crate) fn more_runs(spec: &CellSpec, runs: &[RunResult]) -> bool {
    more_runs_of(spec.runs, spec.min_measure_ms, spec.spread_measure_ms, runs)
}

fn more_runs_of(least: usize, min_ms: f64, spread_ms: f64, runs: &[RunResult]) -> bool {
    let n = runs.len();
    if n < least.max(1) {
        return true;
    }
    if n >= MAX_RUNS {
        return false;
    }
    let total: f64 = runs.iter().map(|r| r.ms).sum();
    if total + total / n as f64 / 2.0 < min_ms {
        return true;
    }
    total < spread_ms && n >= SPREAD_MIN_RUNS && {
        let ms: Vec<f64> = runs.iter().filter(|r| r.valid).map(|r| r.ms).collect();
        crate::stats::quartile_spread(&ms).is_some_and(|s| s > WIDE_SPREAD)
    }
}

/// Runs a cell as its spec says; the entry point of every child.
pub fn run_spec(spec: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
    if spec.producers == 0 || spec.messages == 0 {
        return Err("producers and messages must be at least 1".to_string());
    }
    if let (Some(w), true) =
        (&spec.wait, variants::find(&spec.variant).is_some_and(|v| v.takes_wait))
    {
        variants::check_wait(w)?;
    }
    variants::dispatch(&spec.settings(), CellJob { spec, ctx })?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(ms: &[f64]) -> Vec<RunResult> {
        ms.iter().map(|&ms| RunResult { ms, valid: true, ..Default::default() }).collect()
    }

    #[test]
    fn a_fork_measures_to_about_its_time_then_on_while_its_runs_spread() {
        // At least `least` runs, whatever the time.
        assert!(more_runs_of(2, 0.0, 0.0, &runs(&[500.0])));
        // 130 ms runs for 300 ms: two (260 ms, 40 short) rather than three (90 over).
        assert!(more_runs_of(2, 300.0, 0.0, &runs(&[130.0])));
        assert!(!more_runs_of(2, 300.0, 0.0, &runs(&[130.0, 130.0])));
        // 100 ms runs: a third lands on 300.
        assert!(more_runs_of(2, 300.0, 0.0, &runs(&[100.0, 100.0])));
        assert!(!more_runs_of(2, 300.0, 0.0, &runs(&[100.0, 100.0, 100.0])));
        // Steady 20 ms runs stop at 300 ms; the same time in runs spread ±50% goes on to 900.
        let steady = runs(&[20.0; 15]);
        assert!(!more_runs_of(2, 300.0, 900.0, &steady));
        let spread: Vec<f64> = (0..15).map(|i| [10.0, 20.0, 30.0][i % 3]).collect();
        assert!(more_runs_of(2, 300.0, 900.0, &runs(&spread)));
        let spread: Vec<f64> = (0..45).map(|i| [10.0, 20.0, 30.0][i % 3]).collect();
        assert!(!more_runs_of(2, 300.0, 900.0, &runs(&spread)), "900 ms reached");
        assert!(!more_runs_of(2, 300.0, 0.0, &runs(&spread[..15])), "0: never");
        // Never past MAX_RUNS, however short the runs.
        assert!(!more_runs_of(2, 300.0, 900.0, &runs(&[1.0; MAX_RUNS])));
    }
}
