//! `echo-server` (issue 7): seed 003's `ab -n 10000 -c 25` against the echo server of
//! `crates/echo-server`, once per handoff variant, side by side in one run.
//!
//! Each cell is a child process (`lab __xcell`) that starts the server with one variant
//! (`inline`: no handoff, the event loop answers itself), runs the crate's ab-style load
//! generator against it on 127.0.0.1 (and, with `--ab`, the real `ab` against the same
//! server), shuts it down and returns the [`echo_server::loadgen::LoadReport`] (and ab's
//! summary). The load generator runs in the cell too, on its own thread: client and server
//! share the cell's process, as ab and ReactiveJ shared the seed's machine. `nginx` (one
//! worker, the same 1028-byte document) is a cell of its own, the reference.
//!
//! Rounds (`--runs`) are interleaved across the variants; the round with the median
//! requests/s is the one shown in full. A cell with failed requests is INVALID.
//! Trace children (flight recorder: the crate's `event_loop`, `wait`, `handle` spans and
//! `connections` counter) and dhat heap children (the `lab-heap` binary) run once per
//! variant, untimed.

use super::common::{self, Opts, XResults, XSpec, XTable};
use crate::variants::{self, Settings, WithHandoff};
use clap::Parser;
use echo_server::loadgen::{self, LoadConfig, LoadReport, PERCENTS};
use echo_server::{http, peers, ServerConfig, ServerHandle};
use handoff::Handoff;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

/// The seed's figure: ReactiveJ under `ab -n 10000 -c 25`.
const SEED_RPS: f64 = 8371.12;
const NAME: &str = "echo-server";

/// `lab run echo-server [options]`.
#[derive(Parser, Debug, Clone)]
#[command(name = "lab run echo-server", about = "Seed 003: ab -n 10000 -c 25 per variant")]
struct EArgs {
    /// The experiment (echo-server).
    experiment: String,
    /// Comma-separated variants; `inline` = no handoff.
    #[arg(long, default_value = "inline,locked,ring,reactive,naive")]
    variants: String,
    /// Requests per run (ab's -n).
    #[arg(short = 'n', long, default_value = "10000")]
    requests: u64,
    /// Requests in flight (ab's -c).
    #[arg(short = 'c', long, default_value = "25")]
    concurrency: usize,
    /// Reuse connections (ab's -k).
    #[arg(long)]
    keep_alive: bool,
    /// Rounds, interleaved across variants; the median is reported.
    #[arg(long, default_value = "3")]
    runs: usize,
    /// Also run the real ab: on|off|auto (auto: when ab is installed).
    #[arg(long, default_value = "auto")]
    ab: String,
    /// Measure nginx as the reference: on|off|auto (auto: when nginx is installed).
    #[arg(long, default_value = "auto")]
    nginx: String,
    /// The port the echo server listens on (127.0.0.1); 0 = an ephemeral port per cell.
    #[arg(long, default_value = "0")]
    port: u16,
    /// Worker threads behind the handoff.
    #[arg(long, default_value = "1")]
    workers: usize,
    /// The ring's wait strategy.
    #[arg(long, default_value = "blocking")]
    wait: String,
    /// Trace pass (a flight-recorder child per variant): flight|off.
    #[arg(long, default_value = "flight")]
    trace: String,
    /// Heap pass (a dhat child per variant, lab-heap binary): on|off.
    #[arg(long, default_value = "on")]
    heap: String,
    /// Output folder [default: traces/echo-server/<timestamp>/].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Watchdog limit per child process, seconds.
    #[arg(long, default_value = "180")]
    timeout: u64,
}

fn switch(what: &str, v: &str, installed: bool) -> Result<(bool, String), String> {
    match v {
        "on" if !installed => Err(format!("--{what} on: {what} is not installed")),
        "on" => Ok((true, format!("{what}: on (asked)"))),
        "off" => Ok((false, format!("{what}: off (asked)"))),
        "auto" if installed => Ok((true, format!("{what}: on (installed, auto)"))),
        "auto" => Ok((false, format!("{what} not installed: not measured"))),
        other => Err(format!("--{what} '{other}'; valid: on, off, auto")),
    }
}

fn valid_variants() -> Vec<String> {
    std::iter::once("inline".to_string())
        .chain(variants::all().into_iter().map(|v| v.name.to_string()))
        .collect()
}

