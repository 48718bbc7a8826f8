//! `alloc-pooled-vs-unpooled`: seed 004's `ByteBufAllocatorBenchmark` table, in ops/ms.
//!
//! For each size (default `buffer_pool::SEED_SIZES`) and each mode (pooled: a warm
//! `buffer_pool::Pool`; unpooled: a zeroed `Vec` from the global allocator), each fork runs
//! warm-up iterations, then measured iterations of N allocate + touch + free cycles
//! (`buffer_pool::run_cycles`), each timed with a nanosecond clock. The report prints JMH's
//! columns — score (mean ops/ms over every measured iteration) ± the 99.9% confidence
//! half-width, min, max, stdev — beside the median over forks with its interval and the
//! pooled/unpooled ratio paired within rounds. Each iteration's checksum is checked
//! against the value it must have; a wrong one makes the row INVALID. The optional heap
//! pass counts what each mode allocates per op under dhat.
//!
//! Beside them, seed 004's own subject: Netty 4.2's pooled and unpooled allocators, heap
//! and direct ([`netty`], `tools/jvm/netty/src/main/java/NettyAlloc.java`), in the same rounds, with the
//! Rust rows' ratios to them paired within rounds (pooled against `netty-pooled-heap`,
//! unpooled against `netty-unpooled-heap`).

pub(super) mod netty;

use crate::experiment::{
    size, CellPlan, Defaults, Experiment, Measured, Outcome, Plan, Shared, Switch, TraceMode,
};
use crate::experiment::{CellRecord, Finished};
use crate::protocol::Ctx;
use crate::results::{Chart, FileLink, Ratio, Results, Row, Status, Table};
use crate::stats::Summary;
use buffer_pool::{Pool, SEED_SIZES};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Instant;

/// The experiment.
#[derive(Debug)]
pub struct AllocPooledVsUnpooled;

/// Allocation mode: a row of each size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// A warm buffer_pool::Pool: buffers reused without zeroing (as Netty's).
    Pooled,
    /// vec![0; n] from the global allocator (as Java's new byte[n]).
    Unpooled,
    /// Netty's PooledByteBufAllocator, heapBuffer(n).
    NettyPooledHeap,
    /// Netty's UnpooledByteBufAllocator, heapBuffer(n).
    NettyUnpooledHeap,
    /// Netty's PooledByteBufAllocator, directBuffer(n).
    NettyPooledDirect,
    /// Netty's UnpooledByteBufAllocator, directBuffer(n).
    NettyUnpooledDirect,
    /// NettyPooledHeap with a planted leak (one release skipped per iteration): INVALID;
    /// offered with `LAB_FAULTS=1` only.
    FaultNettyPooledHeap,
}

impl Mode {
    /// Every mode, in the tables' order.
    pub const ALL: [Mode; 7] = [
        Mode::Pooled,
        Mode::Unpooled,
        Mode::NettyPooledHeap,
        Mode::NettyUnpooledHeap,
        Mode::NettyPooledDirect,
        Mode::NettyUnpooledDirect,
        Mode::FaultNettyPooledHeap,
    ];

