//! `echo-server`'s analysis: each row's details from its forks and passes, and the tables.
//!
//! The connection-time, percentile and server tables show one run per row: the median run
//! of the fork whose score is the row's median (the lower middle for an even count), so a
//! row's tables come from one real run rather than a blend of several.

use super::detail::{detail, EchoDetail, EchoHeap};
use super::{EchoArgs, EchoOutcome, EchoRun, EchoServer, Load, SEED_RPS};
use crate::analysis::pairing::paired_ratios;
use crate::experiment::{CellRecord, Finished, ForkRecord};
use crate::report::write_atomic;
use crate::results::{Chart, FileLink, Ratio, Results, Row, Status, Table};
use crate::stats::median;
use crate::units::group;
use echo_server::loadgen::PERCENTS;

/// The lower-middle element of `items` by `key`.
fn median_by<T>(items: &[T], key: impl Fn(&T) -> f64) -> Option<&T> {
    let mut v: Vec<&T> = items.iter().collect();
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    let i = v.len().checked_sub(1)? / 2;
    v.get(i).copied()
}

/// The fork with the row's median score, and its median measured run.
fn median_run(rec: &CellRecord<EchoServer>) -> Option<(&ForkRecord<EchoOutcome>, &EchoRun)> {
    let ok: Vec<&ForkRecord<EchoOutcome>> = rec
        .forks
        .iter()
        .filter(|f| f.fork.status == Status::Ok && f.fork.score.is_some() && f.outcome.is_some())
        .collect();
    let fork = *median_by(&ok, |f| f.fork.score.unwrap_or(f64::NAN))?;
    let o = fork.outcome.as_ref()?;
    let run = median_by(&o.runs, |r| r.load.requests_per_second)?;
    Some((fork, run))
}

/// The median over forks of each fork's median ab requests/s.
fn ab_median(rec: &CellRecord<EchoServer>) -> Option<f64> {
    let per_fork: Vec<f64> = rec
        .outcomes()
        .filter_map(|o| {
            let v: Vec<f64> = o
                .runs
                .iter()
                .filter_map(|r| r.ab.as_ref())
                .map(|a| a.requests_per_second)
                .collect();
            median(&v)
        })
        .collect();
    median(&per_fork)
}

fn fill_row(row: &mut Row, rec: &CellRecord<EchoServer>) {
    let failed_requests: u64 = rec
        .forks
        .iter()
        .filter_map(|f| f.outcome.as_ref())
        .flat_map(|o| o.warmup.iter().chain(&o.runs))
        .map(|r| r.load.failed_requests)
        .sum();
    let mut d = EchoDetail { failed_requests, ..Default::default() };
    if let Some((fork, run)) = median_run(rec) {
        d.median_round = Some(fork.fork.round);
        d.load = Some(run.load.clone());
        d.ab_style = Some(run.ab_style.clone());
        d.ab = run.ab.clone();
        d.server = fork.outcome.as_ref().and_then(|o| o.server.clone());
        d.server_cpu_us_per_request = d.server.as_ref().and_then(|s| {
            let ms = s.server_cpu_ms?;
            (s.requests_served > 0).then(|| ms * 1e3 / s.requests_served as f64)
        });
        if let Some(o) = fork.outcome.as_ref() {
            d.jvm = o.jvm.clone();
            d.gc_pct_of_run = o.jvm.as_ref().and_then(|j| {
                let gc: f64 = j.runs.iter().map(|r| r.gc_ms).sum();
                let ms: f64 = o.runs.iter().map(|r| r.load.time_taken_s * 1e3).sum();
                (ms > 0.0).then(|| 100.0 * gc / ms)
            });
        }
    }
    d.ab_requests_per_second = ab_median(rec);
    if let Some(p) = &rec.heap {
        d.heap_file = p.file_written.then(|| p.file.clone());
        if let (Some(h), Ok(o)) = (p.heap, &p.result) {
            let requests = rec.plan.cell.requests;
            d.heap = Some(EchoHeap {
                total_blocks: h.total_blocks,
                total_bytes: h.total_bytes,
                max_bytes: h.max_bytes,
                max_blocks: h.max_blocks,
                blocks_per_request: h.total_blocks as f64 / requests as f64,
                requests,
                check: crate::experiment::Outcome::failure(o).unwrap_or_else(|| "ok".into()),
            });
        }
    }
    d.trace = rec.trace.as_ref().filter(|p| p.file_written).map(|p| p.file.clone());
    row.set_detail(&d);
}