/// Parses and checks the command line (`lab run echo-server …`).
fn parse(args: &[String]) -> Result<Option<EArgs>, String> {
    let rest: Vec<String> =
        std::iter::once("lab run".to_string()).chain(args.iter().skip(2).cloned()).collect();
    match EArgs::try_parse_from(&rest) {
        Ok(a) => Ok(Some(a)),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return Ok(None);
            }
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            Err(line.trim_start_matches("error: ").to_string())
        }
    }
}

fn settings(variant: &str, wait: &str) -> Settings {
    Settings {
        variant: variant.to_string(),
        wait: Some(wait.to_string()),
        ring_size: 1024,
        capacity: None,
        prefetch: 256,
    }
}

struct Start(ServerConfig);

impl WithHandoff for Start {
    type Out = Result<ServerHandle, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        echo_server::start(h, self.0).map_err(|e| e.to_string())
    }
}

/// One cell: start the server (or nginx), load it, maybe ab it, stop it.
fn run_cell(spec: &XSpec) -> Result<Value, String> {
    let variant = spec.param_str("variant")?;
    let port = spec.param_u64("port")? as u16;
    let load = LoadConfig {
        requests: spec.param_u64("requests")?,
        concurrency: spec.param_u64("concurrency")? as usize,
        keep_alive: spec.params["keep_alive"].as_bool().unwrap_or(false),
        ..LoadConfig::default()
    };
    let with_ab = spec.params["ab"].as_bool().unwrap_or(false);
    let measure = |addr: SocketAddr| -> Result<(LoadReport, Option<peers::AbSummary>), String> {
        let r = loadgen::run(addr, &load).map_err(|e| format!("load generator: {e}"))?;
        let ab = if with_ab {
            Some(
                peers::run_ab(addr, load.requests, load.concurrency, load.keep_alive)
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        Ok((r, ab))
    };
    if variant == "nginx" {
        let ng = peers::Nginx::start(0, http::document()).map_err(|e| e.to_string())?;
        let out = measure(ng.addr());
        ng.stop().map_err(|e| e.to_string())?;
        let (r, ab) = out?;
        let text = r.render_ab_style();
        return Ok(json!({"load": r, "ab_style": text, "ab": ab}));
    }
    let mut cfg = ServerConfig::on(SocketAddr::from(([127, 0, 0, 1], port)));
    cfg.workers = spec.param_u64("workers")? as usize;
    let server = if variant == "inline" {
        echo_server::start_inline(cfg).map_err(|e| e.to_string())?
    } else {
        variants::dispatch(&settings(variant, spec.param_str("wait")?), Start(cfg))??
    };
    let out = measure(server.addr());
    let stats = server.shutdown();
    let (r, ab) = out?;
    let text = r.render_ab_style();
    Ok(json!({"load": r, "ab_style": text, "ab": ab, "server": stats}))
}

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    common::with_trace(spec, || run_cell(spec))
}

/// Runs in the `lab-heap` binary, whose global allocator is `dhat::Alloc`.
pub fn heap_cell(spec: &XSpec) -> Result<Value, String> {
    common::with_heap(spec, || run_cell(spec))
}

fn heap_binary() -> Result<PathBuf, String> {
    let p = common::lab_exe()?.with_file_name("lab-heap");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} is missing: build it with `cargo build -p lab --bins` (or run with --heap off)",
            p.display()
        ))
    }
}