    /// Its name on the command line and its rows' label.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pooled => "pooled",
            Mode::Unpooled => "unpooled",
            Mode::NettyPooledHeap => "netty-pooled-heap",
            Mode::NettyUnpooledHeap => "netty-unpooled-heap",
            Mode::NettyPooledDirect => "netty-pooled-direct",
            Mode::NettyUnpooledDirect => "netty-unpooled-direct",
            Mode::FaultNettyPooledHeap => "fault-netty-pooled-heap",
        }
    }

    /// A Netty row's (allocator, memory) as NettyAlloc takes them; `None` for the Rust rows.
    pub fn netty(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mode::Pooled | Mode::Unpooled => None,
            Mode::NettyPooledHeap | Mode::FaultNettyPooledHeap => Some(("pooled", "heap")),
            Mode::NettyUnpooledHeap => Some(("unpooled", "heap")),
            Mode::NettyPooledDirect => Some(("pooled", "direct")),
            Mode::NettyUnpooledDirect => Some(("unpooled", "direct")),
        }
    }

    /// What it runs, for `--help`.
    fn help(self) -> &'static str {
        match self {
            Mode::Pooled => "the Rust buffer pool (buffer_pool::Pool), warm",
            Mode::Unpooled => "vec![0; n] from the global allocator",
            Mode::NettyPooledHeap => {
                "Netty 4.2's PooledByteBufAllocator, heapBuffer (JVM; a JDK and Maven)"
            }
            Mode::NettyUnpooledHeap => {
                "Netty 4.2's UnpooledByteBufAllocator, heapBuffer (JVM; a JDK and Maven)"
            }
            Mode::NettyPooledDirect => {
                "Netty 4.2's PooledByteBufAllocator, directBuffer (JVM; a JDK and Maven)"
            }
            Mode::NettyUnpooledDirect => {
                "Netty 4.2's UnpooledByteBufAllocator, directBuffer (JVM; a JDK and Maven)"
            }
            Mode::FaultNettyPooledHeap => {
                "planted fault, test only (LAB_FAULTS=1): netty-pooled-heap skipping one release \
                 an iteration"
            }
        }
    }

    /// Whether it is a planted fault.
    pub fn is_fault(self) -> bool {
        self == Mode::FaultNettyPooledHeap
    }

    /// The row its pooled/unpooled ratio is taken against (`None`: it is that row).
    fn unpooled_twin(self) -> Option<Mode> {
        match self {
            Mode::Pooled => Some(Mode::Unpooled),
            Mode::NettyPooledHeap | Mode::FaultNettyPooledHeap => Some(Mode::NettyUnpooledHeap),
            Mode::NettyPooledDirect => Some(Mode::NettyUnpooledDirect),
            _ => None,
        }
    }
}

/// `--modes`'s parser: a comma list of mode names (planted faults with `LAB_FAULTS=1`) or
/// `all`, checked here so a wrong name is a bad command line; kept as given.
fn modes_arg(s: &str) -> Result<String, String> {
    let faults = crate::measure::faults::enabled();
    let names: Vec<&str> = s.split(',').map(str::trim).filter(|x| !x.is_empty()).collect();
    for n in &names {
        let known =
            *n == "all" || Mode::ALL.iter().any(|m| m.name() == *n && (faults || !m.is_fault()));
        if !known {
            let valid: Vec<&str> =
                Mode::ALL.iter().filter(|m| !m.is_fault()).map(|m| m.name()).collect();
            return Err(format!("--modes: unknown mode '{n}'; valid: {}, all", valid.join(", ")));
        }
    }
    if names.is_empty() {
        return Err("--modes: no mode given".into());
    }
    Ok(s.to_string())
}

/// The names `--modes` lists: each mode (its planted fault with `LAB_FAULTS=1`), and `all`.
fn mode_values() -> Vec<clap::builder::PossibleValue> {
    let faults = crate::measure::faults::enabled();
    let mut v: Vec<clap::builder::PossibleValue> = Mode::ALL
        .iter()
        .filter(|m| faults || !m.is_fault())
        .map(|m| clap::builder::PossibleValue::new(m.name()).help(m.help()))
        .collect();
    v.push(clap::builder::PossibleValue::new("all").help("every mode (the default)"));
    v
}

/// The ratios the experiment takes, (row, baseline), per size: each allocator's pooled
/// against its unpooled, then the Rust rows against Netty's heap rows.
const PAIRS: [(Mode, Mode); 5] = [
    (Mode::Pooled, Mode::Unpooled),
    (Mode::NettyPooledHeap, Mode::NettyUnpooledHeap),
    (Mode::NettyPooledDirect, Mode::NettyUnpooledDirect),
    (Mode::Pooled, Mode::NettyPooledHeap),
    (Mode::Unpooled, Mode::NettyUnpooledHeap),
];

