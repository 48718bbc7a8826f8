//! `jvm-referee`: JMH as the referee of the lab's JVM rows. For every JVM workload that has
//! a JMH form, the same code runs two ways in the same rounds: as the lab's JVM child (the
//! rx and reactor rows of subscribe-overhead, the netty rows of alloc-pooled-vs-unpooled,
//! each with its own warm-up and runs) and as a JMH benchmark (tools/jvm's `jmh` module,
//! whose bodies call those programs' own loops: RxBench's and ReactorBench's `runOnce`,
//! `NettyAlloc.cycles`), on the same JDK with the same JVM flags. The table sets JMH's score ± error (its iterations pooled over the rounds'
//! forks, as JMH pools forks) beside the lab's median, with the paired ratio, and flags a
//! row where the two differ by more than 10% either way: then the lab's child does not
//! measure what JMH measures, and its JVM figures are not to be trusted until it does.

mod bus;
mod jmh;

use super::alloc::{netty, AllocOutcome, Cell as AllocCell, Mode};
use crate::experiment::{
    size, Defaults, Experiment, Finished, Measured, Outcome, Plan, Shared, TraceMode,
};
use crate::measure::harness::CellSpec;
use crate::measure::rx::{self, Jdk, Lib, LibSettings};
use crate::protocol::Ctx;
use crate::results::{Results, Table};
use clap::{Args, ValueEnum};
use jmh::{JmhScore, JmhSpec};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Elements or subscriptions per rx run: seed 000's million, which the JMH benchmarks
/// declare as their operations per invocation (a constant there).
const RX_N: u64 = 1_000_000;

/// How far apart the lab's figure and JMH's may be before the row is flagged.
pub const AGREE_WITHIN: f64 = 0.10;

/// A workload with a JMH form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// RxJava's Flowable.range(1M) summed, ns per element.
    RxFlowableRange,
    /// RxJava's Single.just subscribed 1M times, ns per subscription.
    RxSingleJust,
    /// Seed 000's hand-written publisher (on org.reactivestreams) subscribed 1M times.
    RxHandWritten,
    /// Reactor's Flux.range(1M) summed, ns per element (seed 000's first row).
    ReactorFluxRange,
    /// Reactor's Mono.just subscribed 1M times, ns per subscription.
    ReactorMonoJust,
    /// Seed 000's SyncSinglePublisher on java.util.concurrent.Flow subscribed 1M times.
    ReactorHandWritten,
    /// Netty's PooledByteBufAllocator, heapBuffer then release, ops/ms.
    NettyPooledHeap,
    /// Netty's UnpooledByteBufAllocator, heapBuffer then release, ops/ms.
    NettyUnpooledHeap,
    /// Netty's PooledByteBufAllocator, directBuffer then release, ops/ms.
    NettyPooledDirect,
    /// Netty's UnpooledByteBufAllocator, directBuffer then release, ops/ms.
    NettyUnpooledDirect,
    /// Seed 001's bus on `LinkedBlockingQueue` in its plain loop (jvm-lbq's own loop), M
    /// msgs/s, per `--producers`; JMH's form is an asymmetric group (P `put`, one `take`).
    BusLbq,
    /// Seed 001's bus on the Disruptor 4 in its plain loop (jvm-disruptor's own loop), M
    /// msgs/s, per `--producers`; JMH's form is P `publish` threads.
    BusDisruptor,
}

