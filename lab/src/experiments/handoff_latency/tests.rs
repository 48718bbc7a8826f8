//! The recording checked against planted faults (no test here asserts a speed): a stall
//! shows in the corrected tail and not in the uncorrected one; a fixed delay shifts the
//! percentiles by itself; a rate that cannot be kept is reported as not sustained, never
//! as a low latency; the files read back as written; bad input is one line naming the
//! valid choices.

use super::cell::{Plant, Rate, RateRun};
use super::hdr::{self, Tail};
use super::run::judge;
use super::{plan, Cell, HlArgs, LatOutcome, RateFacts, Work};
use crate::experiment::Shared;
use crate::measure::peers::CrossbeamHandoff;
use crate::measure::variants::WithHandoff;
use clap::Parser;
use std::time::Duration;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// One timed run at a time: the tests' runs would otherwise share this machine's few
/// CPUs with each other and measure that.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fixed-rate run through crossbeam's bounded channel of `bound` slots.
fn run(rate: f64, ms: u64, bound: usize, plant: Plant) -> RateRun {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let r = Rate { rate, producers: 1, duration: Duration::from_millis(ms), plant };
    r.run(CrossbeamHandoff::new(Some(bound))).expect("the run checks out")
}

#[test]
fn a_planted_stall_shows_in_the_corrected_tail_and_hides_from_the_uncorrected() {
    // 100k msgs/s for 300 ms; the consumer sleeps 10 ms after every 10,000th message: each
    // stall delays the ~1,000 messages due during it, by up to 10 ms (about half of them
    // by 5 ms or more). The channel holds 2, so the stall holds the producer, which then
    // sends the rest late: counted from the actual send, they look prompt, and the stall is
    // recorded for the few messages it caught in the channel and in the send.
    let stall = 10 * MS;
    let plant = Plant { stall_every: 10_000, stall_ns: stall, ..Plant::default() };
    let r = run(100_000.0, 300, 2, plant);
    let (c, u) = (Tail::of(&r.corrected), Tail::of(&r.uncorrected));
    assert!(c.p999 >= 8 * MS, "corrected p99.9 {} ns should be near the 10 ms stall", c.p999);
    assert!(c.max >= 9 * MS, "corrected max {} ns should be the stall's length", c.max);
    // Two full stalls (the third falls on the last message): at least ~800 messages
    // delayed by half the stall, corrected; a few per stall uncorrected (a machine that
    // preempts the consumer adds some to both; this bound leaves room for that).
    let half = |h: &hdrhistogram::Histogram<u64>| h.count_between(stall / 2, hdr::HIGHEST_NS);
    let (ch, uh) = (half(&r.corrected), half(&r.uncorrected));
    assert!(ch >= 800, "{ch} corrected latencies of 5 ms or more ({c:?})");
    assert!(uh * 10 < ch, "{uh} uncorrected against {ch} corrected latencies of 5 ms or more");
    assert!(
        u.p99 < c.p99,
        "the uncorrected p99 {} ns hides what the corrected {} ns shows",
        u.p99,
        c.p99
    );
    assert!(r.late > 0, "the held producer sent late");
}

#[test]
fn the_depth_behind_the_slow_messages_says_which_side_held_them() {
    // The consumer stalls 20 ms every 10,000th message at 100k msgs/s into a deep channel:
    // the producer keeps sending, and the messages 5 ms or more late find hundreds behind.
    let stall = 20 * MS;
    let plant = Plant { stall_every: 10_000, stall_ns: stall, ..Plant::default() };
    let r = run(100_000.0, 300, 1 << 16, plant);
    // Judged at the tail's p99, as the Why rule judges it.
    let p99 = Tail::of(&r.corrected).p99;
    let f = r.depths.at_or_above(p99).expect("slow messages after the stalls");
    assert!(f.consumer_held(p99, 100_000.0), "p99 {p99} ns: {f:?}");
    assert!(f.max >= 300, "the first message after a stall finds its arrivals: {f:?}");
    // The slowest journeys are the stall's: held in the channel for most of it. (The
    // producer may be preempted meanwhile on a loaded machine, and then sends late and
    // waits in the channel for the rest of the stall: half the stall is the bound.)
    assert_eq!(r.slowest.len(), super::journeys::KEPT);
    let j = r.slowest[0];
    assert!(j.latency_ns() >= stall * 9 / 10 && j.taken_ns - j.sent_ns >= stall / 2, "{j:?}");
    // The producer sends each message 100 ms after it is due, 5 ms apart: each is late by
    // the producer alone, and little is behind it when it is taken. (A consumer starved of
    // CPU on a loaded machine, as in CI beside loom, falls a few messages behind; held for
    // the whole 100 ms it would find about 20.)
    let plant = Plant { send_late_ns: 100 * MS, ..Plant::default() };
    let r = run(200.0, 1_000, 64, plant);
    let p99 = Tail::of(&r.corrected).p99;
    let f = r.depths.at_or_above(p99).expect("every message is 100 ms late");
    assert!(!f.consumer_held(p99, 200.0), "p99 {p99} ns: {f:?}");
    assert!(f.messages >= 150, "{f:?}");
    let j = r.slowest[0];
    assert!(j.sent_ns - j.due_ns >= 99 * MS, "late to send by the producer alone: {j:?}");
}

