//! The `lab` command line: `list`, `run <experiment>` (or `lab <experiment>`), `env`,
//! `compare`, and the hidden `__cell` that each child process runs.
//!
//! The parent plans the matrix, runs every cell in its own child process under a watchdog,
//! runs the untimed heap and trace children, and writes `results.json`, `report.md` and
//! `report.html`. Bad input is one line on stderr and exit code 2.

use crate::envinfo::{self, Environment};
use crate::harness::{self, CellOutput, CellSpec, Mode, PAYLOADS};
use crate::parse::{parse_list, parse_producers, parse_size};
use crate::report;
use crate::results::{self, Config, Heap, Results, Row, Sampling, SamplingAb, Status};
use crate::tracehook::{self, RecorderHook};
use crate::variants::{self, WAITS};
use clap::{Args, Parser, Subcommand};
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The experiments this build offers: (name, one-line description).
pub const EXPERIMENTS: &[(&str, &str)] = &[(
    "disruptor-vs-lbq",
    "seed 001: P producers (1..6), one consumer, the locked queue (LinkedBlockingQueue) \
     against the ring (Disruptor, Blocking wait): duration, QPS, CPU, heap, traces",
)];

/// Messages per run when `--messages` is not given: small enough that the default
/// experiment (12 cells × 6 runs, plus heap and trace passes) ends in about 90 s on 2 cores.
/// The seed used 32Mi (`--messages 32Mi`).
pub const DEFAULT_MESSAGES: u64 = 1 << 20;

/// Heap runs are slow (a backtrace per allocation): at most this many messages.
pub const DEFAULT_HEAP_MESSAGES: u64 = 100_000;

#[derive(Parser, Debug)]
#[command(
    name = "lab",
    version,
    about = "Runs the lab's handoff experiments and writes their reports",
    after_help = "`lab <experiment> [options]` is short for `lab run <experiment> [options]`."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Lists experiments, variants and wait strategies.
    List,
    /// Runs an experiment.
    Run(Box<RunArgs>),
    /// Prints the environment record.
    Env,
    /// Compares two runs: ratio per row, marking changes beyond the runs' spread.
    Compare {
        /// The older results.json (or its folder).
        a: PathBuf,
        /// The newer results.json (or its folder).
        b: PathBuf,
    },
    /// Serves a run folder to Perfetto's UI (127.0.0.1:9001) and prints how to open its files.
    View(crate::view::ViewArgs),
    /// Runs one cell in this process and prints one JSON line (used by the parent).
    #[command(name = "__cell", hide = true)]
    Cell {
        /// The cell's spec as JSON.
        spec: String,
    },
}

#[derive(Args, Debug, Clone)]
struct RunArgs {
    /// The experiment (see `lab list`).
    experiment: String,
    /// Messages per run: a number or a size like 32Mi, 1M [default: 1Mi; the seed: 32Mi].
    #[arg(long)]
    messages: Option<String>,
    /// Producer counts: `1,2,4` or `1..6` [default: 1..6].
    #[arg(long)]
    producers: Option<String>,
    /// Measured runs per cell.
    #[arg(long, default_value = "5")]
    runs: String,
    /// Warm-up runs per cell.
    #[arg(long, default_value = "1")]
    warmup: String,
    /// Ring size, a power of two (also the bound of the channel peers) [the seed: 32Mi].
    #[arg(long, default_value = "64Ki")]
    ring_size: String,
    /// Bound of the locked queue [default: unbounded, as the seed].
    #[arg(long)]
    capacity: Option<String>,
    /// Ring wait strategy: blocking|sleeping|yielding|busy-spin, a list, or `all`.
    #[arg(long, default_value = "blocking")]
    wait: String,
    /// Payload bytes per message: 16, 64 or 256.
    #[arg(long, default_value = "16")]
    payload: String,
    /// Variants: any of locked,ring,reactive,naive,crossbeam,std-mpsc,disruptor-rs, or `all`
    /// [default: locked,ring].
    #[arg(long)]
    variants: Option<String>,
    /// Output folder for this run [default: traces/<experiment>/<timestamp>/ in the workspace].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Heap pass with dhat (a separate untimed child per cell): on|off.
    #[arg(long, default_value = "on")]
    heap: String,
    /// Messages in each heap run [default: min(messages, 100000)].
    #[arg(long)]
    heap_messages: Option<String>,
    /// Trace pass (a separate untimed child per cell): off|flight|full.
    #[arg(long, default_value = "flight")]
    trace: String,
    /// Messages in each trace run [default: messages].
    #[arg(long)]
    trace_messages: Option<String>,
    /// Stamp every K-th message of each producer for latency (0: off).
    #[arg(long, default_value = "1024")]
    sample_every: String,
    /// Most messages the consumer takes per recv_batch (1: recv one at a time).
    #[arg(long, default_value = "1024")]
    batch: String,
    /// Watchdog limit per child process, seconds [default: from the messages and runs].
    #[arg(long)]
    timeout: Option<String>,
}