/// The checksum of cycles `first..first + n` that each write their first byte as
/// (k + 1) mod 256 and read it back: what a warm pool's circulating buffer (incremented
/// each cycle) and NettyAlloc's written byte both give.
fn first_bytes(first: u64, n: u64) -> u64 {
    (first..first + n).map(|k| (k + 1) % 256).sum()
}

/// Buffer sizes in bytes, `0,256,1Ki`.
#[derive(Debug, Clone, Serialize)]
pub struct Sizes(pub Vec<usize>);

fn sizes(s: &str) -> Result<Sizes, String> {
    let mut v = Vec::new();
    for x in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let n = size(x)? as usize;
        if !v.contains(&n) {
            v.push(n);
        }
    }
    if v.is_empty() {
        return Err("no size given".into());
    }
    Ok(Sizes(v))
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct AllocArgs {
    /// Allocate + free cycles per iteration, a count: a number or a size like 100K.
    #[arg(long, value_parser = size, default_value = "100000")]
    pub ops: u64,
    /// Buffer sizes in bytes, a comma list (the default is the seed's).
    #[arg(long, value_parser = sizes, default_value = "0,256,1024,4096,16384,65536")]
    pub sizes: Sizes,
    /// Rows, a comma list of the names below, or all [default: all; the Netty rows only
    /// where their jars are installed, said on stderr]
    #[arg(long, value_parser = crate::experiments::choices::Choices::new(modes_arg, mode_values))]
    pub modes: Option<String>,
    /// The Netty rows' JIT warm-up, in milliseconds: before its warm-up iterations each JVM
    /// fork cycles until this much time has passed (JMH's warm-up iterations last 1 s each).
    #[arg(long, value_parser = size, default_value = "1000")]
    pub jvm_jit_warmup_ms: u64,
}

/// What a child runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Pooled or unpooled.
    pub mode: Mode,
    /// Buffer length, bytes.
    pub size: usize,
    /// Cycles per iteration.
    pub ops: u64,
    /// Warm-up iterations.
    pub warmup: usize,
    /// Measured iterations.
    pub runs: usize,
    /// A Netty row's JVM (`None` for the Rust rows).
    #[serde(default)]
    pub jvm: Option<netty::JvmCell>,
}

/// One iteration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Iteration {
    /// Cycles per ms.
    pub ops_per_ms: f64,
    /// The checksum run_cycles returned.
    pub checksum: u64,
    /// The checksum it must have.
    pub expected: u64,
    /// Buffers whose release freed them (the Netty rows count them; `None`: not counted).
    #[serde(default)]
    pub released: Option<u64>,
    /// Cycles of the iteration.
    #[serde(default)]
    pub ops: u64,
}

impl Iteration {
    fn check(&self) -> Measured {
        let mut wrong = Vec::new();
        if let Some(r) = self.released.filter(|&r| r != self.ops) {
            wrong.push(format!("released {r} of {} buffers", self.ops));
        }
        if self.checksum != self.expected {
            wrong.push(format!("checksum {}, expected {}", self.checksum, self.expected));
        }
        Measured {
            value: self.ops_per_ms,
            valid: wrong.is_empty(),
            verdict: if wrong.is_empty() { "ok".into() } else { wrong.join(", ") },
        }
    }
}

/// What a child returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AllocOutcome {
    /// Warm-up iterations (checked, not measured).
    pub warmup: Vec<Iteration>,
    /// Measured iterations.
    pub runs: Vec<Iteration>,
    /// Buffers the pool held at the end.
    pub pool_cached_after: usize,
    /// A Netty row's JVM side.
    #[serde(default)]
    pub jvm: Option<netty::NettyReport>,
}