pub(super) fn analyse(a: &EchoArgs, run: &Finished<EchoServer>, out: &mut Results) {
    for (row, rec) in out.results.iter_mut().zip(&run.cells) {
        fill_row(row, rec);
    }
    let with_ab = out.config["plan"]["ab"].as_bool().unwrap_or(false);
    let has_nginx = out.results.iter().any(|r| r.label == "nginx");
    let baseline = out.ratios.first().map(|r| r.baseline.clone());
    // Against nginx, paired within rounds like the baseline's ratios.
    let vs_nginx = match (has_nginx, baseline.as_deref()) {
        (false, _) => Vec::new(),
        (true, Some("nginx")) => out.ratios.clone(),
        (true, _) => paired_ratios(&out.results, "nginx"),
    };
    // Against each JVM server of the run, paired the same way.
    let vs_jvm: Vec<(&str, Vec<Ratio>)> = super::jvm::SERVERS
        .iter()
        .map(|s| s.0)
        .filter(|l| out.results.iter().any(|x| x.label == *l) && baseline.as_deref() != Some(*l))
        .map(|l| (l, paired_ratios(&out.results, l)))
        .collect();
    out.tables.push(main_table(a, out, baseline.as_deref(), &vs_nginx, &vs_jvm, with_ab));
    // Kept beside the baseline's, so `lab compare` judges them too; against a JVM server,
    // the Rust rows' (the question of seed 003's port).
    if baseline.as_deref() != Some("nginx") {
        out.ratios.extend(vs_nginx);
    }
    for (_, qs) in vs_jvm {
        out.ratios.extend(qs.into_iter().filter(|q| is_rust(&q.variant)));
    }
    out.tables.push(connection_table(out));
    out.tables.push(percentile_table(out));
    out.tables.push(server_table(out));
    out.tables.extend(jvm_table(out));
    out.tables.extend(heap_table(out));
    out.tables.extend(crate::analysis::failure_table(out, &["server"], |x| vec![x.label.clone()]));
    files_and_notes(run, out);
    out.method.extend(method_lines(a, with_ab));
    if out.results.iter().any(|x| super::jvm::is_jvm(&x.label)) {
        let gc = crate::measure::jvm::GCS.iter().find(|g| g.0 == a.jvm_gc).map_or("", |g| g.1);
        out.method.push(format!(
            "JVM servers: --jvm-gc {} ({gc}; the heap is 256 MiB here), more flags: {}; each \
             row's flags are in the JVM table. The fork brackets each load-generator run with \
             run_start/run_end commands on the server's stdin; GC counts and perf counters on \
             the java process's threads are read between the server's marks.",
            a.jvm_gc,
            if a.jvm_flags.is_empty() { "none" } else { &a.jvm_flags }
        ));
    }
    out.why = super::why::section(out);
    out.reasons = super::why::reasons(out);
    out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
    out.charts.extend(main_chart(out));
}

/// Requests/s per server (the median over forks, the interval of that median as its bar),
/// the seed's ReactiveJ figure beside each.
pub(super) fn main_chart(r: &Results) -> Option<Chart> {
    let titles =
        ("Requests/s by server (bars: interval of the median over forks)", "server", "requests/s");
    let (mut c, cats) = crate::analysis::charts::score_chart(r, titles, |x| {
        Some(("this run".into(), x.label.clone()))
    })?;
    let seed: Vec<(String, f64)> = c.x_names.iter().map(|(_, n)| (n.clone(), SEED_RPS)).collect();
    crate::analysis::charts::add_reference(
        &mut c,
        &cats,
        "seed 003 (ReactiveJ, ab over a LAN)",
        &seed,
    );
    Some(c)
}