impl Workload {
    const ALL: [Workload; 12] = [
        Workload::ReactorFluxRange,
        Workload::ReactorMonoJust,
        Workload::ReactorHandWritten,
        Workload::RxFlowableRange,
        Workload::RxSingleJust,
        Workload::RxHandWritten,
        Workload::NettyPooledHeap,
        Workload::NettyUnpooledHeap,
        Workload::NettyPooledDirect,
        Workload::NettyUnpooledDirect,
        Workload::BusLbq,
        Workload::BusDisruptor,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::RxFlowableRange => "rx-flowable-range",
            Workload::RxSingleJust => "rx-single-just",
            Workload::RxHandWritten => "rx-hand-written",
            Workload::ReactorFluxRange => "reactor-flux-range",
            Workload::ReactorMonoJust => "reactor-mono-just",
            Workload::ReactorHandWritten => "reactor-hand-written",
            Workload::NettyPooledHeap => "netty-pooled-heap",
            Workload::NettyUnpooledHeap => "netty-unpooled-heap",
            Workload::NettyPooledDirect => "netty-pooled-direct",
            Workload::NettyUnpooledDirect => "netty-unpooled-direct",
            Workload::BusLbq => "bus-lbq",
            Workload::BusDisruptor => "bus-disruptor",
        }
    }

    /// The disruptor-vs-lbq variant whose own loop the bus ones run.
    fn bus(self) -> Option<&'static str> {
        match self {
            Workload::BusLbq => Some("jvm-lbq"),
            Workload::BusDisruptor => Some("jvm-disruptor"),
            _ => None,
        }
    }

    /// The seed-000 library and its workload in RxBench's words (the lab's launcher
    /// translates them), for the rx and reactor ones.
    fn rx(self) -> Option<(Lib, &'static str)> {
        match self {
            Workload::RxFlowableRange => Some((Lib::Rx, "flowable-range")),
            Workload::RxSingleJust => Some((Lib::Rx, "single-just")),
            Workload::RxHandWritten => Some((Lib::Rx, "hand-written")),
            Workload::ReactorFluxRange => Some((Lib::Reactor, "flowable-range")),
            Workload::ReactorMonoJust => Some((Lib::Reactor, "single-just")),
            Workload::ReactorHandWritten => Some((Lib::Reactor, "hand-written")),
            _ => None,
        }
    }

    /// The alloc experiment's mode, for the Netty ones.
    fn netty(self) -> Option<Mode> {
        match self {
            Workload::NettyPooledHeap => Some(Mode::NettyPooledHeap),
            Workload::NettyUnpooledHeap => Some(Mode::NettyUnpooledHeap),
            Workload::NettyPooledDirect => Some(Mode::NettyPooledDirect),
            Workload::NettyUnpooledDirect => Some(Mode::NettyUnpooledDirect),
            _ => None,
        }
    }

    fn unit(self) -> &'static str {
        if self.rx().is_some() {
            "ns/op"
        } else if self.bus().is_some() {
            "ops/us"
        } else {
            "ops/ms"
        }
    }

    /// The closed form of an rx run's result.
    fn expected(self, n: u64) -> i64 {
        match self {
            Workload::RxFlowableRange | Workload::ReactorFluxRange => (n * (n + 1) / 2) as i64,
            _ => n as i64,
        }
    }

    /// The JMH benchmark and its parameters (the bus ones: [`bus::jmh_form`]).
    fn jmh(self, size: u64) -> Option<(String, Vec<(String, String)>)> {
        let seed = |m: &str, lib: &str| {
            let p = vec![("library".to_string(), lib.to_string())];
            (format!("lab.referee.Seed000Referee.{m}"), p)
        };
        let netty = |allocator: &str, memory: &str| {
            let p = [("allocator", allocator), ("memory", memory), ("size", &size.to_string())]
                .map(|(k, v)| (k.to_string(), v.to_string()));
            ("lab.referee.NettyAllocReferee.allocAndFree".to_string(), p.to_vec())
        };
        Some(match self {
            Workload::RxFlowableRange => seed("range", "rx"),
            Workload::RxSingleJust => seed("just", "rx"),
            Workload::RxHandWritten => seed("handWritten", "rx"),
            Workload::ReactorFluxRange => seed("range", "reactor"),
            Workload::ReactorMonoJust => seed("just", "reactor"),
            Workload::ReactorHandWritten => seed("handWritten", "reactor"),
            Workload::NettyPooledHeap => netty("pooled", "heap"),
            Workload::NettyUnpooledHeap => netty("unpooled", "heap"),
            Workload::NettyPooledDirect => netty("pooled", "direct"),
            Workload::NettyUnpooledDirect => netty("unpooled", "direct"),
            Workload::BusLbq | Workload::BusDisruptor => return None,
        })
    }
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct RefereeArgs {
    /// Workloads, a comma list [default: all]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub workloads: Option<Vec<Workload>>,
    /// The JDK of the seed-000 workloads, both sides (Netty's run on the default `java`).
    #[arg(long, default_value = "25", value_parser = super::choices::Choices::new(Jdk::parse, super::rx_rows::jdk_values))]
    pub jdk: Jdk,
    /// The Netty workloads' buffer size, bytes.
    #[arg(long, value_parser = size, default_value = "1024")]
    pub size: u64,
    /// The Netty workloads' allocate + free cycles per lab iteration, a count.
    #[arg(long, value_parser = size, default_value = "100000")]
    pub ops: u64,
    /// JMH forks per round, a count (each a fresh JVM; seed 004 ran 2 in all).
    #[arg(long, value_parser = size, default_value = "1")]
    pub jmh_forks: u64,
    /// JMH warm-up iterations per fork (seed 004: 10).
    #[arg(long, value_parser = size, default_value = "5")]
    pub jmh_warmup_iterations: u64,
    /// JMH measured iterations per fork (seed 004: 10).
    #[arg(long, value_parser = size, default_value = "5")]
    pub jmh_iterations: u64,
    /// Seconds per JMH iteration, warm-up and measured (seed 004: 1).
    #[arg(long, value_parser = size, default_value = "1")]
    pub jmh_iteration_s: u64,
    /// The bus workloads' producer threads, a comma list (one row pair each).
    #[arg(long, value_delimiter = ',', value_parser = size, default_value = "1,4")]
    pub producers: Vec<u64>,
    /// The bus workloads' messages per lab run, over all producers (JMH's iterations are
    /// timed instead).
    #[arg(long, value_parser = size, default_value = "4Mi")]
    pub messages: u64,
}