#[test]
fn a_planted_fixed_delay_shifts_every_percentile_by_that_delay() {
    // 20 msgs/s (50 ms apart) for 1.5 s; the producer sends each message 20 ms after it
    // is due (waiting as it waits for its schedule, holding no CPU): every latency is the
    // handoff's plus 20 ms, a delay that stands well above a loaded machine's wake-up noise
    // (other tests of this binary run beside it).
    let delay = 20 * MS;
    let base = Tail::of(&run(20.0, 1500, 64, Plant::default()).corrected);
    let plant = Plant { send_late_ns: delay, ..Plant::default() };
    let shifted = Tail::of(&run(20.0, 1500, 64, plant).corrected);
    let by = shifted.p50 as f64 - base.p50 as f64;
    assert!(
        (by - delay as f64).abs() < 0.5 * delay as f64,
        "p50 moved by {by} ns, not ~{delay} ns ({base:?} → {shifted:?})"
    );
    let lowest = shifted.p50.min(shifted.p90).min(shifted.p99).min(shifted.max);
    assert!(lowest >= delay, "a percentile below the planted delay: {shifted:?}");
}

#[test]
fn a_rate_the_consumer_cannot_keep_is_reported_as_not_sustained_never_as_low_latency() {
    // 100k msgs/s offered; the consumer spends 50 µs a message (20k msgs/s at best) and the
    // channel holds 2: the producer is held, passes its deadline and leaves messages unsent.
    let plant = Plant { work_ns: 50 * US, ..Plant::default() };
    let r = run(100_000.0, 50, 2, plant);
    let why = judge(&r, 100 * US).expect_err("not sustained");
    assert!(r.unsent > 0 && why.contains("never sent"), "{why}");
    // The unsent are charged from their due time to the run's end, never left out.
    let c = Tail::of(&r.corrected);
    assert_eq!(c.count, r.planned, "every planned message is in the histogram");
    assert!(c.p50 > MS, "the messages waited long: p50 {} ns", c.p50);
    // Unbounded (a deep queue instead of a held producer): everything is sent, late by
    // the queue, and p99 says so.
    let r = run(100_000.0, 50, 1 << 20, plant);
    let why = judge(&r, 100 * US).expect_err("not sustained");
    assert!(why.contains("p99") && Tail::of(&r.corrected).p99 > MS, "{why}");
}

#[test]
fn a_kept_rate_is_sustained() {
    let r = run(1_000.0, 100, 64, Plant::default());
    assert_eq!(r.unsent, 0);
    // Generous: a loaded test machine may wake the consumer late, but not by 50 ms.
    assert!(judge(&r, 50 * MS).is_ok(), "{:?}", Tail::of(&r.corrected));
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    a: HlArgs,
}

fn plan_of(args: &[&str]) -> Result<usize, String> {
    let cli = Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    plan::plan(&cli.a, &Shared::for_tests()).map(|p| p.cells.len())
}