fn files_and_notes(run: &Finished<EchoServer>, out: &mut Results) {
    for rec in &run.cells {
        let l = &rec.plan.label;
        for (pass, r, what) in [
            ("heap", &rec.heap, "dhat heap profile (dh_view)"),
            ("trace", &rec.trace, "Chrome trace: event_loop, wait, handle spans (Perfetto)"),
        ] {
            let Some(r) = r else { continue };
            if r.file_written {
                out.files.push(FileLink { file: r.file.clone(), what: format!("{what}: {l}") });
            }
            match &r.result {
                Err(e) => out.notes.push(format!("{pass} {l}: {e}")),
                Ok(o) => {
                    if let Some(why) = crate::experiment::Outcome::failure(o) {
                        out.notes.push(format!("{pass} {l}: its run failed a check: {why}"));
                    }
                }
            }
            if let Some(n) = &r.note {
                out.notes.push(format!("{pass} {l}: {n}"));
            }
        }
    }
    // The fastest echo-server row's median run as ab prints it, beside the tables.
    let fastest = out
        .results
        .iter()
        .filter(|r| r.status == Status::Ok && r.label != "nginx")
        .filter_map(|r| Some((r, detail(r).ab_style?)))
        .max_by(|(x, _), (y, _)| x.score.unwrap_or(0.0).total_cmp(&y.score.unwrap_or(0.0)));
    if let Some((r, text)) = fastest {
        let file = format!("{}.ab-style.txt", r.label);
        match write_atomic(&run.dir, &file, text.as_bytes()) {
            Ok(()) => out.files.push(FileLink {
                file,
                what: format!(
                    "the fastest server ({}), its median run as ab prints it (load generator)",
                    r.label
                ),
            }),
            Err(e) => out.notes.push(format!("the ab-style report was not written: {e}")),
        }
    }
}

/// "HUNG: why", without repeating a status word the error already starts with.
fn status_text(x: &Row) -> String {
    let word = x.status.word();
    match x.error.as_deref() {
        Some(e) if e.starts_with(word) => e.to_string(),
        Some(e) => format!("{word}: {e}"),
        None => word.to_string(),
    }
}

/// Whether a row is one of the Rust echo server's (not nginx, not a JVM server).
pub(super) fn is_rust(label: &str) -> bool {
    label != "nginx" && !super::jvm::is_jvm(label)
}

fn ratio_of<'a>(ratios: &'a [Ratio], label: &str) -> Option<&'a Ratio> {
    ratios.iter().find(|r| r.variant == label)
}

fn load_of(r: &Row) -> Option<Load> {
    detail(r).load
}