/// Which side of the referee a cell is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The lab's JVM child.
    Lab,
    /// JMH.
    Jmh,
}

/// What a child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// The workload.
    pub workload: Workload,
    /// Which side.
    pub side: Side,
    /// The seed-000 library's JVM (rx and reactor workloads, lab side).
    pub rx: Option<LibSettings>,
    /// The netty row's cell (Netty workloads, lab side).
    pub netty: Option<AllocCell>,
    /// The bus's own-loop cell (bus workloads, lab side).
    #[serde(default)]
    pub bus: Option<CellSpec>,
    /// What JMH runs (JMH side).
    pub jmh: Option<JmhSpec>,
    /// Warm-up runs (lab side).
    pub warmup: usize,
    /// Measured runs (lab side).
    pub runs: usize,
}

/// What a child returns: the measured runs in the workload's unit, and JMH's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefereeOutcome {
    /// Each measured run (lab) or iteration (JMH), in the workload's unit.
    pub values: Vec<f64>,
    /// Each one's check: `ok` or what failed.
    pub checks: Vec<String>,
    /// JMH's own result (JMH side).
    pub jmh: Option<JmhScore>,
}

impl Outcome for RefereeOutcome {
    fn measured(&self) -> Vec<Measured> {
        self.values
            .iter()
            .zip(&self.checks)
            .map(|(&value, c)| Measured { value, valid: c == "ok", verdict: c.clone() })
            .collect()
    }
}

/// A row's own fields in results.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RefereeDetail {
    /// The workload.
    pub workload: String,
    /// `lab` or `jmh`.
    pub side: String,
    /// The unit of both sides.
    pub unit: String,
    /// JMH's score and error over every iteration of every round's forks pooled (JMH side).
    pub jmh_pooled: Option<[f64; 2]>,
    /// Each round's JMH result (JMH side).
    pub jmh_forks: Vec<JmhScore>,
}

/// The experiment.
#[derive(Debug)]
pub struct JvmReferee;

fn label(w: Workload, producers: Option<u64>, side: Side) -> String {
    let name = match producers {
        Some(p) => format!("{} P={p}", w.name()),
        None => w.name().to_string(),
    };
    match side {
        Side::Lab => name,
        Side::Jmh => format!("{name}/jmh"),
    }
}