impl Outcome for AllocOutcome {
    fn measured(&self) -> Vec<Measured> {
        self.runs.iter().map(Iteration::check).collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup.iter().map(Iteration::check).collect()
    }
}

/// An `alloc-pooled-vs-unpooled` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocKey {
    /// The allocation mode.
    pub mode: String,
    /// The buffer size, bytes.
    pub size: u64,
}

impl Experiment for AllocPooledVsUnpooled {
    const NAME: &'static str = "alloc-pooled-vs-unpooled";
    const ABOUT: &'static str = "seed 004 (Netty's JMH microbenchmarks), ByteBufAllocatorBenchmark: allocate + touch + free \
        per buffer size, pooled against unpooled, in ops/ms with JMH's columns and the \
        pooled/unpooled ratio paired within rounds; every iteration's checksum checked";
    const DEFAULTS: Defaults = Defaults {
        rounds: 6,
        runs: 5,
        warmup: 3,
        trace: &[TraceMode::Off],
        heap: Some(Switch::Off),
    };
    type Args = AllocArgs;
    type Cell = Cell;
    type Outcome = AllocOutcome;
    type Key = AllocKey;
    type Detail = AllocDetail;

    fn plan(a: &AllocArgs, shared: &Shared) -> Result<Plan<Cell>, String> {
        crate::units::at_least_one(&[(a.ops, "--ops")])?;
        let missing = crate::measure::jvm::group_unavailable(netty::GROUP);
        let faults = crate::measure::faults::enabled();
        let (modes, left_out) =
            netty::chosen_modes(a.modes.as_deref(), missing.as_deref(), faults)?;
        let mut notes = Vec::new();
        if let Some(n) = left_out {
            eprintln!("{}: {n}", Self::NAME);
            notes.push(format!("{n}."));
        }
        let jvm = match modes.iter().any(|m| m.netty().is_some()) {
            true => {
                let classpath = crate::measure::jvm::build_group(netty::GROUP)?;
                let flags = netty::FLAGS.map(String::from).to_vec();
                Some(netty::JvmCell { classpath, flags, jit_warmup_ms: a.jvm_jit_warmup_ms })
            }
            false => None,
        };
        let mut cells = Vec::new();
        for &size in &a.sizes.0 {
            for &mode in &modes {
                let netty = mode.netty().is_some();
                let cell = Cell {
                    mode,
                    size,
                    ops: a.ops,
                    warmup: shared.warmup as usize,
                    runs: shared.runs as usize,
                    jvm: jvm.clone().filter(|_| netty),
                };
                let key = AllocKey { mode: mode.name().into(), size: size as u64 };
                let mut c = CellPlan::new(cell, mode.name(), format!("size={size}")).keyed(&key);
                c.file_stem = format!("{}-{size}", mode.name());
                c.unit = "ops/ms";
                c.higher_is_better = true;
                c.trace = false;
                // dhat sees the Rust heap only.
                c.heap = !netty;
                cells.push(c);
            }
        }
        if shared.heap == Switch::On && jvm.is_some() {
            notes.push(
                "The heap pass (dhat) profiles the Rust rows only; the Netty rows' heap \
                        bytes per op are in their JVM table."
                    .into(),
            );
        }
        let pairs = PAIRS
            .iter()
            .filter(|(r, b)| modes.contains(r) && modes.contains(b))
            .map(|(r, b)| (r.name().to_string(), b.name().to_string()))
            .collect();
        Ok(Plan {
            pairs,
            cells,
            baseline: None,
            config: json!({"ops_per_iteration": a.ops, "sizes": a.sizes, "seed_sizes": SEED_SIZES,
                "pool_limit_per_class": 64, "modes": modes,
                "jvm": jvm.as_ref().map(|j| json!({"flags": j.flags, "jit_warmup_ms": j.jit_warmup_ms}))}),
            input_size: a.ops,
            notes,
        })
    }

    fn run_cell(cell: &Cell, ctx: &mut Ctx) -> Result<AllocOutcome, String> {
        if cell.mode.netty().is_some() {
            return netty::run(cell, ctx);
        }
        let (len, n) = (cell.size, cell.ops);
        let pool = Pool::default();
        let pooled = cell.mode == Mode::Pooled;
        let mut out =
            AllocOutcome { warmup: Vec::new(), runs: Vec::new(), pool_cached_after: 0, jvm: None };
        // Pooled, len > 0: one buffer circulates and its first byte counts the cycles (mod
        // 256), so the expected checksum depends on the cycles done before this iteration.
        let mut cycles_done = 0u64;
        for i in 0..cell.warmup + cell.runs {
            let t = Instant::now();
            let checksum = buffer_pool::run_cycles(pooled.then_some(&pool), len, n);
            let ns = t.elapsed().as_nanos() as f64;
            let expected = match (len, pooled) {
                (0, _) => 0,
                (_, false) => n,
                (_, true) => first_bytes(cycles_done, n),
            };
            cycles_done += n;
            let ops_per_ms = n as f64 / (ns.max(1.0) / 1e6);
            let it = Iteration { ops_per_ms, checksum, expected, released: None, ops: n };
            if i < cell.warmup {
                out.warmup.push(it);
            } else {
                out.runs.push(it);
            }
            ctx.heartbeat();
        }
        out.pool_cached_after = pool.cached();
        Ok(out)
    }

    fn analyse(a: &AllocArgs, run: &Finished<Self>, out: &mut Results) {
        for (row, rec) in out.results.iter_mut().zip(&run.cells) {
            fill_row(row, rec);
        }
        out.tables.push(jmh_table(a, out).headline());
        out.tables.extend(rust_vs_netty_table(out).map(Table::headline));
        out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
        out.charts = charts(out);
        out.tables.extend(netty::jvm_table(out));
        out.tables.extend(heap_table(out));
        out.tables.extend(crate::analysis::failure_table(out, &["mode", "size"], |x| {
            vec![x.label.clone(), x.key_as::<AllocKey>().size.to_string()]
        }));
        for x in &out.results {
            if let Some(f) = detail(x).heap_file {
                out.files.push(FileLink {
                    file: f,
                    what: format!("dhat heap profile (dh_view): {} {}", x.label, x.group),
                });
            }
        }
        for rec in &run.cells {
            if let Some(Err(e)) = rec.heap.as_ref().map(|h| &h.result) {
                out.notes.push(format!("heap {} {}: {e}", rec.plan.label, rec.plan.group));
            }
        }
        out.method.extend(method_lines(a, &run.cells));
    }
}

