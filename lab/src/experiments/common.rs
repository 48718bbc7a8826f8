//! What the experiments share: options, the child-process protocol, the output folder,
//! `results.json` and the report renderings (through [`crate::report`]'s table helpers).

use super::XArgs;
use crate::envinfo::{self, Environment};
use crate::parse::parse_size;
use crate::report::{self, Table};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One line naming the valid experiments.
pub fn unknown(name: &str) -> String {
    let mut all: Vec<&str> = crate::cli::EXPERIMENTS.iter().map(|e| e.0).collect();
    all.extend(super::EXPERIMENTS.iter().map(|e| e.0));
    format!("unknown experiment '{name}'; valid: {}", all.join(", "))
}

/// Validated options.
#[derive(Debug, Clone)]
pub struct Opts {
    pub experiment: String,
    pub elements: Option<u64>,
    pub runs: usize,
    pub warmup: usize,
    /// trace-overhead: rounds of the deciding workload (`--rounds`).
    pub rounds: Option<usize>,
    pub out: Option<PathBuf>,
    pub trace: bool,
    pub heap: bool,
    pub timeout: Duration,
}

impl Opts {
    pub fn from_args(a: &XArgs) -> Result<Opts, String> {
        if !super::is_experiment(&a.experiment) {
            return Err(unknown(&a.experiment));
        }
        let num = |what: &str, s: &str| parse_size(s).map_err(|e| format!("--{what}: {e}"));
        let elements = match &a.elements {
            Some(e) => {
                let n = num("elements", e)?;
                if n == 0 {
                    return Err("--elements must be at least 1 (got 0)".into());
                }
                Some(n)
            }
            None => None,
        };
        // trace-overhead runs many short children (see its docs); the others few long ones.
        let (default_runs, default_warmup) =
            if a.experiment == "trace-overhead" { ("1", "2") } else { ("5", "3") };
        let runs = num("runs", a.runs.as_deref().unwrap_or(default_runs))? as usize;
        if runs == 0 {
            return Err("--runs must be at least 1 (got 0)".into());
        }
        let warmup = num("warmup", a.warmup.as_deref().unwrap_or(default_warmup))? as usize;
        let rounds = match &a.rounds {
            None => None,
            Some(_) if a.experiment != "trace-overhead" => {
                return Err(format!(
                    "--rounds applies to trace-overhead only, not to {}",
                    a.experiment
                ))
            }
            Some(r) => match num("rounds", r)? {
                n if n < 6 => {
                    return Err(format!(
                        "--rounds must be at least 6 (an interval needs 6 rounds), got {n}"
                    ))
                }
                n => Some(n as usize),
            },
        };
        let (trace, heap) = trace_heap_flags(&a.trace, &a.heap)?;
        let timeout = Duration::from_secs(num("timeout", &a.timeout)?.max(1));
        Ok(Opts {
            experiment: a.experiment.clone(),
            elements,
            runs,
            warmup,
            rounds,
            out: a.out.clone(),
            trace,
            heap,
            timeout,
        })
    }
}

/// What a child is told: the experiment, the workload and its parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct XSpec {
    pub experiment: String,
    pub workload: String,
    pub elements: u64,
    pub warmup: usize,
    pub runs: usize,
    /// Workload-specific parameters.
    #[serde(default)]
    pub params: Value,
    /// Set for a trace child: where the flight recorder dumps its Chrome-trace JSON.
    #[serde(default)]
    pub trace_file: Option<String>,
    /// Set for a heap child: where dhat writes its profile.
    #[serde(default)]
    pub heap_file: Option<String>,
}

impl XSpec {
    pub fn param_u64(&self, k: &str) -> Result<u64, String> {
        self.params[k].as_u64().ok_or_else(|| format!("cell spec: parameter '{k}' missing"))
    }
    pub fn param_str(&self, k: &str) -> Result<&str, String> {
        self.params[k].as_str().ok_or_else(|| format!("cell spec: parameter '{k}' missing"))
    }
}