#[test]
fn bad_input_is_one_line_naming_the_valid_choices() {
    let e = plan_of(&["--variants", "locked,nope"]).unwrap_err();
    assert!(e.contains("unknown variant 'nope'; valid: locked, ring"), "{e}");
    let e = plan_of(&["--variants", "jvm-jctools"]).unwrap_err();
    assert!(e.contains("runs in disruptor-vs-lbq only") && e.contains("jvm-lbq"), "{e}");
    let e = plan_of(&["--jvm-wait", "lazy"]).unwrap_err();
    assert!(e.contains("unknown JVM wait strategy 'lazy'; valid: matching, blocking"), "{e}");
    let e = plan_of(&["--wait", "lazy"]).unwrap_err();
    assert!(e.contains("unknown wait strategy 'lazy'; valid: blocking"), "{e}");
    let e = plan_of(&["--rates", "1M,fast"]).unwrap_err();
    assert!(e.starts_with("--rates: 'fast' is not a size"), "{e}");
    let e = plan_of(&["--ring-size", "1000"]).unwrap_err();
    assert!(e.starts_with("--ring-size:"), "{e}");
    let e = plan_of(&["--duration-ms", "0"]).unwrap_err();
    assert_eq!(e, "--duration-ms must be at least 1 (got 0)");
    let e = plan_of(&["--workloads", "pipeline", "--variants", "crossbeam"]).unwrap_err();
    assert!(e.contains("--variants must name ring or locked"), "{e}");
    for e in
        [plan_of(&["--sweep-steps", "0"]).unwrap_err(), plan_of(&["--producers", "0"]).unwrap_err()]
    {
        assert!(!e.contains('\n'), "{e}");
    }
}

/// A cell of `variant` at `rate` msgs/s for `ms`, run in one JVM (`LatencyRun`).
fn jvm_cell(
    variant: &str,
    wait: Option<&str>,
    work: Work,
    ring: usize,
    plant: Plant,
) -> LatOutcome {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let cell = Cell {
        work,
        variant: Some(variant.into()),
        wait: wait.map(str::to_string),
        ring_size: ring,
        p99_bound_ns: 100 * US,
        warmup: 0,
        runs: 1,
        plant,
        wakeups: false,
    };
    let mut ctx = crate::protocol::Ctx::new(crate::protocol::Pass::Timed);
    super::jvm::run_cell(&cell, &mut ctx).expect("the JVM ran the cell")
}

#[test]
fn the_jvm_rows_record_with_the_correction_on_their_side_and_read_back() {
    // The Disruptor of 64 slots at 100k msgs/s for 300 ms; its handler sleeps 20 ms after
    // every 10,000th message: the ring fills in well under a millisecond, the producer is
    // held and sends late, so the stall shows from the due time and hides from the send, as
    // on the Rust side. (A ring of a few slots would hold the producer in the Disruptor's
    // 1 ns parks, each some 60 µs here, and the rate would not be kept at all.)
    let stall = 20 * MS;
    let plant = Plant { stall_every: 10_000, stall_ns: stall, ..Plant::default() };
    let work = Work::FixedRate { rate: 100_000.0, producers: 1, duration_ms: 300 };
    let o = jvm_cell("jvm-disruptor", Some("blocking"), work, 64, plant);
    let r = &o.runs[0];
    assert!(r.valid, "{}", r.verdict);
    let rate = r.rate.as_ref().expect("a fixed-rate account");
    assert_eq!((rate.planned, rate.sent, rate.unsent), (30_000, 30_000, 0), "{rate:?}");
    let (c, u) = (
        hdr::decode(o.hist.as_deref().unwrap()).unwrap(),
        hdr::decode(o.uncorrected.as_deref().unwrap()).unwrap(),
    );
    assert_eq!(c.len(), 30_000, "every message recorded once from its due time");
    assert!(c.max() >= stall * 9 / 10, "corrected max {} ns against the {stall} ns stall", c.max());
    let half = |h: &hdrhistogram::Histogram<u64>| h.count_between(stall / 2, hdr::HIGHEST_NS);
    assert!(half(&c) >= 800 && half(&u) * 10 < half(&c), "{} against {}", half(&u), half(&c));
    assert!(rate.late > 0 && !rate.slowest.is_empty() && !rate.depths.buckets.is_empty());
    let jvm = o.jvm.as_ref().expect("the JVM's facts");
    assert_eq!(jvm.hdrhistogram_version.as_deref(), Some("2.2.2"));
    assert_eq!(jvm.wait_strategy.as_deref(), Some("BlockingWaitStrategy"));
    // Ping-pong through the queue: every round trip recorded.
    let o = jvm_cell("jvm-lbq", None, Work::PingPong { trips: 2_000 }, 1024, Plant::default());
    assert!(o.runs[0].valid, "{}", o.runs[0].verdict);
    assert_eq!(hdr::decode(o.hist.as_deref().unwrap()).unwrap().len(), 2_000);
}