fn median_index(v: &[f64]) -> usize {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    idx[(idx.len() - 1) / 2]
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

/// `lab run echo-server …` / `lab echo-server …`.
pub fn run(args: &[String]) -> Result<i32, String> {
    let Some(a) = parse(args)? else { return Ok(0) };
    let valid = valid_variants();
    let list: Vec<String> = a.variants.split(',').map(|s| s.trim().to_string()).collect();
    for v in &list {
        if !valid.contains(v) {
            return Err(format!("unknown variant '{v}'; valid: {}", valid.join(", ")));
        }
    }
    if list.is_empty() || list.iter().any(String::is_empty) {
        return Err(format!("--variants is empty; valid: {}", valid.join(", ")));
    }
    variants::check_wait(&a.wait)?;
    if a.requests == 0 || a.concurrency == 0 || a.runs == 0 {
        return Err("--requests, --concurrency and --runs must be at least 1".into());
    }
    if a.concurrency as u64 > a.requests {
        return Err(format!(
            "--concurrency {} is more than --requests {} (ab refuses this too)",
            a.concurrency, a.requests
        ));
    }
    if a.port != 0 {
        if let Err(e) = TcpListener::bind(("127.0.0.1", a.port)) {
            return Err(format!(
                "port {} on 127.0.0.1 is not free ({e}); choose another or --port 0",
                a.port
            ));
        }
    }
    let (with_ab, ab_note) = switch("ab", &a.ab, peers::ab_available())?;
    let (with_nginx, nginx_note) = switch("nginx", &a.nginx, peers::nginx_available())?;
    let (trace, heap) = common::trace_heap_flags(&a.trace, &a.heap)?;
    let heap_bin = if heap { Some(heap_binary()?) } else { None };
    let opts = Opts {
        experiment: NAME.into(),
        elements: Some(a.requests),
        runs: a.runs,
        warmup: 0,
        rounds: None,
        out: a.out.clone(),
        trace,
        heap,
        timeout: Duration::from_secs(a.timeout.max(1)),
    };
    let (dir, default) = common::run_dir(&opts)?;
    let exe = common::lab_exe()?;
    let mut targets = list.clone();
    if with_nginx {
        targets.push("nginx".into());
    }
    let spec = |t: &str, ab: bool| XSpec {
        experiment: NAME.into(),
        workload: t.to_string(),
        elements: a.requests,
        warmup: 0,
        runs: 1,
        params: json!({"variant": t, "port": if t == "nginx" { 0 } else { a.port },
                       "requests": a.requests, "concurrency": a.concurrency,
                       "keep_alive": a.keep_alive, "ab": ab, "workers": a.workers,
                       "wait": a.wait}),
        trace_file: None,
        heap_file: None,
    };
    // results[target] = one Value per round (Ok) or the error.
    let mut rounds: Vec<Vec<Value>> = vec![Vec::new(); targets.len()];
    let mut errors: Vec<Option<String>> = vec![None; targets.len()];
    let total = a.runs * targets.len();
    let mut k = 0;
    for round in 0..a.runs {
        for (i, t) in targets.iter().enumerate() {
            k += 1;
            if errors[i].is_some() {
                continue;
            }
            match common::run_child(&exe, "__xcell", &spec(t, with_ab), opts.timeout) {
                Ok(v) => {
                    let l = &v["load"];
                    let failed = l["failed_requests"].as_u64().unwrap_or(u64::MAX);
                    let ab_failed = v["ab"]["failed_requests"].as_u64().unwrap_or(0)
                        + v["ab"]["non_2xx_responses"].as_u64().unwrap_or(0);
                    common::progress(
                        k,
                        total,
                        &format!("round {} {t}", round + 1),
                        &format!(
                            "{:.0} req/s, {failed} failed{}",
                            f(l, "requests_per_second"),
                            if with_ab {
                                format!(" | ab {:.0} req/s", f(&v["ab"], "requests_per_second"))
                            } else {
                                String::new()
                            }
                        ),
                    );
                    if failed > 0 || ab_failed > 0 {
                        errors[i] = Some(format!(
                            "{failed} failed requests (load generator), {ab_failed} failed or \
                             non-2xx (ab) in round {}",
                            round + 1
                        ));
                    }
                    rounds[i].push(v);
                }
                Err(e) => {
                    common::progress(k, total, &format!("round {} {t}", round + 1), &e);
                    errors[i] = Some(e);
                }
            }
        }
    }
    // Median round per target.
    let med: Vec<Option<usize>> = rounds
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if errors[i].is_some() || r.is_empty() {
                return None;
            }
            let rps: Vec<f64> = r.iter().map(|v| f(&v["load"], "requests_per_second")).collect();
            Some(median_index(&rps))
        })
        .collect();
    let nginx_rps = targets
        .iter()
        .position(|t| t == "nginx")
        .and_then(|i| med[i].map(|m| f(&rounds[i][m]["load"], "requests_per_second")));
    let nginx_ab = targets.iter().position(|t| t == "nginx").and_then(|i| {
        med[i].and_then(|_| {
            let mut v: Vec<f64> =
                rounds[i].iter().map(|r| f(&r["ab"], "requests_per_second")).collect();
            v.retain(|x| x.is_finite());
            (!v.is_empty()).then(|| v[median_index(&v)])
        })
    });
    let pct = |x: f64, of: Option<f64>| match of {
        Some(n) if n > 0.0 => format!("{:.0}%", 100.0 * x / n),
        _ => "nginx not measured".to_string(),
    };
    let mut head = vec![
        "variant",
        "requests/s (median)",
        "× seed 8,371",
        "% of nginx",
        "ms/request (mean)",
        "ms/request (all concurrent)",
        "transfer KB/s",
        "failed",
        "rounds req/s",
    ];
    if with_ab {
        head.extend(["ab requests/s (median)", "ab % of nginx", "ab 99% ms"]);
    }
    let mut main = XTable::new(
        &format!(
            "Seed 003: -n {} -c {}{} on 127.0.0.1, median of {} rounds (load generator)",
            a.requests,
            a.concurrency,
            if a.keep_alive { " -k" } else { "" },
            a.runs
        ),
        &head,
    );
    main.note = Some(format!(
        "Seed: ReactiveJ 8,371.12 req/s (ab -n 10000 -c 25, another machine over a LAN). {ab_note}; \
         {nginx_note}."
    ));
    let mut conn = XTable::new(
        "Connection times (ms), median round",
        &["variant", "phase", "min", "mean", "[+/-sd]", "median", "max"],
    );
    let mut phead = vec!["variant".to_string()];
    phead.extend(PERCENTS.iter().map(|p| format!("{p}%")));
    let mut ptab = XTable::new(
        "Percentage of the requests served within a certain time (ms), median round",
        &phead.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut rows = Vec::new();
    let mut invalid = false;
    let mut best: Option<(f64, String, String)> = None;
    for (i, t) in targets.iter().enumerate() {
        let all_rps: Vec<String> = rounds[i]
            .iter()
            .map(|v| format!("{:.0}", f(&v["load"], "requests_per_second")))
            .collect();
        let Some(m) = med[i] else {
            invalid = true;
            let e = errors[i].clone().unwrap_or_else(|| "no result".into());
            main.rows.push(vec![t.clone(), format!("INVALID: {e}")]);
            rows.push(json!({"variant": t, "status": "invalid", "error": e,
                             "rounds": rounds[i]}));
            continue;
        };
        let l = &rounds[i][m]["load"];
        let rps = f(l, "requests_per_second");
        let mut row = vec![
            t.clone(),
            format!("{rps:.0}"),
            format!("{:.2}", rps / SEED_RPS),
            if t == "nginx" { "100%".into() } else { pct(rps, nginx_rps) },
            format!("{:.3}", f(l, "time_per_request_ms")),
            format!("{:.3}", f(l, "time_per_request_all_ms")),
            format!("{:.0}", f(l, "transfer_rate_kbytes_s")),
            l["failed_requests"].to_string(),
            all_rps.join(", "),
        ];
        if with_ab {
            let v: Vec<f64> =
                rounds[i].iter().map(|r| f(&r["ab"], "requests_per_second")).collect();
            let mi = median_index(&v);
            let ab = &rounds[i][mi]["ab"];
            let arps = v[mi];
            row.push(format!("{arps:.0}"));
            row.push(if t == "nginx" { "100%".into() } else { pct(arps, nginx_ab) });
            row.push(ab["p99_ms"].to_string());
        }
        main.rows.push(row);
        for phase in ["connect", "processing", "waiting", "total"] {
            let s = &l["connection_times"][phase];
            conn.rows.push(vec![
                t.clone(),
                phase.to_string(),
                format!("{:.3}", f(s, "min_ms")),
                format!("{:.3}", f(s, "mean_ms")),
                format!("{:.3}", f(s, "sd_ms")),
                format!("{:.3}", f(s, "median_ms")),
                format!("{:.3}", f(s, "max_ms")),
            ]);
        }
        let mut prow = vec![t.clone()];
        let pcts = l["percentiles"].as_array().cloned().unwrap_or_default();
        for p in PERCENTS {
            let ms = pcts.iter().find(|x| x["percent"].as_u64() == Some(p as u64));
            prow.push(ms.map(|x| format!("{:.3}", f(x, "ms"))).unwrap_or_else(|| "-".into()));
        }
        ptab.rows.push(prow);
        if t != "nginx" && best.as_ref().is_none_or(|b| rps > b.0) {
            let text = rounds[i][m]["ab_style"].as_str().unwrap_or("").to_string();
            best = Some((rps, t.clone(), text));
        }
        rows.push(json!({"variant": t, "status": "ok", "median_round": m,
                         "requests_per_second": rps, "rounds": rounds[i]}));
    }
    // Trace and heap children, one per variant (not nginx: another process).
    let mut files = Vec::new();
    let mut notes = vec![ab_note.clone(), nginx_note.clone()];
    for (i, t) in list.iter().enumerate() {
        if trace {
            let file = format!("{t}.trace.json");
            let path = dir.join(&file);
            let mut s = spec(t, false);
            s.workload = format!("trace {t}");
            s.trace_file = Some(path.display().to_string());
            match common::run_child(&exe, "__xcell", &s, opts.timeout) {
                Ok(v) if path.is_file() => {
                    files.push(file.clone());
                    rows[i]["trace_file"] = json!(file);
                    notes.push(format!("trace {t}: {}", v["trace_note"].as_str().unwrap_or("")));
                }
                Ok(_) => notes.push(format!("trace {t}: the child wrote no trace file")),
                Err(e) => notes.push(format!("trace {t}: {e}")),
            }
        }
        if let Some(bin) = &heap_bin {
            let file = format!("{t}.dhat-heap.json");
            let path = dir.join(&file);
            let mut s = spec(t, false);
            s.workload = format!("heap {t}");
            s.heap_file = Some(path.display().to_string());
            match common::run_child(bin, "", &s, opts.timeout) {
                Ok(v) if path.is_file() => {
                    files.push(file.clone());
                    rows[i]["heap_file"] = json!(file);
                    rows[i]["heap"] = json!({"total_blocks": v["total_blocks"],
                        "total_bytes": v["total_bytes"], "max_bytes": v["max_bytes"],
                        "max_blocks": v["max_blocks"]});
                    notes.push(format!(
                        "heap {t}: {} blocks ({:.2} per request), peak {} bytes live \
                         (server and load generator together, one process)",
                        v["total_blocks"],
                        f(&v, "total_blocks") / a.requests as f64,
                        v["max_bytes"]
                    ));
                }
                Ok(_) => notes.push(format!("heap {t}: the child wrote no heap file")),
                Err(e) => notes.push(format!("heap {t}: {e}")),
            }
        }
    }
    let mut env = common::environment(
        &opts,
        a.requests,
        if trace { "flight: a trace child per variant (untimed)" } else { "off" },
        if heap { "dhat in lab-heap, a child per variant (untimed)" } else { "off" },
    );
    env.warmup_runs = 0;
    env.measured_runs = a.runs;
    let ab_text = best.as_ref().map(|b| b.2.clone()).unwrap_or_default();
    let best_name = best.as_ref().map(|b| b.1.clone()).unwrap_or_default();
    let r = XResults {
        experiment: NAME.into(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"variants": list, "requests": a.requests, "concurrency": a.concurrency,
                       "keep_alive": a.keep_alive, "runs": a.runs, "ab": with_ab,
                       "nginx": with_nginx, "port": a.port, "workers": a.workers,
                       "ring_wait": a.wait, "ring_size": 1024, "reactive_prefetch": 256,
                       "locked_capacity": "unbounded", "trace": trace, "heap": heap,
                       "seed_requests_per_second": SEED_RPS, "best_variant": best_name,
                       "best_ab_style": ab_text, "timeout_s": opts.timeout.as_secs()}),
        rows,
        tables: vec![main, conn, ptab],
        targets: Vec::new(),
        files,
        method: vec![
            "Each cell is a child process: it starts the echo server with the variant \
             (inline = the event loop answers, no handoff) on 127.0.0.1, runs the lab's \
             load generator (echo_server::loadgen, ab's model on one mio thread) in the \
             same process, then ab when on, then shuts the server down."
                .into(),
            "Rounds are interleaved across the variants (round 1 of every variant, then round \
             2 …); the round with the median requests/s is shown in the tables."
                .into(),
            "A cell with failed requests (load generator or ab, or non-2xx from ab) is INVALID."
                .into(),
            "nginx: one worker serving the same 1028-byte document, started by the cell.".into(),
            "Trace and heap children run once per variant, untimed; the heap figures include \
             the load generator's allocations (it runs in the same process)."
                .into(),
            "The seed measured over a LAN on another machine; here client and server share \
             the machine and loopback, so × seed compares setups, not only servers."
                .into(),
        ],
        notes,
    };
    let pre = if ab_text.is_empty() {
        String::new()
    } else {
        format!(
            "<h2>ab-style report of the fastest variant ({}), median round</h2>\n<pre>{}</pre>\n",
            crate::report::html_escape(&best_name),
            crate::report::html_escape(&ab_text)
        )
    };
    let code = common::finish(&dir, default, &r, &pre)?;
    if !ab_text.is_empty() {
        let md = dir.join("report.md");
        let mut s = std::fs::read_to_string(&md).unwrap_or_default();
        let _ = write!(
            s,
            "\n## ab-style report of the fastest variant ({best_name}), median round\n\n\
             ```text\n{ab_text}\n```\n"
        );
        std::fs::write(&md, s).map_err(|e| format!("cannot write {}: {e}", md.display()))?;
        println!("fastest variant ({best_name}), ab-style:\n{ab_text}");
    }
    Ok(code)
}