/// Prints a child's one JSON line; returns its exit code.
pub fn print_child(out: Result<Value, String>) -> i32 {
    use std::io::Write as _;
    let (line, code) = match out {
        Ok(v) => (serde_json::json!({"ok": true, "output": v}), 0),
        Err(e) => (serde_json::json!({"ok": false, "error": e}), 3),
    };
    let _ = writeln!(std::io::stdout(), "{line}");
    code
}

/// Runs `f` with the flight recorder installed when `spec.trace_file` is set, and adds the
/// recorder's account to the output's `trace_note`.
pub fn with_trace(
    spec: &XSpec,
    f: impl FnOnce() -> Result<Value, String>,
) -> Result<Value, String> {
    use crate::harness::TraceHook as _;
    let Some(file) = &spec.trace_file else { return f() };
    let mut hook = crate::tracehook::RecorderHook::default();
    hook.install("flight", file)?;
    let out = f();
    let note = hook.finish()?;
    let mut v = out?;
    v["trace_note"] = Value::String(note);
    Ok(v)
}

/// Runs `f` under a dhat profiler that writes `spec.heap_file`, and adds the heap totals
/// (`total_blocks`, `total_bytes`, `max_bytes`, `max_blocks`) to its output. For the
/// `lab-heap` binary, whose global allocator is `dhat::Alloc`.
pub fn with_heap(spec: &XSpec, f: impl FnOnce() -> Result<Value, String>) -> Result<Value, String> {
    let file = spec.heap_file.as_deref().ok_or("heap cell without heap_file")?;
    // The profiler writes its file when dropped: read the totals before that.
    let (out, stats) = {
        let _profiler = dhat::Profiler::builder().file_name(file).build();
        let out = f();
        (out, dhat::HeapStats::get())
    };
    let mut v = out?;
    v["total_blocks"] = serde_json::json!(stats.total_blocks);
    v["total_bytes"] = serde_json::json!(stats.total_bytes);
    v["max_bytes"] = serde_json::json!(stats.max_bytes);
    v["max_blocks"] = serde_json::json!(stats.max_blocks);
    Ok(v)
}

/// The experiments' `--trace flight|off` and `--heap on|off`, as (trace, heap).
pub fn trace_heap_flags(trace: &str, heap: &str) -> Result<(bool, bool), String> {
    let trace = match trace {
        "flight" => true,
        "off" => false,
        other => return Err(format!("--trace '{other}'; valid: flight, off")),
    };
    let heap = match heap {
        "on" => true,
        "off" => false,
        other => return Err(format!("--heap '{other}'; valid: on, off")),
    };
    Ok((trace, heap))
}

/// Runs one child (`exe args…`) under a watchdog; its last JSON line's `output`.
pub fn run_child(
    exe: &Path,
    first: &str,
    spec: &XSpec,
    timeout: Duration,
) -> Result<Value, String> {
    let json = serde_json::to_string(spec).expect("spec serialises");
    let mut cmd = Command::new(exe);
    if !first.is_empty() {
        cmd.arg(first);
    }
    cmd.arg(json).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("could not start the child: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let ro = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let re = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "HUNG: no result within {} s; the watchdog killed the child",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = ro.join().unwrap_or_default();
    let stderr = re.join().unwrap_or_default();
    let line = stdout.lines().rev().find(|l| l.trim_start().starts_with('{'));
    match line.and_then(|l| serde_json::from_str::<Value>(l).ok()) {
        Some(v) if v["ok"] == Value::Bool(true) => Ok(v["output"].clone()),
        Some(v) => Err(v["error"].as_str().unwrap_or("the child reported an error").to_string()),
        None => {
            let last: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(format!(
                "CRASHED: the child ended ({status}) without a result; stderr: {}",
                last.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ))
        }
    }
}

/// The lab binary (for `__xcell` children).
pub fn lab_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the lab executable: {e}"))
}

/// The run folder: `--out`, or `traces/<name>/<stamp>/` (then `latest` is updated at the end).
pub fn run_dir(o: &Opts) -> Result<(PathBuf, bool), String> {
    let (dir, default) = choose_run_dir(o.out.as_deref(), &o.experiment);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot write to output folder {}: {e}", dir.display()))?;
    Ok((dir, default))
}

