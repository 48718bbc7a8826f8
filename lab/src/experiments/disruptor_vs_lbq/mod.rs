//! `disruptor-vs-lbq`: seed 001, the game-server message bus moved from Java's
//! `LinkedBlockingQueue` to the LMAX Disruptor. P producers (1..6), one consumer; the
//! locked queue (the LBQ port) against the ring (the Disruptor port, Blocking wait), with
//! any of the reference peers beside them: duration and QPS per P with paired ratios,
//! latency of sampled messages, CPU per thread, context switches, a heap profile and a
//! trace per cell.

mod allocators;
mod analyse;
mod calibration;
mod collectors;
mod detail;
mod dimension;
mod inrun;
mod plan;
mod sites;
mod split;
mod tables;
mod why;

pub use detail::{key, ratio_producers, DvlKey, HandoffDetail};

use crate::experiment::{size, Defaults, Experiment, Finished, Measured, Outcome, Plan, Shared};
use crate::experiment::{Switch, TraceMode};
use crate::experiments::choices::{self, Choices};
use crate::measure::harness::{self, CellOutput, CellSpec, PAYLOADS};
use crate::measure::variants;
use crate::protocol::Ctx;
use crate::results::Results;
use crate::units::parse_producers;
use clap::builder::PossibleValue;
use clap::Args;
use serde::Serialize;

/// The experiment.
#[derive(Debug)]
pub struct DisruptorVsLbq;

/// Messages per run by default, small enough that the default run (two variants × six P
/// in 27 rounds, plus the heap and trace passes) ends in minutes on 2 cores (its measured
/// duration is in docs/seeds.md). The seed used 32Mi.
pub const DEFAULT_MESSAGES: &str = "1Mi";

/// The seed's QPS ratios, the Disruptor's QPS over the LinkedBlockingQueue's (its 对比
/// column), as (producers, ratio): 137% with one producer, 252% with six.
pub const SEED_QPS_RATIOS: [(u64, f64); 2] = [(1, 1.37), (6, 2.52)];

/// Heap runs are slow (a backtrace per allocation): at most this many messages.
pub const DEFAULT_HEAP_MESSAGES: u64 = 100_000;

/// Producer counts, `1,2,4` or `1..6`.
#[derive(Debug, Clone, Serialize)]
pub struct Producers(pub Vec<usize>);

fn producers(s: &str) -> Result<Producers, String> {
    parse_producers(s).map(Producers)
}

fn payload(s: &str) -> Result<usize, String> {
    let n = size(s)? as usize;
    if PAYLOADS.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "payload {n} is not compiled in; valid: {}",
            PAYLOADS.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
        ))
    }
}

/// `--payload`'s possible values: the payload sizes compiled in, bytes (clap keeps names
/// as 'static strings; the help is built a few times per process).
fn payloads() -> Vec<PossibleValue> {
    let text = |n: usize| -> &'static str { Box::leak(n.to_string().into_boxed_str()) };
    PAYLOADS.iter().map(|p| PossibleValue::new(text(*p))).collect()
}