#[test]
fn a_jvm_rows_planted_delay_shifts_its_percentiles() {
    // As the Rust side's test: 20 msgs/s, each message sent 20 ms after it is due.
    let delay = 20 * MS;
    let plant = Plant { send_late_ns: delay, ..Plant::default() };
    let work = Work::FixedRate { rate: 20.0, producers: 1, duration_ms: 1_000 };
    let o = jvm_cell("jvm-lbq", None, work, 1024, plant);
    assert!(o.runs[0].valid, "{}", o.runs[0].verdict);
    let t = o.runs[0].tail;
    assert!(
        t.p50 >= delay && t.p50 < delay * 3 / 2,
        "p50 {} ns against the {delay} ns delay",
        t.p50
    );
    let u = o.runs[0].uncorrected.expect("from the send");
    assert!(u.p50 < delay / 2, "from the send the delay is not seen: {u:?}");
}

#[test]
fn the_plan_has_a_floor_and_every_row_in_each_workload() {
    let n = plan_of(&["--variants", "locked,ring", "--wait", "busy-spin,blocking"]).unwrap();
    // ping-pong: floor + 3 rows; fixed rate: harness + 3; sweep: 3; pipeline: locked + ring[blocking,
    // yielding].
    assert_eq!(n, 4 + 4 + 3 + 3);
    // `jvm` is the queue and the Disruptor, once per --jvm-wait; no JVM pipeline.
    let rows = plan::row_specs("locked,jvm", "busy-spin", "blocking,busy-spin");
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        ["locked", "jvm-lbq", "jvm-disruptor[blocking]", "jvm-disruptor[busy-spin]"]
    );
    let n = plan_of(&["--variants", "locked,jvm", "--jvm-wait", "blocking,busy-spin"]).unwrap();
    assert_eq!(n, 5 + 5 + 4 + 1);
    // `matching` takes the JVM's strategy of each --wait, once.
    let rows = plan::row_specs("jvm-disruptor", "blocking,java-blocking,yielding", "matching");
    let waits: Vec<_> = rows.iter().filter_map(|r| r.wait.as_deref()).collect();
    assert_eq!(waits, ["blocking", "yielding"]);
}