/// Bad input: printed as one line, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl<T: Into<String>> From<T> for UsageError {
    fn from(s: T) -> Self {
        UsageError(s.into())
    }
}

/// `println!` that ignores a closed stdout (e.g. `lab … | head`) instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `eprintln!` that ignores a closed stderr.
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` only stores to an atomic, which is async-signal-safe, and has
        // the signature `signal` expects. Replacing the default disposition of SIGINT and
        // SIGTERM is what we want: the parent finishes its files, then exits 130.
        unsafe { libc::signal(sig, handler) };
    }
}

/// The entry point of the `lab` binary; returns the exit code.
pub fn main() -> i32 {
    let mut args: Vec<String> = std::env::args().collect();
    const SUBCOMMANDS: &[&str] =
        &["list", "run", "env", "compare", "view", "__cell", "__xcell", "help"];
    if let Some(first) = args.get(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            args.insert(1, "run".to_string());
        }
    }
    // Seed 000/004's experiments have their own options and child protocol.
    if args.get(1).map(String::as_str) == Some("__xcell") {
        return crate::experiments::cell_main(args.get(2).map_or("", String::as_str));
    }
    if args.get(1).map(String::as_str) == Some("run")
        && args.get(2).is_some_and(|n| crate::experiments::is_experiment(n))
    {
        return crate::experiments::run(&args).unwrap_or_else(|msg| {
            errln!("lab: {msg}");
            2
        });
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    0
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    2
                }
                _ => {
                    let text = e.to_string();
                    let line = text.lines().next().unwrap_or("invalid arguments");
                    errln!("lab: {}", line.trim_start_matches("error: "));
                    2
                }
            };
        }
    };
    let result = match cli.cmd {
        Cmd::List => {
            list();
            Ok(0)
        }
        Cmd::Env => {
            env_cmd();
            Ok(0)
        }
        Cmd::Compare { a, b } => compare(&a, &b),
        Cmd::View(v) => crate::view::run(v).map_err(UsageError),
        Cmd::Cell { spec } => Ok(cell(&spec)),
        Cmd::Run(r) => run(*r),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            errln!("lab: {msg}");
            2
        }
    }
}

fn list() {
    outln!("Experiments:");
    for (name, desc) in EXPERIMENTS.iter().chain(crate::experiments::EXPERIMENTS) {
        outln!("  {name:<24} {desc}");
    }
    outln!("\nVariants (--variants):");
    for v in variants::all() {
        let note = v.unavailable.map(|w| format!(" [unavailable: {w}]")).unwrap_or_default();
        outln!("  {:<18} {}{note}", v.name, v.description);
    }
    outln!("\nRing wait strategies (--wait):");
    for (w, d) in WAITS {
        outln!("  {w:<18} {d}");
    }
    outln!(
        "\nPayloads (--payload): {}",
        PAYLOADS.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
    );
}

fn env_cmd() {
    let e = Environment::capture();
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec!["field", "value"]);
    for (k, v) in e.rows() {
        if matches!(
            k,
            "warm-up runs" | "measured runs" | "input size" | "tracing" | "heap profiling"
        ) {
            continue;
        }
        t.add_row(vec![k.to_string(), v]);
    }
    outln!("{t}");
}

/// Runs one cell in this process (the `__cell` child) and prints its JSON line.
fn cell(spec_json: &str) -> i32 {
    let spec: CellSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            outln!("{}", serde_json::json!({"ok": false, "error": format!("bad cell spec: {e}")}));
            return 3;
        }
    };
    let mut hook = RecorderHook::default();
    match harness::run_spec(&spec, Some(&mut hook)) {
        Ok(out) => {
            outln!("{}", serde_json::json!({"ok": true, "output": out}));
            0
        }
        Err(e) => {
            outln!("{}", serde_json::json!({"ok": false, "error": e}));
            3
        }
    }
}

/// Validated options of a run.
#[derive(Debug, Clone)]
struct Plan {
    experiment: String,
    config: Config,
    variants: Vec<String>,
    run_dir: PathBuf,
    default_location: bool,
    notes: Vec<String>,
}

fn parse_count(what: &str, s: &str) -> Result<u64, UsageError> {
    parse_size(s).map_err(|e| UsageError(format!("--{what}: {e}")))
}

fn plan(r: &RunArgs) -> Result<Plan, UsageError> {
    if !EXPERIMENTS.iter().any(|(n, _)| *n == r.experiment) {
        return Err(format!(
            "unknown experiment '{}'; valid: {}",
            r.experiment,
            EXPERIMENTS
                .iter()
                .chain(crate::experiments::EXPERIMENTS)
                .map(|e| e.0)
                .collect::<Vec<_>>()
                .join(", ")
        )
        .into());
    }
    let mut notes = Vec::new();
    let messages = match &r.messages {
        Some(m) => parse_count("messages", m)?,
        None => DEFAULT_MESSAGES,
    };
    if messages == 0 {
        return Err("--messages must be at least 1 (got 0)".into());
    }
    let producers = parse_producers(r.producers.as_deref().unwrap_or("1..6"))
        .map_err(|e| UsageError(format!("--producers: {e}")))?;
    let runs = parse_count("runs", &r.runs)? as usize;
    if runs == 0 {
        return Err("--runs must be at least 1 (got 0)".into());
    }
    let warmup = parse_count("warmup", &r.warmup)? as usize;
    let ring_size = parse_count("ring-size", &r.ring_size)? as usize;
    if !ring_size.is_power_of_two() {
        return Err(format!(
            "--ring-size must be a power of two (got {ring_size}); e.g. 65536, 64Ki, 32Mi"
        )
        .into());
    }
    let capacity = match &r.capacity {
        Some(c) => {
            let c = parse_count("capacity", c)? as usize;
            if c == 0 {
                return Err("--capacity must be at least 1 (got 0); omit it for unbounded".into());
            }
            Some(c)
        }
        None => None,
    };
    let waits: Vec<String> = if r.wait == "all" {
        WAITS.iter().map(|w| w.0.to_string()).collect()
    } else {
        let w = parse_list(&r.wait);
        for x in &w {
            variants::check_wait(x).map_err(|e| UsageError(format!("--wait: {e}")))?;
        }
        if w.is_empty() {
            return Err("--wait: no wait strategy given".into());
        }
        w
    };
    let payload = parse_count("payload", &r.payload)? as usize;
    if !PAYLOADS.contains(&payload) {
        return Err(format!(
            "--payload {payload} is not compiled in; valid: {}",
            PAYLOADS.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ")
        )
        .into());
    }
    let explicit = r.variants.is_some();
    let requested: Vec<String> = match r.variants.as_deref() {
        Some("all") => variants::all()
            .into_iter()
            .filter(|v| !v.name.starts_with("fault-") && v.unavailable.is_none())
            .map(|v| v.name.to_string())
            .collect(),
        Some(list) => parse_list(list),
        None => vec!["locked".to_string(), "ring".to_string()],
    };
    if requested.is_empty() {
        return Err("--variants: no variant given".into());
    }
    let mut chosen = Vec::new();
    for name in &requested {
        let info =
            variants::find(name).ok_or_else(|| UsageError(variants::unknown_variant(name)))?;
        if let Some(why) = info.unavailable {
            if explicit {
                return Err(format!("variant '{name}' is unavailable in this build: {why}").into());
            }
            notes.push(format!("'{name}' was left out of the defaults: {why}."));
            continue;
        }
        if !chosen.contains(name) {
            chosen.push(name.clone());
        }
    }
    if chosen.is_empty() {
        return Err("no runnable variant left (see `lab list`)".into());
    }
    let heap = match r.heap.as_str() {
        "on" | "off" => r.heap.clone(),
        other => return Err(format!("--heap '{other}'; valid: on, off").into()),
    };
    let trace = match r.trace.as_str() {
        "off" | "flight" | "full" => r.trace.clone(),
        other => return Err(format!("--trace '{other}'; valid: off, flight, full").into()),
    };
    let heap_messages = match &r.heap_messages {
        Some(h) => parse_count("heap-messages", h)?,
        None => messages.min(DEFAULT_HEAP_MESSAGES),
    };
    let trace_messages = match &r.trace_messages {
        Some(t) => parse_count("trace-messages", t)?,
        None => messages,
    };
    if heap_messages == 0 || trace_messages == 0 {
        return Err("--heap-messages and --trace-messages must be at least 1".into());
    }
    let sample_every = parse_count("sample-every", &r.sample_every)?;
    let batch = parse_count("batch", &r.batch)? as usize;
    if batch == 0 {
        return Err("--batch must be at least 1 (got 0)".into());
    }
    let runs_total = (runs + warmup + 6) as u64;
    let timeout_s = match &r.timeout {
        Some(t) => parse_count("timeout", t)?.max(1),
        // Generous: 1M messages/s at worst, ×4, plus process start.
        None => 30 + 4 * runs_total * messages.max(heap_messages).max(trace_messages) / 1_000_000,
    };
    let uneven: Vec<usize> =
        producers.iter().copied().filter(|p| messages % *p as u64 != 0).collect();
    let spread_note = (!uneven.is_empty()).then(|| {
        let parts: Vec<String> = uneven
            .iter()
            .map(|&p| {
                let (q, rem) = (messages / p as u64, messages % p as u64);
                format!("P={p}: {rem} producer(s) send {} and {} send {q}", q + 1, p as u64 - rem)
            })
            .collect();
        format!(
            "{messages} messages do not divide evenly by every producer count, so they are \
             spread (the first producers send one more): {}.",
            parts.join("; ")
        )
    });
    let (run_dir, default_location) =
        crate::experiments::common::choose_run_dir(r.out.as_deref(), &r.experiment);
    check_writable(&run_dir)?;
    let config = Config {
        variants: chosen.clone(),
        waits,
        producers,
        messages,
        warmup,
        runs,
        ring_size,
        capacity,
        payload,
        sample_every,
        batch,
        heap,
        heap_messages,
        trace,
        trace_messages,
        timeout_s,
        spread_note,
    };
    Ok(Plan {
        experiment: r.experiment.clone(),
        config,
        variants: chosen,
        run_dir,
        default_location,
        notes,
    })
}

fn check_writable(dir: &Path) -> Result<(), UsageError> {
    let fail = |e: std::io::Error| {
        UsageError(format!("cannot write to output folder {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(".lab-write-probe");
    std::fs::write(&probe, b"").map_err(fail)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// One cell of the matrix.
#[derive(Debug, Clone)]
struct Cell {
    variant: String,
    wait: Option<String>,
    label: String,
    producers: usize,
}

impl Cell {
    fn file_stem(&self) -> String {
        let l = self.label.replace('[', "-").replace(']', "");
        format!("{l}-p{}", self.producers)
    }
}

fn cells(plan: &Plan) -> Vec<Cell> {
    let c = &plan.config;
    let mut out = Vec::new();
    for &p in &c.producers {
        for v in &plan.variants {
            let takes_wait = variants::find(v).is_some_and(|i| i.takes_wait);
            if takes_wait {
                for w in &c.waits {
                    let label = if c.waits.len() > 1 { format!("{v}[{w}]") } else { v.clone() };
                    out.push(Cell {
                        variant: v.clone(),
                        wait: Some(w.clone()),
                        label,
                        producers: p,
                    });
                }
            } else {
                out.push(Cell { variant: v.clone(), wait: None, label: v.clone(), producers: p });
            }
        }
    }
    out
}

fn spec_for(plan: &Plan, cell: &Cell, mode: Mode, messages: u64, ab_pairs: usize) -> CellSpec {
    let c = &plan.config;
    CellSpec {
        variant: cell.variant.clone(),
        wait: cell.wait.clone(),
        producers: cell.producers,
        messages,
        warmup: c.warmup,
        runs: c.runs,
        ring_size: c.ring_size,
        capacity: c.capacity,
        prefetch: 256,
        payload: c.payload,
        sample_every: c.sample_every,
        batch: c.batch,
        sampling_ab_pairs: ab_pairs,
        mode,
    }
}

/// How a child ended.
enum Outcome {
    Done(Box<CellOutput>),
    Failed { status: Status, error: String, stderr_tail: String },
    Interrupted,
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    let t = v[v.len().saturating_sub(lines)..].join("\n");
    if t.len() > 2000 {
        let cut = t.len() - 2000;
        let start = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
        t[start..].to_string()
    } else {
        t
    }
}

fn run_child(mut cmd: Command, timeout: Duration) -> Outcome {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Own process group: a terminal's Ctrl-C reaches the parent only, which then stops the
    // child itself after saving what finished.
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Failed {
                status: Status::Error,
                error: format!("could not start the child process: {e}"),
                stderr_tail: String::new(),
            }
        }
    };
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let err_pipe = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        for line in BufReader::new(err_pipe).lines().map_while(Result::ok) {
            s.push_str(&line);
            s.push('\n');
            if s.len() > 1 << 20 {
                s.drain(..s.len() / 2);
            }
        }
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(_) => break None,
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Outcome::Interrupted;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err_reader.join().unwrap_or_default();
            return Outcome::Failed {
                status: Status::Hung,
                error: format!(
                    "no result within {} s; the watchdog killed the child",
                    timeout.as_secs()
                ),
                stderr_tail: tail(&stderr, 15),
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let line = stdout.lines().rev().find(|l| l.trim_start().starts_with('{'));
    if let Some(v) = line.and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        if v["ok"] == serde_json::Value::Bool(true) {
            match serde_json::from_value::<CellOutput>(v["output"].clone()) {
                Ok(o) => return Outcome::Done(Box::new(o)),
                Err(e) => {
                    return Outcome::Failed {
                        status: Status::Error,
                        error: format!("unreadable child output: {e}"),
                        stderr_tail: tail(&stderr, 15),
                    }
                }
            }
        }
        return Outcome::Failed {
            status: Status::Error,
            error: v["error"].as_str().unwrap_or("the child reported an error").to_string(),
            stderr_tail: tail(&stderr, 15),
        };
    }
    let how = match status {
        Some(st) => {
            use std::os::unix::process::ExitStatusExt;
            match (st.code(), st.signal()) {
                (Some(c), _) => format!("the child exited with code {c} and no result"),
                (None, Some(s)) => format!("the child was killed by signal {s}"),
                _ => "the child ended without a result".to_string(),
            }
        }
        None => "lost track of the child process".to_string(),
    };
    Outcome::Failed { status: Status::Crashed, error: how, stderr_tail: tail(&stderr, 15) }
}

/// The heap binary: next to the running executable. Built on demand when missing or older
/// than the lab binary (`cargo run` builds only the binary it runs).
fn heap_binary(notes: &mut Vec<String>) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let candidate = dir.join("lab-heap");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&candidate), modified(&exe)) {
        (Some(heap), Some(lab)) => heap >= lab,
        _ => false,
    };
    if fresh {
        return Some(candidate);
    }
    let target_dir = dir.parent()?;
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.arg("build").arg("-p").arg("lab").arg("--bin").arg("lab-heap");
    if env!("LAB_BUILD_PROFILE") == "release" {
        cmd.arg("--release");
    }
    cmd.arg("--target-dir").arg(target_dir).current_dir(envinfo::workspace_root());
    let state = if candidate.is_file() { "older than lab" } else { "missing" };
    errln!("lab: {} is {state}; building it ({:?})", candidate.display(), cmd);
    let ok = cmd.stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if ok && candidate.is_file() {
        Some(candidate)
    } else if candidate.is_file() {
        notes.push(format!(
            "{} is older than the lab binary and could not be rebuilt; the heap pass used it \
             as it is.",
            candidate.display()
        ));
        Some(candidate)
    } else {
        notes.push(format!(
            "The heap pass was skipped: {} is missing and could not be built; run \
             `cargo build --release -p lab --bins`.",
            candidate.display()
        ));
        None
    }
}

struct Progress {
    bar: indicatif::ProgressBar,
    plain: bool,
    done: u64,
    total: u64,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let plain = !std::io::stderr().is_terminal();
        let bar = if plain {
            indicatif::ProgressBar::hidden()
        } else {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        };
        Progress { bar, plain, done: 0, total }
    }

    fn start(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    fn finish_one(&mut self, what: &str, result: &str) {
        self.done += 1;
        self.bar.inc(1);
        if self.plain {
            errln!("[{}/{}] {what}: {result}", self.done, self.total);
        } else {
            self.bar.println(format!("{what}: {result}"));
        }
    }
}

fn run(r: RunArgs) -> Result<i32, UsageError> {
    let mut plan = plan(&r)?;
    install_signal_handlers();
    let c = plan.config.clone();
    let mut env = Environment::capture();
    env.warmup_runs = c.warmup;
    env.measured_runs = c.runs;
    env.messages = c.messages;
    let trace_unavailable = if c.trace == "off" { None } else { tracehook::unavailable() };
    env.tracing = match (&c.trace[..], &trace_unavailable) {
        ("off", _) => "off".to_string(),
        (m, Some(why)) => format!("{m} requested, unavailable: {why}"),
        (m, None) => {
            format!("{m}: a separate untimed child per cell ({} messages)", c.trace_messages)
        }
    };
    if let Some(why) = &trace_unavailable {
        plan.notes.push(format!("Tracing ('{}') is unavailable: {why}.", c.trace));
    }
    let heap_bin = if c.heap == "on" { heap_binary(&mut plan.notes) } else { None };
    env.heap_profiling = match (&c.heap[..], &heap_bin) {
        ("off", _) => "off".to_string(),
        (_, Some(_)) => format!(
            "on: a separate untimed child per cell under dhat::Profiler ({} messages)",
            c.heap_messages
        ),
        (_, None) => "on, but the lab-heap binary is missing: skipped".to_string(),
    };
    let exe = std::env::current_exe()
        .map_err(|e| UsageError(format!("cannot find the lab executable: {e}")))?;
    let cells = cells(&plan);
    let ab_index = if c.sample_every > 0 {
        cells.iter().position(|x| x.variant == "ring").or(Some(0))
    } else {
        None
    };
    let passes = 1
        + u64::from(heap_bin.is_some())
        + u64::from(c.trace != "off" && trace_unavailable.is_none());
    let mut progress = Progress::new(cells.len() as u64 * passes);
    let timeout = Duration::from_secs(c.timeout_s);
    let mut rows: Vec<Row> = Vec::new();
    let mut sample_costs = Vec::new();
    let mut ab: Option<SamplingAb> = None;
    let mut interrupted = false;

    'timed: for (i, cell) in cells.iter().enumerate() {
        let what = format!("{} P={}", cell.label, cell.producers);
        progress.start(&what);
        let pairs = if Some(i) == ab_index { 5 } else { 0 };
        let spec = spec_for(&plan, cell, Mode::Timed, c.messages, pairs);
        let mut cmd = Command::new(&exe);
        cmd.arg("__cell").arg(serde_json::to_string(&spec).expect("spec serialises"));
        let base = results::base_row(
            &cell.variant,
            cell.wait.clone(),
            &cell.label,
            cell.producers,
            c.messages,
            c.payload,
        );
        let row = match run_child(cmd, timeout) {
            Outcome::Interrupted => {
                interrupted = true;
                break 'timed;
            }
            Outcome::Done(out) => {
                if out.sample_cost_ns > 0.0 {
                    sample_costs.push(out.sample_cost_ns);
                }
                if !out.ab_sampled_ms.is_empty() {
                    let sum = |v: &[f64]| crate::stats::Summary::of(v);
                    let (sa, sb) = (sum(&out.ab_sampled_ms), sum(&out.ab_unsampled_ms));
                    let pct = |a: f64, b: f64| (b > 0.0).then(|| (a - b) / b * 100.0);
                    let overhead = match (&sa, &sb) {
                        (Some(a), Some(b)) => pct(a.median, b.median),
                        _ => None,
                    };
                    let overhead_min = match (&sa, &sb) {
                        (Some(a), Some(b)) => pct(a.min, b.min),
                        _ => None,
                    };
                    ab = Some(SamplingAb {
                        variant: cell.label.clone(),
                        producers: cell.producers,
                        sampled_ms: out.ab_sampled_ms.clone(),
                        unsampled_ms: out.ab_unsampled_ms.clone(),
                        overhead_pct: overhead,
                        overhead_pct_min: overhead_min,
                    });
                }
                results::timed_row(base, &out, env.cores, c.sample_every)
            }
            Outcome::Failed { status, error, stderr_tail } => {
                results::failed_row(base, status, error, stderr_tail)
            }
        };
        let summary = match (row.status, row.median_ms) {
            (Status::Ok, Some(m)) => {
                format!("median {m:.1} ms, {:.2} M msg/s", row.qps.unwrap_or(0.0) / 1e6)
            }
            (s, _) => format!("{} {}", s.word(), row.error.clone().unwrap_or_default()),
        };
        progress.finish_one(&what, &summary);
        rows.push(row);
    }

    // Heap pass: a separate, untimed child per cell, in the lab-heap binary.
    if let (false, Some(bin)) = (interrupted, &heap_bin) {
        for (cell, row) in cells.iter().zip(rows.iter_mut()) {
            if matches!(row.status, Status::Hung | Status::Crashed) {
                progress
                    .finish_one(&format!("heap {} P={}", cell.label, cell.producers), "skipped");
                continue;
            }
            let what = format!("heap {} P={}", cell.label, cell.producers);
            progress.start(&what);
            let file = format!("{}.dhat-heap.json", cell.file_stem());
            let path = plan.run_dir.join(&file);
            let spec = spec_for(
                &plan,
                cell,
                Mode::Heap { file: path.display().to_string() },
                c.heap_messages,
                0,
            );
            let mut cmd = Command::new(bin);
            cmd.arg(serde_json::to_string(&spec).expect("spec serialises"));
            match run_child(cmd, timeout) {
                Outcome::Interrupted => {
                    interrupted = true;
                    break;
                }
                Outcome::Done(out) => match (&out.heap, path.is_file()) {
                    (Some(h), true) => {
                        let m = h.messages.max(1) as f64;
                        let top_sites =
                            crate::dhatfile::top_sites(&path, 5, 4).unwrap_or_else(|e| {
                                plan.notes.push(format!("{file}: {e}"));
                                Vec::new()
                            });
                        row.heap = Some(Heap {
                            file: file.clone(),
                            total_blocks: h.total_blocks,
                            total_bytes: h.total_bytes,
                            max_bytes: h.max_bytes,
                            blocks_per_message: h.total_blocks as f64 / m,
                            bytes_per_message: h.total_bytes as f64 / m,
                            messages: h.messages,
                            valid: h.valid,
                            top_sites,
                        });
                        progress.finish_one(
                            &what,
                            &format!(
                                "{} allocations, {:.2}/msg",
                                h.total_blocks,
                                h.total_blocks as f64 / m
                            ),
                        );
                    }
                    _ => {
                        plan.notes.push(format!("heap {what}: the child wrote no profile"));
                        progress.finish_one(&what, "no profile");
                    }
                },
                Outcome::Failed { status, error, .. } => {
                    plan.notes.push(format!("heap {what}: {} {error}", status.word()));
                    progress.finish_one(&what, status.word());
                }
            }
        }
    }

    // Trace pass: a separate, untimed child per cell with the recorder installed.
    if !interrupted && c.trace != "off" && trace_unavailable.is_none() {
        for (cell, row) in cells.iter().zip(rows.iter_mut()) {
            let what = format!("trace {} P={}", cell.label, cell.producers);
            if matches!(row.status, Status::Hung | Status::Crashed) {
                progress.finish_one(&what, "skipped");
                continue;
            }
            progress.start(&what);
            let file = format!("{}.trace.json", cell.file_stem());
            let path = plan.run_dir.join(&file);
            let mode = Mode::Trace { recorder: c.trace.clone(), file: path.display().to_string() };
            let spec = spec_for(&plan, cell, mode, c.trace_messages, 0);
            let mut cmd = Command::new(&exe);
            cmd.arg("__cell").arg(serde_json::to_string(&spec).expect("spec serialises"));
            match run_child(cmd, timeout) {
                Outcome::Interrupted => {
                    interrupted = true;
                    break;
                }
                Outcome::Done(out) if path.is_file() => {
                    row.trace = Some(file);
                    let account = out.notes.join("; ");
                    plan.notes.push(format!("{what}: {account}"));
                    progress.finish_one(&what, &account);
                }
                Outcome::Done(_) => {
                    plan.notes.push(format!("{what}: the child wrote no trace file"));
                    progress.finish_one(&what, "no file");
                }
                Outcome::Failed { status, error, .. } => {
                    plan.notes.push(format!("{what}: {} {error}", status.word()));
                    progress.finish_one(&what, status.word());
                }
            }
        }
    }
    progress.bar.finish_and_clear();

    sample_costs.sort_by(f64::total_cmp);
    let sampling = Sampling {
        sample_every: c.sample_every,
        sample_cost_ns: sample_costs.get(sample_costs.len() / 2).copied(),
        est_overhead_max_pct: rows
            .iter()
            .filter_map(|r| r.sampling_overhead_est_pct)
            .reduce(f64::max),
        ab,
    };
    if interrupted {
        plan.notes.push("Interrupted (Ctrl-C): the cells that had finished are kept.".into());
    }
    let results = Results {
        experiment: plan.experiment.clone(),
        status: if interrupted { "interrupted".into() } else { "complete".into() },
        environment: env,
        config: c,
        results: rows,
        sampling,
        notes: plan.notes.clone(),
    };
    write_outputs(&plan, &results)?;
    if !interrupted {
        for t in report::all_tables(&results) {
            outln!("{}", report::terminal(&t));
        }
        for n in &results.notes {
            outln!("note: {n}");
        }
    }
    outln!("report: {}", plan.run_dir.join("report.html").display());
    outln!("results: {}", plan.run_dir.join("results.json").display());
    if interrupted {
        errln!("lab: interrupted; partial results written");
        return Ok(130);
    }
    let bad = results.results.iter().filter(|r| r.status != Status::Ok).count();
    if bad > 0 {
        errln!("lab: {bad} cell(s) did not pass (see the Failures table)");
        return Ok(1);
    }
    Ok(0)
}

fn write_outputs(plan: &Plan, results: &Results) -> Result<(), UsageError> {
    let dir = &plan.run_dir;
    let w = |name: &str, body: String| {
        std::fs::write(dir.join(name), body)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", dir.join(name).display())))
    };
    w("results.json", serde_json::to_string_pretty(results).expect("results serialise"))?;
    w("report.md", report::markdown(results))?;
    w("report.html", report::html(results))?;
    if plan.default_location {
        if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
            let link = parent.join("latest");
            let _ = std::fs::remove_file(&link);
            if let Err(e) = std::os::unix::fs::symlink(name, &link) {
                errln!("lab: could not update {}: {e}", link.display());
            }
        }
    }
    Ok(())
}

fn load_results(p: &Path) -> Result<Results, UsageError> {
    let file = if p.is_dir() { p.join("results.json") } else { p.to_path_buf() };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{} is not a lab results.json: {e}", file.display())))
}

fn compare(a: &Path, b: &Path) -> Result<i32, UsageError> {
    let ra = load_results(a)?;
    let rb = load_results(b)?;
    if ra.experiment != rb.experiment {
        return Err(format!(
            "cannot compare different experiments: {} vs {}",
            ra.experiment, rb.experiment
        )
        .into());
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "variant",
        "P",
        "a median ms [min, max]",
        "b median ms [min, max]",
        "QPS b/a",
        "change",
    ]);
    let fmt = |r: &Row| match (r.median_ms, r.min_ms, r.max_ms) {
        (Some(m), Some(lo), Some(hi)) => format!(
            "{m:.2} [{lo:.2}, {hi:.2}]{}",
            if r.status == Status::Ok { "" } else { " INVALID" }
        ),
        _ => r.status.word().to_string(),
    };
    let mut changed = 0;
    for x in &ra.results {
        let Some(y) = rb.results.iter().find(|y| y.label == x.label && y.producers == x.producers)
        else {
            t.add_row(vec![
                x.label.clone(),
                x.producers.to_string(),
                fmt(x),
                "(absent)".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        };
        let ratio = match (x.qps, y.qps) {
            (Some(qa), Some(qb)) if qa > 0.0 => format!("{:.2}×", qb / qa),
            _ => "-".into(),
        };
        let mark = if x.status != Status::Ok || y.status != Status::Ok {
            "not comparable (a run failed)".to_string()
        } else {
            // Time per message, so runs of different sizes compare; spread = [min, max].
            let per = |r: &Row, v: Option<f64>| v.map(|v| v / r.messages as f64);
            match (per(x, x.min_ms), per(x, x.max_ms), per(y, y.min_ms), per(y, y.max_ms)) {
                (Some(amin), Some(amax), Some(bmin), Some(bmax)) => {
                    if bmax < amin {
                        changed += 1;
                        "FASTER (beyond the spread)".into()
                    } else if bmin > amax {
                        changed += 1;
                        "SLOWER (beyond the spread)".into()
                    } else {
                        "within the spread".into()
                    }
                }
                _ => "-".into(),
            }
        };
        t.add_row(vec![x.label.clone(), x.producers.to_string(), fmt(x), fmt(y), ratio, mark]);
    }
    for y in &rb.results {
        if !ra.results.iter().any(|x| x.label == y.label && x.producers == y.producers) {
            t.add_row(vec![
                y.label.clone(),
                y.producers.to_string(),
                "(absent)".into(),
                fmt(y),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    outln!(
        "{} — a: {} ({}), b: {} ({})",
        ra.experiment,
        a.display(),
        ra.environment.git_commit,
        b.display(),
        rb.environment.git_commit
    );
    outln!("{t}");
    if ra.config.messages != rb.config.messages {
        outln!("note: the runs used different message counts ({} vs {}); the spread is compared per message.", ra.config.messages, rb.config.messages);
    }
    if ra.environment.cpu_model != rb.environment.cpu_model {
        outln!(
            "note: different CPUs: {} vs {}",
            ra.environment.cpu_model,
            rb.environment.cpu_model
        );
    }
    outln!("{changed} row(s) changed beyond the runs' spread ([min, max] ranges do not overlap).");
    Ok(0)
}