/// The run folder: `out` if given (false: not the default location), else a new
/// `traces/<experiment>/<UTC stamp>[-n]` in the workspace (true). Creates nothing.
pub fn choose_run_dir(out: Option<&Path>, experiment: &str) -> (PathBuf, bool) {
    match out {
        Some(d) => (d.to_path_buf(), false),
        None => {
            let base = envinfo::workspace_root().join("traces").join(experiment);
            let stamp = envinfo::utc_now().1;
            let mut dir = base.join(&stamp);
            let mut n = 2;
            while dir.exists() {
                dir = base.join(format!("{stamp}-{n}"));
                n += 1;
            }
            (dir, true)
        }
    }
}

/// A table as stored in results.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct XTable {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub note: Option<String>,
}

impl XTable {
    pub fn new(title: &str, header: &[&str]) -> XTable {
        XTable {
            title: title.to_string(),
            header: header.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }
    fn report(&self) -> Table {
        Table {
            title: self.title.clone(),
            header: self.header.clone(),
            rows: self.rows.clone(),
            note: self.note.clone(),
        }
    }
}

/// A target the issue sets, against what was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct XTarget {
    pub what: String,
    pub target: String,
    pub measured: String,
    /// `None` when it could not be decided (an invalid run).
    pub met: Option<bool>,
}

/// results.json of these experiments.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct XResults {
    pub experiment: String,
    /// `complete`, or `invalid` when a workload failed its check or its child failed.
    pub status: String,
    pub environment: Environment,
    /// The options and fixed settings of the run.
    pub config: Value,
    /// One record per workload (its raw figures and summary).
    pub rows: Vec<Value>,
    pub tables: Vec<XTable>,
    pub targets: Vec<XTarget>,
    /// Trace and heap files, relative to the run folder.
    pub files: Vec<String>,
    /// How it was measured.
    pub method: Vec<String>,
    pub notes: Vec<String>,
}

/// The environment record with this run's settings.
pub fn environment(o: &Opts, elements: u64, tracing: &str, heap: &str) -> Environment {
    let mut env = Environment::capture();
    env.warmup_runs = o.warmup;
    env.measured_runs = o.runs;
    env.messages = elements;
    env.tracing = tracing.to_string();
    env.heap_profiling = heap.to_string();
    env
}