fn main_table(
    a: &EchoArgs,
    r: &Results,
    baseline: Option<&str>,
    vs_nginx: &[Ratio],
    vs_jvm: &[(&str, Vec<Ratio>)],
    with_ab: bool,
) -> Table {
    let has_nginx = !vs_nginx.is_empty() || r.results.iter().any(|x| x.label == "nginx");
    let b = baseline.unwrap_or("baseline");
    let mut head = vec![
        "server".to_string(),
        "requests/s (median over forks) [interval]".into(),
        format!("vs {b} (paired) [interval]"),
    ];
    if has_nginx && baseline != Some("nginx") {
        head.push("vs nginx (paired) [interval]".into());
    }
    head.extend(vs_jvm.iter().map(|(l, _)| format!("vs {l} (paired) [interval]")));
    head.extend(
        [
            "× seed 8,371",
            "ms/request (mean)",
            "ms/request (across all)",
            "transfer KB/s",
            "failed",
            "forks req/s (by round)",
        ]
        .map(String::from),
    );
    if with_ab {
        head.extend(["ab requests/s (median)", "ab 99% ms"].map(String::from));
    }
    let nginx_ab = r
        .results
        .iter()
        .find(|x| x.label == "nginx")
        .and_then(|x| detail(x).ab_requests_per_second);
    let mut t = Table {
        title: format!(
            "Seed 003's load: -n {} -c {}{} on 127.0.0.1, the load generator's requests/s",
            a.requests,
            a.concurrency,
            if a.keep_alive { " -k" } else { "" }
        ),
        header: head.clone(),
        rows: Vec::new(),
        note: None,
        headline: true,
    };
    for x in &r.results {
        let mut row = vec![x.label.clone()];
        if x.status != Status::Ok {
            row.push(status_text(x));
            row.resize(head.len(), "–".into());
            t.rows.push(row);
            continue;
        }
        let Some(score) = x.score else { continue };
        row.push(match x.score_ci {
            Some([lo, hi]) => format!("{} [{}, {}]", group(score), group(lo), group(hi)),
            None => format!("{} [–]", group(score)),
        });
        row.push(match ratio_of(&r.ratios, &x.label) {
            Some(q) => q.text(),
            None if Some(x.label.as_str()) == baseline => "baseline".into(),
            None => "–".into(),
        });
        if has_nginx && baseline != Some("nginx") {
            row.push(match ratio_of(vs_nginx, &x.label) {
                Some(q) => q.text(),
                None if x.label == "nginx" => "reference".into(),
                None => "–".into(),
            });
        }
        for (l, qs) in vs_jvm {
            row.push(match ratio_of(qs, &x.label) {
                Some(q) => q.text(),
                None if x.label == *l => "reference".into(),
                None => "–".into(),
            });
        }
        let d = detail(x);
        let l = d.load.clone().unwrap_or_default();
        let forks: Vec<String> =
            x.forks.iter().map(|f| f.score.map_or("–".into(), |s| format!("{s:.0}"))).collect();
        row.extend([
            format!("{:.2}×", score / SEED_RPS),
            format!("{:.3}", l.time_per_request_ms),
            format!("{:.3}", l.time_per_request_all_ms),
            format!("{:.0}", l.transfer_rate_kbytes_s),
            d.failed_requests.to_string(),
            forks.join(", "),
        ]);
        if with_ab {
            let ab = d.ab_requests_per_second;
            let pct = match (ab, nginx_ab) {
                (Some(v), Some(n)) if n > 0.0 && x.label != "nginx" => {
                    format!(" ({:.0}% of nginx)", 100.0 * v / n)
                }
                _ => String::new(),
            };
            row.push(ab.map_or("–".into(), |v| format!("{v:.0}{pct}")));
            let ab99 = d.ab.as_ref().map(|a| a.p99_ms);
            row.push(ab99.map_or("–".into(), |p| p.to_string()));
        }
        t.rows.push(row);
    }
    t.note = Some(
        "Seed: ReactiveJ 8,371.12 req/s (ab -n 10000 -c 25 from another machine over a LAN). A \
         ratio is the row's requests/s over the other's, taken within each round and \
         summarised as the median over rounds with its repeat interval (where the next run's median falls, 99%); > 1 means \
         the row serves more. ms/request and transfer are the median run's (see the tables \
         below)."
            .into(),
    );
    t
}

fn ok_rows(r: &Results) -> impl Iterator<Item = (&Row, Load)> {
    r.results.iter().filter(|x| x.status == Status::Ok).filter_map(|x| Some((x, load_of(x)?)))
}