fn variants_help() -> String {
    variants::list_help(
        "Variants to run: a comma list of the names below, or `all` [default: locked,ring]",
        &variants::all(),
    )
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct DvlArgs {
    /// Messages per run, a count: a number or a size like 1M, 32Mi (the seed: 32Mi).
    #[arg(long, value_parser = size, default_value = DEFAULT_MESSAGES)]
    pub messages: u64,
    /// Producer counts (threads; one row per count): `1,2,4` or `1..6`.
    #[arg(long, value_parser = producers, default_value = "1..6")]
    pub producers: Producers,
    /// Variants to run: a comma list of the registry's names, or `all` [default:
    /// locked,ring]; the help lists them from `measure::variants`.
    #[arg(long, help = variants_help(),
          value_parser = Choices::new(choices::variant_list, choices::all_variants))]
    pub variants: Option<String>,
    /// The variant the row ratios are taken against, one of --variants [default: locked,
    /// or the first variant].
    #[arg(long)]
    pub baseline: Option<String>,
    /// Ring wait strategies (the ring and jvm-disruptor rows; one row each): a comma list
    /// of the names below, or `all`. With `blocking,java-blocking` each ring row is also
    /// paired with `ring[java-blocking]`: the ring's own waiting against Java's, ported.
    #[arg(long, default_value = "blocking",
          value_parser = Choices::new(choices::wait_list, choices::waits_and_all))]
    pub wait: String,
    /// Ring size in slots, a power of two (also the bound of the channel peers, in
    /// messages; the seed: 32Mi).
    #[arg(long, value_parser = size, default_value = "64Ki")]
    pub ring_size: u64,
    /// Bound of the locked queue, in elements (messages) [default: unbounded, as the seed].
    #[arg(long, value_parser = size)]
    pub capacity: Option<u64>,
    /// Payload per message, bytes: one of the sizes compiled in.
    #[arg(long, value_parser = Choices::new(payload, payloads), default_value = "16")]
    pub payload: usize,
    /// Messages per heap run [default: min(messages, 100000)].
    #[arg(long, value_parser = size)]
    pub heap_messages: Option<u64>,
    /// Messages per trace run [default: messages].
    #[arg(long, value_parser = size)]
    pub trace_messages: Option<u64>,
    /// Stamp every K-th message of each producer for latency, K in messages (0: off).
    #[arg(long, value_parser = size, default_value = "1024")]
    pub sample_every: u64,
    /// Most messages the consumer takes per recv_batch (1: recv one at a time) [default:
    /// --ring-size: everything published, as the Disruptor's batch processor takes it]; the
    /// channel peers (crossbeam, std-mpsc) have no batch receive and always take one at a
    /// time.
    #[arg(long, value_parser = size)]
    pub batch: Option<u64>,
    /// Milliseconds: each timed fork keeps measuring past --runs until its measured runs
    /// add up to about this many ms (at most 100 runs): the ring's runs are short and
    /// noisy one by one.
    #[arg(long, value_parser = size, default_value = "300")]
    pub min_fork_ms: u64,
    /// Milliseconds: a timed fork whose runs spread widely (interquartile range over 30% of
    /// their median, as time-sliced runs do where threads outnumber cores) keeps measuring
    /// until they add up to this many ms (0: never).
    #[arg(long, value_parser = size, default_value = "900")]
    pub spread_fork_ms: u64,
    /// Extra JVM flags of the jvm-* rows (one string, as `java` takes them), after the
    /// collector's (--jvm-gc) flags, so a later -Xms/-Xmx here wins; a collector flag
    /// (-XX:+Use…GC) is refused: choose the collector with --jvm-gc.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub jvm_flags: String,
    /// The jvm-disruptor's wait strategy: `matching` runs the JVM strategy of the same name
    /// as --wait (blocking → BlockingWaitStrategy, as seed 001 ran; java-blocking, its
    /// literal port → BlockingWaitStrategy too), or one of the JVM's strategies below
    /// (lite-blocking → LiteBlockingWaitStrategy).
    #[arg(long, default_value = "matching", value_parser = ["matching", "blocking", "lite-blocking", "sleeping", "yielding", "busy-spin"])]
    pub jvm_wait: String,
    /// The JVM message: `inline` carries the payload as long fields of the message, as the
    /// Rust message carries its bytes (jvm-lbq: one object a message besides the queue's
    /// node; jvm-disruptor: none); `byte-array` adds a byte[] per message (labelled so).
    #[arg(long, value_enum, default_value = "inline")]
    pub jvm_message: JvmMessageArg,
    /// The JVM rows' collector, a dimension like --allocator: a comma list of the names
    /// below, or `all` (rows `jvm-lbq@parallel`, ...; a table compares them with the
    /// default). Sized settings fix the heap at twice the run's messages (-Xms = -Xmx,
    /// -XX:+AlwaysPreTouch); tools/jvm/README.md has why the default is the default.
    #[arg(long, value_enum, value_delimiter = ',', default_value = crate::measure::jvm::DEFAULT_GC)]
    pub jvm_gc: Vec<collectors::JvmGcArg>,
    /// JIT warm-up passes (of min(messages, 1M) messages each) in every JVM fork before its
    /// runs.
    #[arg(long, value_parser = size, default_value = "2")]
    pub jit_warmup: u64,
    /// Global allocator of the Rust rows' children, a dimension like --producers: a comma
    /// list of the names below, or `all` (jemalloc by default: a thread-caching allocator,
    /// the Rust counterpart of the JVM rows' thread-local allocation buffers; system is
    /// std's, glibc malloc here). JVM rows and the heap pass (dhat) ignore it.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "jemalloc")]
    pub allocator: Vec<AllocatorArg>,
    /// Where each run's threads run, JVM rows included: `auto` pins each thread to its own
    /// CPU when the run's threads fit the CPUs (and leaves oversubscribed runs to the
    /// kernel), `spread` always pins round-robin, `kernel` never pins.
    #[arg(long, value_enum, default_value = "auto")]
    pub placement: crate::machine::placement::Placement,
    /// Our own variants' own loops (locked, ring, naive, reactive): each row beside
    /// `<row>/own-loop`, its crate's own API in a plain loop with the lab's message and
    /// check, in the same rounds, paired (the peers and the JVM originals always run theirs).
    #[arg(long, value_enum, default_value = "on")]
    pub own_loops: Switch,
    /// Each Rust row also beside `<row>/contract-loop`: the lab's adapter through the
    /// Handoff contract in the own loops' plain loop, no harness, in the same rounds, so
    /// that a row's gap to its own loop splits into what the contract costs and what the
    /// harness costs (one more cell per Rust row and P).
    #[arg(long, value_enum, default_value = "off")]
    pub contract_loops: Switch,
}