/// An `alloc-pooled-vs-unpooled` row's own fields in results.json (beside the row's
/// envelope); results written before a field existed lack it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AllocDetail {
    /// `pooled` or `unpooled`.
    pub mode: String,
    /// Buffer size, bytes.
    pub size: usize,
    /// Allocate + touch + free cycles per iteration.
    pub ops_per_iteration: u64,
    /// Every measured iteration of every valid fork, ops/ms.
    pub ops_per_ms: Vec<f64>,
    /// JMH's columns over those iterations.
    pub summary: Option<Summary>,
    /// Buffers the pool held after the last iteration (the most over forks).
    pub pool_cached_after: Option<usize>,
    /// The heap pass's dhat file, relative to the run folder.
    pub heap_file: Option<String>,
    /// The heap pass's figures.
    pub heap: Option<AllocHeap>,
    /// A Netty row's JVM side (its valid forks).
    pub jvm: Option<netty::NettyRow>,
}

/// The heap pass of a row (dhat; warm-up and measured iterations profiled).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AllocHeap {
    /// The dhat file, relative to the run folder.
    pub file: String,
    /// Allocations.
    pub total_blocks: u64,
    /// Bytes allocated.
    pub total_bytes: u64,
    /// Peak live bytes.
    pub max_bytes: u64,
    /// Allocations per op.
    pub blocks_per_op: f64,
    /// Bytes allocated per op.
    pub bytes_per_op: f64,
    /// Ops profiled.
    pub ops: f64,
    /// Whether every profiled iteration passed its check.
    pub valid: bool,
}