fn connection_table(r: &Results) -> Table {
    let mut t = Table::new(
        "Connection times (ms), each server's median run",
        &["server", "phase", "min", "mean", "[+/-sd]", "median", "max"],
    );
    for (x, l) in ok_rows(r) {
        let c = &l.connection_times;
        for (phase, s) in [
            ("connect", &c.connect),
            ("processing", &c.processing),
            ("waiting", &c.waiting),
            ("total", &c.total),
        ] {
            t.rows.push(vec![
                x.label.clone(),
                phase.to_string(),
                format!("{:.3}", s.min_ms),
                format!("{:.3}", s.mean_ms),
                format!("{:.3}", s.sd_ms),
                format!("{:.3}", s.median_ms),
                format!("{:.3}", s.max_ms),
            ]);
        }
    }
    t
}

fn percentile_table(r: &Results) -> Table {
    let mut head = vec!["server".to_string()];
    head.extend(PERCENTS.iter().map(|p| format!("{p}%")));
    let mut t = Table {
        title: "Percentage of the requests served within a certain time (ms), each server's \
                median run"
            .into(),
        header: head,
        rows: Vec::new(),
        note: None,
        headline: false,
    };
    for (x, l) in ok_rows(r) {
        let mut row = vec![x.label.clone()];
        for p in PERCENTS {
            let ms = l.percentiles.iter().find(|q| q.percent == p);
            row.push(ms.map_or("–".into(), |q| format!("{:.3}", q.ms)));
        }
        t.rows.push(row);
    }
    t
}

fn server_table(r: &Results) -> Table {
    let mut t = Table::new(
        "The echo server's account of its median fork (warm-up and measured runs together)",
        &[
            "server",
            "200s written",
            "connections",
            "event-loop passes",
            "passes/request",
            "partial writes",
            "handled by workers",
            "errors",
            "server threads CPU µs/request",
        ],
    );
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let d = detail(x);
        let Some(s) = d.server else { continue };
        let counted = |field: &str, v: String| {
            if s.not_counted.iter().any(|f| f == field) {
                "–".to_string()
            } else {
                v
            }
        };
        let per = s.event_loop_iterations as f64 / s.requests_served.max(1) as f64;
        t.rows.push(vec![
            x.label.clone(),
            s.requests_served.to_string(),
            s.connections_accepted.to_string(),
            counted("event_loop_iterations", s.event_loop_iterations.to_string()),
            counted("event_loop_iterations", format!("{per:.2}")),
            counted("partial_writes", s.partial_writes.to_string()),
            s.worker_handled.to_string(),
            s.errors.to_string(),
            d.server_cpu_us_per_request.map_or("–".into(), |v| format!("{v:.1}")),
        ]);
    }
    t.note = Some(
        "Connection errors count resets and broken pipes, not clients closing normally; \
         nginx keeps its own account. Event-loop passes: the Rust event loop's polls, \
         java-nio's select() calls; Netty does not count them (–). Server threads CPU: \
         time on CPU of the threads named echo-* (the Rust event loop and workers, the Java \
         selector, Netty's boss and worker; /proc schedstat) over the whole fork, ab's \
         requests included, per request served."
            .into(),
    );
    t
}

fn per_request_us(c: &crate::profile::counters::Values) -> String {
    c.get("task-clock").copied().flatten().map_or("–".into(), |ns| format!("{:.1}", ns / 1e3))
}