use allocators::AllocatorArg;

/// One value of `--jvm-message`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JvmMessageArg {
    /// The payload as long fields of the message.
    Inline,
    /// The payload in a byte[] of its own.
    ByteArray,
}

impl DvlArgs {
    /// The consumer's batch bound: `--batch`, or the ring's size. A smaller bound than
    /// what is published makes the consumer release slots (and wake producers waiting for
    /// room) once per bound rather than once per run of published messages, as the
    /// Disruptor's batch processor does; with more threads than cores those wake-ups set
    /// the ring's pace (docs/harness.md).
    pub fn batch(&self) -> u64 {
        self.batch.unwrap_or(self.ring_size)
    }
}

impl JvmMessageArg {
    /// Bus's `--message` name.
    pub fn name(self) -> &'static str {
        match self {
            JvmMessageArg::Inline => "inline",
            JvmMessageArg::ByteArray => "byte-array",
        }
    }
}

impl Outcome for CellOutput {
    fn measured(&self) -> Vec<Measured> {
        self.runs
            .iter()
            .map(|r| Measured { value: r.ms, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup
            .iter()
            .map(|r| Measured { value: r.ms, valid: r.valid, verdict: r.verdict.clone() })
            .collect()
    }
}

impl Experiment for DisruptorVsLbq {
    const NAME: &'static str = "disruptor-vs-lbq";
    const ABOUT: &'static str = "seed 001, the game-server message bus (LinkedBlockingQueue → \
        Disruptor): P producers (1..6), one consumer; the locked queue against the ring \
        (Blocking wait): duration, QPS and paired ratios, latency, CPU, heap, traces";
    const DEFAULTS: Defaults = Defaults {
        // A ratio's 99% repeat interval steps inward only at some n, and is exact only for
        // odd n: 27 rounds take the 5th and 23rd per-round ratio (18 took the 2nd and
        // 17th, about half as wide again); docs/seeds.md has how long the default run takes.
        rounds: 27,
        runs: 2,
        warmup: 1,
        trace: &[TraceMode::Flight, TraceMode::Full, TraceMode::InRun, TraceMode::Off],
        heap: Some(Switch::On),
    };
    const MAKE_UP_ROUNDS: bool = true;
    type Args = DvlArgs;
    type Cell = CellSpec;
    type Outcome = CellOutput;
    type Detail = HandoffDetail;
    type Key = DvlKey;

    fn plan(a: &DvlArgs, shared: &Shared) -> Result<Plan<CellSpec>, String> {
        plan::plan(a, shared)
    }

    fn run_cell(cell: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
        match (&cell.jvm, &cell.calibration) {
            // A calibration cell runs its competitor's own loop, not the harness or Bus.
            (_, Some(_)) if cell.jvm.is_some() => {
                return crate::measure::calibration::run(cell, ctx)
            }
            (Some(_), None) => return crate::measure::jvm::run(cell, ctx),
            _ => {}
        }
        // A cell's timed and trace children must run on its allocator's binary.
        let heap = matches!(ctx.pass, crate::protocol::Pass::Heap { .. });
        if let (Some(want), false) = (&cell.allocator, heap) {
            if want != ctx.allocator {
                return Err(format!(
                    "the cell asks for allocator {want}; this child runs on {}",
                    ctx.allocator
                ));
            }
        }
        let mut out = match cell.calibration {
            Some(_) => crate::measure::calibration::run(cell, ctx)?,
            None => harness::run_spec(cell, ctx)?,
        };
        out.allocator = Some(ctx.allocator.to_string());
        Ok(out)
    }

    fn analyse(a: &DvlArgs, run: &Finished<Self>, out: &mut Results) {
        analyse::analyse(a, run, out)
    }
}