#[test]
fn the_row_files_are_written_and_read_back_with_the_same_percentiles() {
    let dir = std::env::temp_dir().join(format!("hl-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut forks = Vec::new();
    let mut all = hdr::hist();
    for f in 0..3u64 {
        let mut h = hdr::hist();
        for i in 0..10_000u64 {
            hdr::record(&mut h, 200 + (i * 31 + f * 7) % 5_000);
        }
        all.add(&h).unwrap();
        forks.push((f as usize, 0.5, h));
    }
    let m = super::hdr::Merged { all, forks, uncorrected: None };
    let mut out = crate::results::fixture::results("handoff-latency", vec![], vec![]);
    let files = super::analyse::write_files(&dir, "row", "ring[busy-spin]", &m, &mut out);
    assert_eq!(files, (Some("row.hgrm".into()), Some("row.hlog".into())));
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    let log = std::fs::read_to_string(dir.join("row.hlog")).unwrap();
    let back = hdr::read_v2_log(&log).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back[0].0.as_deref(), Some("ring[busy-spin]"));
    let mut sum = hdr::hist();
    for (_, h) in &back {
        sum.add(h).unwrap();
    }
    assert_eq!(Tail::of(&sum), Tail::of(&m.all));
    let rows = hdr::parse_hgrm(&std::fs::read_to_string(dir.join("row.hgrm")).unwrap());
    for q in [0.5, 0.9, 0.99, 0.999] {
        let v = hdr::hgrm_value_at(&rows, q).unwrap() * 1000.0;
        let want = m.all.value_at_quantile(q) as f64;
        assert!((v - want).abs() <= want * 0.002 + 1.0, "q {q}: {v} against {want}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_harness_late_by_itself_says_the_p99_reads_the_machine() {
    use crate::results::fixture;
    let rate =
        |late: u64| RateFacts { offered: 1e6, planned: 100_000, late, ..RateFacts::default() };
    let tail = |p90: u64, p99: u64| Tail { p90, p99, ..Tail::default() };
    let row = |label: &str, late: u64, t: Tail| {
        let d = super::detail::LatDetail {
            workload: "fixed-rate".into(),
            tail: Some(t),
            rate: Some(rate(late)),
            ..Default::default()
        };
        fixture::row(label, "1M msgs/s P=1", 1.0, None, serde_json::to_value(d).unwrap())
    };
    let rows = |harness_late: u64| {
        vec![
            row(plan::HARNESS, harness_late, tail(70, 1_600)),
            row("locked", 1_500, tail(21_000, 66_000)),
            row("ring[busy-spin]", 2_000, tail(260, 320_000)),
        ]
    };
    let r = fixture::results("handoff-latency", rows(970), vec![]);
    let why = super::why::section(&r, "locked");
    let m = why.iter().find(|w| w.rule == "machine-tail").expect("the rule fires at 0.97%");
    let t = &m.text;
    assert!(
        t.contains("0.970% of its messages") && t.contains("ring[busy-spin] p90 0.260 µs"),
        "{t}"
    );
    assert_eq!(m.figures[0].value, 970.0);
    // Below half a percent the harness is not the tail: no sentence.
    let r = fixture::results("handoff-latency", rows(400), vec![]);
    assert!(super::why::section(&r, "locked").iter().all(|w| w.rule != "machine-tail"));
}

/// The run recorded with the kernel's scheduler finds a blocking consumer asleep between
/// messages due 1 ms apart, and times each wake-up; needs the scheduler's tracepoints
/// (root, as CI runs): without them it fails saying so, never skips.
#[test]
fn a_blocking_consumer_at_a_low_rate_sleeps_and_each_wake_up_is_timed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let cell = Cell {
        work: Work::FixedRate { rate: 1_000.0, producers: 1, duration_ms: 200 },
        variant: Some("locked".into()),
        wait: None,
        ring_size: 1024,
        p99_bound_ns: 100 * US,
        warmup: 0,
        runs: 1,
        plant: Plant::default(),
        wakeups: true,
    };
    let w = super::run::wake_run(&cell);
    let d = w.wake_to_run.clone().unwrap_or_else(|| {
        panic!("no wake-up recorded (the scheduler's tracepoints need root): {w:?}")
    });
    // The recorded run is the schedule's first 20 ms: 20 messages due 1 ms apart.
    assert_eq!((w.runs, w.taken), (1, 20), "{w:?}");
    // The consumer slept and each sleep's wake-up was timed.
    assert!(d.count >= 1 && d.count <= w.off_cpu, "{w:?}");
    // Where wake-ups take well under the 1 ms between messages, nearly every message finds
    // the consumer asleep. A loaded machine wakes it late (milliseconds), and it then finds
    // several messages waiting and sleeps once for all of them: the longest wake-up covers
    // up to one message a millisecond (CI's loaded run: 13 sleeps, one wake-up of 3.9 ms).
    if d.p50_ns < 500 * US {
        let covered = d.max_ns.div_ceil(MS);
        assert!(d.count + covered >= 15, "{w:?}");
    }
    assert!(d.p50_ns > 0 && d.p50_ns <= d.p99_ns && d.p99_ns <= d.max_ns, "{w:?}");
    let merged = super::run::WakeRun::merge(&[&w, &w]).unwrap();
    let m = merged.wake_to_run.unwrap();
    assert_eq!((merged.runs, merged.taken), (2, 40));
    assert_eq!((m.count, m.p50_ns, m.max_ns), (2 * d.count, d.p50_ns, d.max_ns));
}

#[test]
fn the_kernel_wake_rule_says_who_slept_and_what_a_wake_up_took() {
    use super::run::WakeRun;
    use crate::profile::sched::WakeDelays;
    use crate::results::fixture;
    let row = |label: &str, wake: WakeRun| {
        let d = super::detail::LatDetail {
            workload: "fixed-rate".into(),
            tail: Some(Tail { p99: wake.p99_ns, ..Tail::default() }),
            rate: Some(RateFacts { offered: 1e6, planned: 100_000, ..RateFacts::default() }),
            wake: Some(wake),
            ..Default::default()
        };
        fixture::row(label, "1M msgs/s P=1", 1.0, None, serde_json::to_value(d).unwrap())
    };
    let slept = |count: u64, p50: u64| WakeRun {
        runs: 1,
        taken: 100_000,
        p99_ns: 60_000,
        off_cpu: count + 3,
        wake_to_run: Some(WakeDelays { count, p50_ns: p50, p99_ns: 3 * p50, max_ns: 9 * p50 }),
        note: None,
    };
    let spun = WakeRun { taken: 100_000, p99_ns: 300, ..WakeRun::default() };
    let r = fixture::results(
        "handoff-latency",
        vec![
            row("locked", slept(4_000, 5_000)),
            row("ring[busy-spin]", spun),
            row("ring[blocking]", slept(50, 4_000)),
        ],
        vec![],
    );
    let why = super::why::section(&r, "locked");
    let w = why.iter().find(|w| w.rule == "kernel-wake").expect("the rule speaks");
    let t = &w.text;
    assert!(t.contains("locked's consumer slept 4000 times for 100000 messages in 1 runs"), "{t}");
    assert!(t.contains("p50 5.00 µs") && t.contains("more than 1% of its messages"), "{t}");
    assert!(t.contains("ring[busy-spin]'s consumer never slept"), "{t}");
    assert!(t.contains("ring[blocking]") && t.contains("under 1% of its messages"), "{t}");
    assert_eq!(w.figures[0].value, 5_000.0);
    // Where the kernel refused, the rows say why.
    let refused =
        WakeRun { note: Some("off-CPU slices unavailable: EACCES".into()), ..WakeRun::default() };
    let r = fixture::results("handoff-latency", vec![row("locked", refused)], vec![]);
    let why = super::why::section(&r, "locked");
    let w = why.iter().find(|w| w.rule == "kernel-wake").expect("the rule says why not");
    assert!(
        w.text.contains("locked: not recorded (off-CPU slices unavailable: EACCES)"),
        "{}",
        w.text
    );
}

#[test]
fn the_jvm_runtime_rule_says_what_the_collector_and_the_compiler_took() {
    use super::jvm::JvmRuntime;
    use crate::results::fixture;
    let row = |label: &str, p99_ns: u64, rt: Option<JvmRuntime>| {
        let d = super::detail::LatDetail {
            workload: "fixed-rate".into(),
            tail: Some(Tail { p99: p99_ns, ..Tail::default() }),
            rate: Some(RateFacts { offered: 1e6, planned: 100_000, ..RateFacts::default() }),
            jvm_runtime: rt,
            ..Default::default()
        };
        fixture::row(label, "1M msgs/s P=1", 1.0, None, serde_json::to_value(d).unwrap())
    };
    let rt = |gc_ms: u64, jit_ms: Option<u64>| JvmRuntime {
        runs: 9,
        gc_count: gc_ms / 2,
        gc_ms,
        jit_ms,
        wall_ms: 1000.0,
    };
    let mut r = fixture::results(
        "handoff-latency",
        vec![
            row("locked", 60_000, None),
            row("jvm-lbq", 4_000_000, Some(rt(0, Some(40)))),
            row("jvm-disruptor[blocking]", 3_000_000, Some(rt(20, Some(2)))),
            row("jvm-disruptor[busy-spin]", 50_000, Some(rt(2, Some(3)))),
            row("jvm-old", 50_000, Some(rt(0, None))),
        ],
        vec![],
    );
    r.environment.cores = 2;
    let why = super::why::section(&r, "locked");
    let w = why.iter().find(|w| w.rule == "jvm-runtime").expect("the rule speaks");
    let t = &w.text;
    assert!(t.contains("2 CPUs and the run's 2 threads pinned, none is left"), "{t}");
    assert!(
        t.contains("jvm-lbq: in 9 measured runs (1000 ms) the JVM collected 0 times (0 ms, 0.0%)"),
        "{t}"
    );
    assert!(t.contains("compiled for 40 ms (4.0%): compiling held 1% of the time"), "{t}");
    assert!(t.contains("p99 (4000 µs) can carry them"), "{t}");
    assert!(t.contains("collected 10 times (20 ms, 2.0%)"), "{t}");
    assert!(t.contains("collections held 1% of the time or more"), "{t}");
    assert!(
        t.contains("neither reached 1% of the time, so its p99 (50.0 µs) is not theirs"),
        "{t}"
    );
    assert!(t.contains("jvm-old") && t.contains("the JVM does not count its compiling"), "{t}");
    assert!(!t.contains("locked:"), "a Rust row has no JVM: {t}");
    r.environment.cores = 16;
    let why = super::why::section(&r, "locked");
    let w = why.iter().find(|w| w.rule == "jvm-runtime").expect("the rule speaks");
    assert!(w.text.contains("16 CPUs and the run's 2 threads pinned, 14 CPU(s) are left"));
    // Summed over forks: counts and times add, the compiler's only where every fork counted.
    let s = JvmRuntime::sum([&rt(4, Some(1)), &rt(6, None)]).unwrap();
    assert_eq!((s.runs, s.gc_count, s.gc_ms, s.jit_ms, s.wall_ms), (18, 5, 10, None, 2000.0));
    assert!(JvmRuntime::sum([]).is_none());
}