/// The JVM servers' evidence, each one's median fork: flags, GC, and CPU per request by
/// thread from perf counters on the java process during the median measured run.
fn jvm_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "JVM servers (median fork): flags, GC over the measured runs, task-clock per request \
         by thread (perf, between each run's marks)",
        &[
            "server",
            "JVM flags",
            "collectors",
            "GC collections/run",
            "GC ms/run",
            "GC % of run",
            "process µs/request",
            "echo-* threads µs/request",
            "GC threads µs/request",
            "JIT µs/request",
        ],
    );
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let d = detail(x);
        let Some(j) = &d.jvm else { continue };
        let runs = j.runs.len().max(1) as f64;
        let gc_count: u64 = j.runs.iter().map(|r| r.gc_count).sum();
        let gc_ms: f64 = j.runs.iter().map(|r| r.gc_ms).sum();
        let collectors: Vec<&str> =
            j.jvm["gc"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
        let c = j.runs.get(j.runs.len().saturating_sub(1) / 2).and_then(|r| r.counters.clone());
        let by = |pred: &dyn Fn(&str) -> bool| -> String {
            let Some(c) = &c else { return "–".into() };
            let ns: Option<f64> = c
                .threads
                .iter()
                .filter(|(k, _)| pred(k))
                .map(|(_, v)| v.get("task-clock").copied().flatten())
                .sum();
            ns.map_or("–".into(), |v| format!("{:.1}", v / 1e3 + 0.0))
        };
        t.rows.push(vec![
            x.label.clone(),
            j.flags.clone(),
            collectors.join(", "),
            format!("{:.1}", gc_count as f64 / runs),
            format!("{:.1}", gc_ms / runs),
            d.gc_pct_of_run.map_or("–".into(), |p| format!("{p:.2}")),
            c.as_ref().map_or("–".into(), |c| per_request_us(&c.process)),
            by(&|k: &str| k.starts_with("echo-")),
            by(&|k: &str| k == "GC threads"),
            by(&|k: &str| k == "JIT compiler threads"),
        ]);
    }
    t.note = Some(
        "Each fork runs its own JVM (java FLAGS -cp … NioEcho|NettyEcho); the collector is \
         --jvm-gc's, the heap fixed at 256 MiB and pre-touched. The counters cover the java \
         process only (the load generator runs in the fork), from each run's run_start mark \
         to its run_end."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

fn heap_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Heap (dhat, a separate untimed run per server)",
        &[
            "server",
            "requests",
            "allocations",
            "bytes allocated",
            "peak live bytes",
            "allocations/request",
            "check",
        ],
    );
    for x in &r.results {
        let Some(h) = detail(x).heap else { continue };
        t.rows.push(vec![
            x.label.clone(),
            h.requests.to_string(),
            h.total_blocks.to_string(),
            h.total_bytes.to_string(),
            h.max_bytes.to_string(),
            format!("{:.2}", h.blocks_per_request),
            h.check,
        ]);
    }
    t.note = Some(
        "One run without ab under dhat::Profiler: the server and the load generator share \
         the process, so the figures are both together (setup included)."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

fn method_lines(a: &EchoArgs, with_ab: bool) -> Vec<String> {
    vec![
        format!(
            "Each fork starts one server on 127.0.0.1: the echo server with the variant behind \
             its event loop ({} worker(s); inline = the event loop answers, no handoff; the \
             ring waits with the {} strategy, 1024 slots; the reactive pipeline prefetches \
             256; the locked queue is unbounded), a JVM server (java-nio: one java.nio \
             Selector thread accepting, reading and writing, seed 003's reactor; netty: Netty \
             4.2 with one boss and one worker NioEventLoopGroup thread and HttpServerCodec; \
             both a child JVM answering with the Rust server's bytes) or nginx. It runs the lab's load generator \
             (echo_server::loadgen, ab's model on one mio thread) in the same process{}, then \
             shuts the server down.",
            a.workers,
            a.wait,
            if with_ab { ", then the real ab against the same server after each run" } else { "" }
        ),
        "A run's score is the load generator's requests/s: complete requests over the time \
         from the first connect to the last completion."
            .into(),
        "A run with a failed request, fewer complete requests than asked, a document other \
         than the 1028 bytes served, or a non-2xx response (from the load generator or ab) is \
         INVALID, and so is a fork whose event loop stopped on an error."
            .into(),
        "ab and nginx run as children of the fork, in its process group: the watchdog and \
         Ctrl-C kill them with it. nginx runs one process (master_process off) serving the \
         same document."
            .into(),
        "The trace and heap passes run once per echo-server row, untimed: one run without ab \
         on an ephemeral port."
            .into(),
        "The seed measured over a LAN from another machine; here client and server share the \
         machine and loopback, so × seed compares setups, not only servers."
            .into(),
    ]
}