/// A `jvm-referee` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefereeKey {
    /// The workload.
    pub workload: String,
    /// `lab` (the lab's JVM child) or `jmh` (the JMH benchmark).
    pub side: String,
    /// Producer threads (the bus workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producers: Option<u64>,
}

impl Experiment for JvmReferee {
    const NAME: &'static str = "jvm-referee";
    const ABOUT: &'static str =
        "JMH as the referee of the JVM rows: the lab's JVM children (seed 000's workloads on \
         Reactor and RxJava, Netty's seed-004 allocators, seed 001's bus in its plain loops) and \
         JMH benchmarks of the same code, in the same rounds; flags a row whose figures differ by more than 10% either way";
    const DEFAULTS: Defaults =
        Defaults { rounds: 3, runs: 10, warmup: 5, trace: &[TraceMode::Off], heap: None };
    type Args = RefereeArgs;
    type Cell = Cell;
    type Outcome = RefereeOutcome;
    type Key = RefereeKey;
    type Detail = RefereeDetail;

    fn plan(a: &RefereeArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[
            (a.ops, "--ops"),
            (a.messages, "--messages"),
            (a.producers.iter().copied().min().unwrap_or(0), "--producers"),
            (a.jmh_forks, "--jmh-forks"),
            (a.jmh_iterations, "--jmh-iterations"),
            (a.jmh_iteration_s, "--jmh-iteration-s"),
        ])?;
        let workloads = a.workloads.clone().unwrap_or_else(|| Workload::ALL.to_vec());
        if let Some(why) = crate::measure::jvm::group_unavailable("jmh") {
            return Err(format!("the JMH referee cannot run here: {why}"));
        }
        let jmh_cp = crate::measure::jvm_build::class_path("jmh")?;
        // One settings per seed-000 library named: its JDK and its default flags (RxJava
        // the lab's JVM default, Reactor the seed's), which JMH's forks get too.
        let mut libs: Vec<LibSettings> = Vec::new();
        for (lib, _) in workloads.iter().filter_map(|w| w.rx()) {
            if !libs.iter().any(|s| s.lib == lib) {
                libs.push(LibSettings::prepare(lib, a.jdk, (None, ""), false, rx::HEAP)?);
            }
        }
        let settings = |lib: Lib| libs.iter().find(|s| s.lib == lib).cloned();
        let netty_cp = match workloads.iter().any(|w| w.netty().is_some()) {
            true => Some(crate::measure::jvm::build_group("netty")?),
            false => None,
        };
        let (warmup, runs) = (shared.warmup as usize, shared.runs as usize);
        let mut pairs = Pairs::default();
        for w in workloads {
            let lib = w.rx().and_then(|(lib, _)| settings(lib));
            let flags: Vec<String> = match &lib {
                Some(s) => s.flags.clone(),
                None => netty::FLAGS.join(" "),
            }
            .split_whitespace()
            .map(str::to_string)
            .collect();
            if let Some(variant) = w.bus() {
                for &p in &a.producers {
                    let bus = bus::lab_cell(variant, p as usize, a.messages, (warmup, runs))?;
                    let flags = bus.jvm.as_ref().map_or("", |j| &j.flags).to_string();
                    let f = bus::jmh_form(variant, p as usize)?;
                    let spec = JmhSpec {
                        thread_groups: Some(f.thread_groups),
                        metric: f.metric,
                        ..jmh_spec(a, (f.benchmark, f.params), &flags, &jmh_cp, "java")
                    };
                    let lab = Cell { bus: Some(bus), ..Cell::lab(w, (warmup, runs)) };
                    pairs.push(lab, spec, Some(p));
                }
                continue;
            }
            let netty_cell = w.netty().zip(netty_cp.as_ref()).map(|(mode, cp)| AllocCell {
                mode,
                size: a.size as usize,
                ops: a.ops,
                warmup,
                runs,
                jvm: Some(netty::JvmCell {
                    classpath: cp.clone(),
                    flags: flags.clone(),
                    jit_warmup_ms: 1000,
                }),
            });
            let form = w.jmh(a.size).ok_or("a workload without a JMH form")?;
            let java = lib.as_ref().map_or("java".to_string(), |s| s.java.clone());
            let spec = jmh_spec(a, form, &flags.join(" "), &jmh_cp, &java);
            let lab = Cell { rx: lib, netty: netty_cell, ..Cell::lab(w, (warmup, runs)) };
            pairs.push(lab, spec, None);
        }
        let Pairs { cells, pairs } = pairs;
        Ok(Plan {
            cells,
            baseline: None,
            pairs,
            config: json!({"size": a.size, "ops": a.ops, "rx_n": RX_N,
                "jmh": {"forks": a.jmh_forks, "warmup_iterations": a.jmh_warmup_iterations,
                        "iterations": a.jmh_iterations, "iteration_s": a.jmh_iteration_s},
                "agree_within": AGREE_WITHIN}),
            input_size: RX_N,
            notes: Vec::new(),
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<RefereeOutcome, String> {
        if let Some(spec) = &cell.jmh {
            let score = jmh::run(spec, ctx)?;
            let values: Vec<f64> = score.iterations.iter().flatten().copied().collect();
            if score.unit != cell.workload.unit() {
                return Err(format!(
                    "JMH reported {} where the lab's row is in {}",
                    score.unit,
                    cell.workload.unit()
                ));
            }
            let checks = values.iter().map(|v| check_finite(*v)).collect();
            return Ok(RefereeOutcome { values, checks, jmh: Some(score) });
        }
        if let Some(spec) = &cell.bus {
            // `Bus --plain` fails its fork when a run's check fails, so every run it
            // returns passed the check of every message (count, order, checksum).
            let runs = crate::measure::jvm::run_plain(spec, ctx)?;
            let values: Vec<f64> = runs.iter().map(|r| r.msgs_per_sec / 1e6).collect();
            let checks = values.iter().map(|v| check_finite(*v)).collect();
            return Ok(RefereeOutcome { values, checks, jmh: None });
        }
        if let (Some(rx), Some((_, name))) = (&cell.rx, cell.workload.rx()) {
            let (o, _) =
                crate::measure::rx::run(rx, name, RX_N, (cell.warmup, cell.runs), &[], ctx)?;
            let expected = cell.workload.expected(RX_N);
            let values = o.runs.iter().map(|r| r.ns as f64 / RX_N as f64).collect();
            let checks = o
                .runs
                .iter()
                .map(|r| match r.result == expected {
                    true => "ok".to_string(),
                    false => format!("result {}, expected {expected}", r.result),
                })
                .collect();
            return Ok(RefereeOutcome { values, checks, jmh: None });
        }
        let netty = cell.netty.as_ref().ok_or("a lab cell without its JVM settings")?;
        let o: AllocOutcome = netty::run(netty, ctx)?;
        let m = o.measured();
        Ok(RefereeOutcome {
            values: m.iter().map(|x| x.value).collect(),
            checks: m
                .iter()
                .map(|x| if x.valid { "ok".into() } else { x.verdict.clone() })
                .collect(),
            jmh: None,
        })
    }

    fn analyse(_a: &RefereeArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            let c = &rec.plan.cell;
            let forks: Vec<JmhScore> =
                rec.outcomes().filter_map(|o: &RefereeOutcome| o.jmh.clone()).collect();
            let pooled: Vec<f64> = forks.iter().flat_map(|s| s.iterations.concat()).collect();
            row.set_detail(&RefereeDetail {
                workload: c.workload.name().to_string(),
                side: if c.side == Side::Lab { "lab" } else { "jmh" }.to_string(),
                unit: c.workload.unit().to_string(),
                jmh_pooled: jmh::pooled(&pooled).map(|(m, e)| [m, e.unwrap_or(f64::NAN)]),
                jmh_forks: forks,
            });
        }
        let (table, verdict) = referee_table(out);
        out.tables.push(table.headline());
        out.verdict = verdict;
        out.tables.extend(crate::analysis::failure_table(out, &["workload", "side"], |x| {
            vec![x.key_as::<RefereeKey>().workload, x.key_as::<RefereeKey>().side]
        }));
        out.method.push(format!(
            "Each workload runs two ways in every round: the lab's JVM child (as in \
             subscribe-overhead and alloc-pooled-vs-unpooled: its own warm-up and runs, each \
             run checked) and a JMH benchmark whose body calls that child's own loop \
             (tools/jvm/jmh), with the same JVM flags. JMH's score ± error pools the \
             iterations of every round's forks (JMH's 99.9% interval); the ratio is paired \
             within rounds; a row is flagged where lab and JMH differ by more than {:.0}%.",
            AGREE_WITHIN * 100.0
        ));
        if out.results.iter().any(|r| r.key_as::<RefereeKey>().producers.is_some()) {
            out.method.push(
                "The bus rows (bus-lbq, bus-disruptor, per P) set disruptor-vs-lbq's own loop \
                 of jvm-lbq and jvm-disruptor (`Bus --plain`: N messages a run, timed from \
                 the start gate to the last one taken) beside JMH's asymmetric group of the \
                 same per-message work in JMH's own threads (P producers sending the lab's \
                 message with its sequence and stamp; one consumer, or the Disruptor's own, \
                 checking each), 1-second iterations, the same flags and CPUs; the figure is \
                 messages taken per µs (JMH's `take` for the queue, `publish` for the ring)."
                    .to_string(),
            );
        }
    }
}

impl Cell {
    /// Workload `w`'s lab-side cell with no program yet.
    fn lab(w: Workload, (warmup, runs): (usize, usize)) -> Cell {
        Cell {
            workload: w,
            side: Side::Lab,
            rx: None,
            netty: None,
            bus: None,
            jmh: None,
            warmup,
            runs,
        }
    }
}

/// What JMH runs for `form` (benchmark, parameters) with the row's `flags` and `java`.
fn jmh_spec(
    a: &RefereeArgs,
    (benchmark, params): (String, Vec<(String, String)>),
    flags: &str,
    class_path: &str,
    java: &str,
) -> JmhSpec {
    JmhSpec {
        benchmark,
        params,
        forks: a.jmh_forks,
        warmup_iterations: a.jmh_warmup_iterations,
        iterations: a.jmh_iterations,
        iteration_s: a.jmh_iteration_s,
        jvm_flags: flags.split_whitespace().map(str::to_string).collect(),
        class_path: class_path.to_string(),
        java: java.to_string(),
        thread_groups: None,
        metric: None,
    }
}

/// The plan's cells, a lab row and its JMH row at a time, and their pairs.
#[derive(Default)]
struct Pairs {
    cells: Vec<crate::experiment::CellPlan<Cell>>,
    pairs: Vec<(String, String)>,
}

impl Pairs {
    /// Adds `lab`'s row and the JMH row of `spec` beside it (`producers`: a bus workload's).
    fn push(&mut self, lab: Cell, spec: JmhSpec, producers: Option<u64>) {
        let w = lab.workload;
        let jmh = Cell {
            side: Side::Jmh,
            rx: None,
            netty: None,
            bus: None,
            jmh: Some(spec),
            ..lab.clone()
        };
        for (cell, side) in [(lab, Side::Lab), (jmh, Side::Jmh)] {
            let key = RefereeKey {
                workload: w.name().into(),
                side: if side == Side::Lab { "lab" } else { "jmh" }.into(),
                producers,
            };
            let mut p = crate::experiment::CellPlan::new(cell, label(w, producers, side), w.name())
                .keyed(&key);
            p.unit = w.unit();
            p.higher_is_better = w.unit() != "ns/op";
            p.heap = false;
            p.trace = false;
            // A JVM and JMH's own threads: more than a core's worth at times; the bus's
            // producers and consumer besides.
            p.threads = 2.max(producers.unwrap_or(0) as usize + 1);
            self.cells.push(p);
        }
        self.pairs.push((label(w, producers, Side::Lab), label(w, producers, Side::Jmh)));
    }
}

/// `ok`, or why a figure (a JMH iteration's, a plain run's) cannot be a measurement.
fn check_finite(v: f64) -> String {
    if v.is_finite() && v > 0.0 {
        "ok".into()
    } else {
        format!("a figure of {v}")
    }
}

/// The referee table and the verdict lines: per workload, the lab's median and interval,
/// JMH's pooled score ± error, the paired lab ÷ JMH ratio of the figures with its interval,
/// and whether they agree within [`AGREE_WITHIN`].
fn referee_table(out: &Results) -> (Table, Vec<String>) {
    let mut t = Table::new(
        "JMH as referee: the lab's JVM child against JMH on the same code",
        &[
            "workload",
            "unit",
            "lab (median [interval])",
            "JMH score ± error",
            "lab ÷ JMH",
            "verdict",
        ],
    );
    let mut verdict = Vec::new();
    for lab in out.results.iter().filter(|r| r.key_as::<RefereeKey>().side == "lab") {
        let Some(d) = lab.detail_if_any::<RefereeDetail>() else { continue };
        let jmh_label = format!("{}/jmh", lab.label);
        let jmh = out.results.iter().find(|r| r.label == jmh_label);
        let pooled =
            jmh.and_then(|r| r.detail_if_any::<RefereeDetail>()).and_then(|d| d.jmh_pooled);
        let ratio = out.ratios.iter().find(|x| x.variant == lab.label && x.baseline == jmh_label);
        // The pairing's factor is "row better than baseline"; the figure's own ratio is it
        // for ops/ms and its inverse for ns/op.
        let fig = |f: f64| if lab.higher_is_better { f } else { 1.0 / f };
        let (text, agree) = match ratio.and_then(|r| r.median) {
            Some(m) => {
                let (lo, hi) = match (ratio.and_then(|r| r.ci_low), ratio.and_then(|r| r.ci_high)) {
                    (Some(l), Some(h)) => {
                        let (a, b) = (fig(l), fig(h));
                        (a.min(b), a.max(b))
                    }
                    _ => (f64::NAN, f64::NAN),
                };
                let r = fig(m);
                let within = (r - 1.0).abs() <= AGREE_WITHIN;
                let iv =
                    if lo.is_finite() { format!(" [{lo:.2}, {hi:.2}]") } else { " [–]".into() };
                (format!("{r:.2}×{iv}"), Some((within, r)))
            }
            None => ("–".to_string(), None),
        };
        let lab_fig = match (lab.score, lab.score_ci) {
            (Some(s), Some([l, h])) => format!("{} [{}, {}]", num(s), num(l), num(h)),
            (Some(s), None) => format!("{} [–]", num(s)),
            _ => "–".into(),
        };
        let jmh_fig = match pooled {
            Some([m, e]) if e.is_finite() => format!("{} ± {}", num(m), num(e)),
            Some([m, _]) => format!("{} ± –", num(m)),
            None => "–".into(),
        };
        let v = match agree {
            Some((true, _)) => "agree".to_string(),
            Some((false, r)) => format!("FLAG: lab {:+.0}% from JMH", (r - 1.0) * 100.0),
            None => "no pair".into(),
        };
        let name = lab.label.clone();
        verdict.push(format!("{name}: lab {lab_fig} {} against JMH {jmh_fig}: {v}", d.unit));
        t.rows.push(vec![name, d.unit, lab_fig, jmh_fig, text, v]);
    }
    t.note = Some(format!(
        "lab ÷ JMH: the ratio of the two figures (time or rate) paired within rounds, median \
         and repeat interval; flagged beyond ±{:.0}%",
        AGREE_WITHIN * 100.0
    ));
    (t, verdict)
}

/// A figure as the lab's tables print one; a dash for none.
fn num(x: f64) -> String {
    if x.is_finite() {
        crate::units::fmt_num(x)
    } else {
        "–".into()
    }
}