fn markdown(r: &XResults) -> String {
    let mut s = format!("# {}\n\n", r.experiment);
    if r.status != "complete" {
        let _ = writeln!(s, "**{}**: see the rows marked INVALID and the notes.\n", r.status);
    }
    for t in &r.tables {
        s.push_str(&report::md_table(&t.report()));
        s.push('\n');
    }
    if !r.targets.is_empty() {
        s.push_str("## Targets\n\n");
        for t in &r.targets {
            let _ = writeln!(
                s,
                "- {}: target {}, measured {}: {}",
                t.what,
                t.target,
                t.measured,
                met(t)
            );
        }
        s.push('\n');
    }
    if !r.files.is_empty() {
        s.push_str("## Files\n\n");
        for f in &r.files {
            let _ = writeln!(s, "- [{f}]({f})");
        }
        s.push('\n');
    }
    s.push_str("## Method\n\n");
    for m in &r.method {
        let _ = writeln!(s, "- {m}");
    }
    s.push_str("\n## Environment\n\n| field | value |\n|---|---|\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(s, "| {k} | {} |", v.replace('|', "\\|"));
    }
    if !r.notes.is_empty() {
        s.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

fn met(t: &XTarget) -> &'static str {
    match t.met {
        Some(true) => "met",
        Some(false) => "NOT met",
        None => "UNDECIDED",
    }
}

fn html(r: &XResults, charts: &str) -> String {
    let e = report::html_escape;
    let mut s = String::from("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(s, "<title>{} — {}</title>", e(&r.experiment), e(&r.environment.date));
    s.push_str(
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;\
         color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;\
         padding:3px 8px;text-align:right;font-size:13px}th{background:#eee}\
         td:first-child{text-align:left}.bad{background:#fdd;color:#900;font-weight:bold}\
         .note{color:#555;font-size:12px}</style></head><body>\n",
    );
    let _ = writeln!(s, "<h1>{}</h1>", e(&r.experiment));
    if r.status != "complete" {
        let _ = writeln!(s, "<p class=\"bad\">{}</p>", e(&r.status.to_uppercase()));
    }
    s.push_str(charts);
    for t in &r.tables {
        s.push_str(&report::html_table(&t.report()));
    }
    if !r.targets.is_empty() {
        s.push_str("<h2>Targets</h2>\n<ul>\n");
        for t in &r.targets {
            let _ = writeln!(
                s,
                "<li>{}: target {}, measured {}: <b>{}</b></li>",
                e(&t.what),
                e(&t.target),
                e(&t.measured),
                met(t)
            );
        }
        s.push_str("</ul>\n");
    }
    if !r.files.is_empty() {
        s.push_str("<h2>Files</h2>\n<ul>\n");
        for f in &r.files {
            let _ = writeln!(s, "<li><a href=\"{}\">{}</a></li>", e(f), e(f));
        }
        s.push_str(
            "</ul>\n<p class=\"note\">Traces open in Perfetto (ui.perfetto.dev); heap files in \
             dh_view.html.</p>\n",
        );
    }
    s.push_str("<h2>Method</h2>\n<ul>\n");
    for m in &r.method {
        let _ = writeln!(s, "<li>{}</li>", e(m));
    }
    s.push_str("</ul>\n<h2>Environment</h2>\n<table>\n");
    for (k, v) in r.environment.rows() {
        let _ =
            writeln!(s, "<tr><th>{}</th><td style=\"text-align:left\">{}</td></tr>", e(k), e(&v));
    }
    s.push_str("</table>\n");
    if !r.notes.is_empty() {
        s.push_str("<h2>Notes</h2>\n<ul>\n");
        for n in &r.notes {
            let _ = writeln!(s, "<li>{}</li>", e(n));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body></html>\n");
    s
}

/// Writes results.json, report.md, report.html (with `charts`, inline SVG), updates
/// `latest` for a default-location run, prints the tables; returns the exit code
/// (1 when the run is invalid).
pub fn finish(dir: &Path, default: bool, r: &XResults, charts: &str) -> Result<i32, String> {
    let w = |name: &str, body: String| {
        std::fs::write(dir.join(name), body)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    w("results.json", serde_json::to_string_pretty(r).expect("results serialise"))?;
    w("report.md", markdown(r))?;
    w("report.html", html(r, charts))?;
    if default {
        if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
            let link = parent.join("latest");
            let _ = std::fs::remove_file(&link);
            if let Err(e) = std::os::unix::fs::symlink(name, &link) {
                eprintln!("lab: could not update {}: {e}", link.display());
            }
        }
    }
    use std::io::Write as _;
    let mut o = std::io::stdout();
    for t in &r.tables {
        let _ = writeln!(o, "{}", report::terminal(&t.report()));
    }
    for t in &r.targets {
        let _ = writeln!(o, "target: {}: {} vs {}: {}", t.what, t.target, t.measured, met(t));
    }
    for n in &r.notes {
        let _ = writeln!(o, "note: {n}");
    }
    let _ = writeln!(o, "report: {}", dir.join("report.html").display());
    let _ = writeln!(o, "results: {}", dir.join("results.json").display());
    if r.status != "complete" {
        eprintln!("lab: {}: some workloads did not pass (see the tables)", r.status);
        return Ok(1);
    }
    Ok(0)
}

/// A progress line on stderr.
pub fn progress(i: usize, n: usize, what: &str, result: &str) {
    eprintln!("[{i}/{n}] {what}: {result}");
}

/// `f64` samples from a JSON array.
pub fn f64s(v: &Value) -> Vec<f64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
}

/// "mean ± ci (min … max), sd" with `digits` decimals.
pub fn jmh(s: &Summary, digits: usize) -> [String; 5] {
    let ci = s.ci999_half.map(|h| format!("± {h:.digits$}")).unwrap_or_else(|| "± n/a".into());
    [
        format!("{:.digits$}", s.mean),
        ci,
        format!("{:.digits$}", s.min),
        format!("{:.digits$}", s.max),
        format!("{:.digits$}", s.stddev),
    ]
}