/// The verdict's ratios (pooled over unpooled ops/ms, paired within rounds) per size with
/// their repeat intervals; then each row's ops/ms with the interval of its median over forks.
fn charts(r: &Results) -> Vec<Chart> {
    let mut out: Vec<Chart> = crate::analysis::charts::ratio_chart(
        r,
        "ops/ms ratio by buffer size (median over rounds; bars: repeat interval)",
        "buffer size (bytes)",
        "× (> 1: the row is faster than the baseline)",
    )
    .into_iter()
    .collect();
    let titles = (
        "ops/ms by buffer size (log scale; bars: interval of the median over forks)",
        "buffer size (bytes)",
        "ops/ms (allocate + touch + free)",
    );
    out.extend(
        crate::analysis::charts::score_chart(r, titles, |x| {
            Some((x.label.clone(), x.group.clone()))
        })
        .map(|(c, _)| c),
    );
    out
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> AllocDetail {
    x.detail()
}

fn fill_row(row: &mut Row, rec: &CellRecord<AllocPooledVsUnpooled>) {
    let c = &rec.plan.cell;
    let xs: Vec<f64> = rec.outcomes().flat_map(|o| o.runs.iter().map(|r| r.ops_per_ms)).collect();
    let heap = rec.heap.as_ref().and_then(|h| {
        let (Ok(o), Some(t), true) = (&h.result, h.heap, h.file_written) else { return None };
        // Every iteration of the heap child, warm-ups included, ran under the profiler.
        let ops = (c.ops * (o.warmup.len() + o.runs.len()) as u64).max(1) as f64;
        Some(AllocHeap {
            file: h.file.clone(),
            total_blocks: t.total_blocks,
            total_bytes: t.total_bytes,
            max_bytes: t.max_bytes,
            blocks_per_op: t.total_blocks as f64 / ops,
            bytes_per_op: t.total_bytes as f64 / ops,
            ops,
            valid: o.failure().is_none(),
        })
    });
    row.set_detail(&AllocDetail {
        mode: c.mode.name().to_string(),
        size: c.size,
        ops_per_iteration: c.ops,
        summary: Summary::of(&xs),
        ops_per_ms: xs,
        pool_cached_after: rec.outcomes().map(|o| o.pool_cached_after).max(),
        heap_file: heap.as_ref().map(|h| h.file.clone()),
        heap,
        jvm: netty::NettyRow::of(rec.outcomes().filter_map(|o| o.jvm.as_ref())),
    });
}

fn jmh_table(a: &AllocArgs, r: &Results) -> Table {
    let mut t = Table::new(
        format!("Allocate + free, ops/ms (JMH style: per fork {} warm-up and {} measured iterations of {} ops; Score over every measured iteration)", r.environment.warmup_runs, r.environment.measured_runs, a.ops),
        &["Benchmark", "size", "Mode", "Cnt", "Score", "Error (99.9%)", "Units", "min", "max", "stdev", "median over forks [interval]", "pooled/unpooled (paired)"],
    );
    for x in &r.results {
        let size = x.key_as::<AllocKey>().size.to_string();
        let mut line = vec![format!("{}Allocation", x.label), size, "thrpt".into()];
        match detail(x).summary.filter(|_| x.status == Status::Ok) {
            Some(s) => {
                let f = |v: f64| format!("{v:.3}");
                line.extend([
                    s.n.to_string(),
                    f(s.mean),
                    s.ci999_half.map_or("n/a".into(), f),
                    "ops/ms".into(),
                    f(s.min),
                    f(s.max),
                    f(s.stddev),
                ]);
                line.push(match (x.score, x.score_ci) {
                    (Some(m), Some([lo, hi])) => format!("{m:.1} [{lo:.1}, {hi:.1}]"),
                    (Some(m), None) => format!("{m:.1} [–]"),
                    _ => "–".into(),
                });
            }
            None => {
                line.push(format!("{}: {}", x.status.word(), x.error.clone().unwrap_or_default()));
                line.extend(std::iter::repeat_n("–".to_string(), 7));
            }
        }
        let mode = Mode::ALL.into_iter().find(|m| m.name() == x.label);
        let twin = mode.and_then(Mode::unpooled_twin).map(Mode::name);
        let ratio = r.ratios.iter().find(|q| {
            q.group == x.group && q.variant == x.label && Some(q.baseline.as_str()) == twin
        });
        let is_base = r
            .ratios
            .iter()
            .any(|q| q.baseline == x.label && Mode::ALL.iter().any(|m| m.unpooled_twin() == mode));
        line.push(match ratio {
            Some(q) => format!("{} (against {})", q.text(), q.baseline),
            None if is_base => "baseline".into(),
            None => "–".into(),
        });
        t.rows.push(line);
    }
    t.note = Some(
        "Pooled buffers are reused without zeroing (as Netty's); unpooled ones are zeroed \
         (vec![0; n], as Java's new byte[n]; Netty's unpooled heap buffer is a new byte[n], \
         its unpooled direct one ByteBuffer.allocateDirect(n)): zeroing is part of what the \
         unpooled side pays. pooled/unpooled = each allocator's pooled ops/ms ÷ its unpooled \
         ops/ms within each round, the median over rounds with its interval."
            .into(),
    );
    t
}

/// The Rust rows against Netty's heap rows of the same size, paired within rounds.
fn rust_vs_netty_table(r: &Results) -> Option<Table> {
    let pairs = [PAIRS[3], PAIRS[4]];
    let mut t = Table::new(
        "The Rust rows against Netty's (ops/ms ratio paired within rounds: > 1, the Rust row \
         is faster)",
        &["size", "pooled / netty-pooled-heap", "unpooled / netty-unpooled-heap"],
    );
    let mut groups: Vec<&str> = Vec::new();
    for x in &r.results {
        if !groups.contains(&x.group.as_str()) {
            groups.push(&x.group);
        }
    }
    for g in groups {
        let cell = |(v, b): (Mode, Mode)| {
            r.ratios
                .iter()
                .find(|q| q.group == g && q.variant == v.name() && q.baseline == b.name())
                .map(Ratio::text)
        };
        let cells: Vec<Option<String>> = pairs.into_iter().map(cell).collect();
        if cells.iter().any(Option::is_some) {
            let mut line = vec![g.trim_start_matches("size=").to_string()];
            line.extend(cells.into_iter().map(|c| c.unwrap_or_else(|| "–".into())));
            t.rows.push(line);
        }
    }
    t.note = Some(
        "Netty's heap rows are the counterparts: a Java heap buffer and a Rust Vec both live \
         in their runtime's own heap. The Netty rows' JVM is the plain loop itself \
         (allocator.heapBuffer(n) … release(), nothing between), so no calibration row is \
         needed for it."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

fn heap_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Heap (dhat, a separate untimed child per row; warm-up and measured iterations profiled)",
        &[
            "mode",
            "size",
            "ops",
            "allocations",
            "bytes allocated",
            "peak live bytes",
            "allocations/op",
            "bytes/op",
            "check",
        ],
    );
    for x in &r.results {
        let Some(h) = detail(x).heap else { continue };
        t.rows.push(vec![
            x.label.clone(),
            x.key_as::<AllocKey>().size.to_string(),
            format!("{:.0}", h.ops),
            format!("{:.0}", h.total_blocks as f64),
            format!("{:.0}", h.total_bytes as f64),
            format!("{:.0}", h.max_bytes as f64),
            format!("{:.4}", h.blocks_per_op),
            format!("{:.1}", h.bytes_per_op),
            if h.valid { "ok".into() } else { "INVALID".into() },
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

fn method_lines(a: &AllocArgs, cells: &[CellRecord<AllocPooledVsUnpooled>]) -> Vec<String> {
    let mut v = vec![
        "Each measured iteration's ops/ms = ops / elapsed (Instant, ns); a fork (JMH's fork: a \
         fresh process) discards its warm-up iterations."
            .into(),
        "Score = mean of the measured iterations of every valid fork; Error = half-width of the \
         99.9% confidence interval (Student's t, n − 1 degrees of freedom), as JMH prints it."
            .into(),
        "Each iteration's checksum (the touched first byte of every buffer), warm-ups included, \
         must equal its closed form, or the row is INVALID."
            .into(),
        "The criterion bench of the same cycles is crates/buffer-pool/benches.".into(),
    ];
    if let Some(j) = cells.iter().find_map(|c| c.plan.cell.jvm.as_ref()) {
        v.push(format!(
            "Netty rows: tools/jvm/netty/src/main/java/NettyAlloc.java, a fresh JVM per fork ({}), one thread \
             named alloc: per op allocator.heapBuffer(n) or directBuffer(n) on a \
             PooledByteBufAllocator(true) or UnpooledByteBufAllocator(true), its byte 0 written \
             ((k + 1) mod 256 for the process's k-th cycle) and read back, release(). Before \
             its warm-up iterations each fork cycles for {} ms of JIT warm-up, unmarked; then \
             the same warm-up and measured iterations of {} ops as the Rust rows. An iteration \
             is valid when the bytes read back sum to the closed form (recomputed by the lab) \
             and every buffer's release() freed it.",
            j.flags.join(" "),
            j.jit_warmup_ms,
            a.ops
        ));
        v.push(
            "Seed 004's JMH run: 2 forks, each 10 warm-up and 10 measured iterations of 1 s, \
             one thread, ops/ms; here each row gets --rounds forks (one per round, rotated \
             with the other rows of its size), each --warmup warm-up and --runs measured \
             iterations of --ops cycles."
                .into(),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{ratio, results, row};
    use serde_json::json;

    #[test]
    fn the_main_chart_is_the_pooled_over_unpooled_ratio_per_size() {
        let rows = vec![
            row("pooled", "size=0", 8e4, None, json!({})),
            row("unpooled", "size=0", 5e5, Some([4e5, 6e5]), json!({})),
            row("pooled", "size=65536", 4e4, None, json!({})),
            row("unpooled", "size=65536", 1e3, None, json!({})),
        ];
        let ratios = vec![
            ratio("pooled", "unpooled", "size=0", 0.16, Some([0.1, 0.2])),
            ratio("pooled", "unpooled", "size=65536", 40.0, Some([30.0, 50.0])),
        ];
        let r = results("alloc-pooled-vs-unpooled", rows, ratios);
        let cs = charts(&r);
        let main = &cs[0];
        assert_eq!(
            main.series,
            vec![("pooled/unpooled".to_string(), vec![(1.0, 0.16), (2.0, 40.0)])]
        );
        assert_eq!(
            main.intervals,
            vec![("pooled/unpooled".to_string(), vec![(1.0, 0.1, 0.2), (2.0, 30.0, 50.0)])]
        );
        assert_eq!(main.x_names[1], (2.0, "size=65536".to_string()));
        let ops = &cs[1];
        for x in &r.results {
            let at = if x.group == "size=0" { 1.0 } else { 2.0 };
            let s = ops.series.iter().find(|s| s.0 == x.label).expect("a series per mode");
            assert!(s.1.contains(&(at, x.score.expect("score"))));
        }
        assert_eq!(ops.intervals, vec![("unpooled".to_string(), vec![(1.0, 4e5, 6e5)])]);
    }
}
