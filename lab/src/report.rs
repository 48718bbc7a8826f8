//! Turns `Results` into the seed's tables (one data model, three renderings: the terminal
//! via comfy-table, `report.md`, and a self-contained `report.html` with inline SVG charts).

use crate::results::{Results, Row, Status};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A table: title, header, rows, and a note under it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Title.
    pub title: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
    /// A line under the table.
    pub note: Option<String>,
}

fn fmt_ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn fmt_qps(x: f64) -> String {
    let s = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn fmt_us(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

/// Column labels in the order of the config, then producer counts.
fn axes(r: &Results) -> (Vec<String>, Vec<usize>) {
    let mut labels: Vec<String> = Vec::new();
    for row in &r.results {
        if !labels.contains(&row.label) {
            labels.push(row.label.clone());
        }
    }
    let mut ps: Vec<usize> = r.results.iter().map(|x| x.producers).collect();
    ps.sort_unstable();
    ps.dedup();
    (labels, ps)
}

fn index(r: &Results) -> BTreeMap<(String, usize), &Row> {
    r.results.iter().map(|x| ((x.label.clone(), x.producers), x)).collect()
}

/// The baseline column for ratios: `locked` when present, else the first.
pub fn baseline(labels: &[String]) -> Option<String> {
    labels.iter().find(|l| l.as_str() == "locked").or(labels.first()).cloned()
}

fn cell_value(row: Option<&&Row>, f: impl Fn(&Row) -> Option<String>) -> String {
    match row {
        None => "-".to_string(),
        Some(r) if r.status != Status::Ok && r.median_ms.is_none() => r.status.word().to_string(),
        Some(r) => {
            let v = f(r).unwrap_or_else(|| "-".to_string());
            if r.status == Status::Ok {
                v
            } else {
                format!("{v} {}", r.status.word())
            }
        }
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.0}%", a / b * 100.0),
        _ => "-".to_string(),
    }
}

/// The seed's two headline tables: duration and QPS per producer count, with ratios.
pub fn headline_tables(r: &Results) -> Vec<Table> {
    let (labels, ps) = axes(r);
    let idx = index(r);
    let base = baseline(&labels);
    let others: Vec<&String> = labels.iter().filter(|l| Some(*l) != base.as_ref()).collect();
    let mut tables = Vec::new();
    for (title, is_qps) in
        [("Duration (ms, median)", false), ("QPS (messages/s, from the median)", true)]
    {
        let mut header = vec!["P".to_string()];
        header.extend(labels.iter().cloned());
        if let Some(b) = &base {
            header.extend(others.iter().map(|o| format!("{o}/{b}")));
        }
        let rows =
            ps.iter()
                .map(|&p| {
                    let mut row = vec![p.to_string()];
                    for l in &labels {
                        row.push(cell_value(idx.get(&(l.clone(), p)), |x| {
                            if is_qps {
                                x.qps.map(fmt_qps)
                            } else {
                                x.median_ms.map(fmt_ms)
                            }
                        }));
                    }
                    if let Some(b) = &base {
                        let get = |l: &String| {
                            idx.get(&(l.clone(), p))
                                .filter(|x| x.status == Status::Ok)
                                .and_then(|x| if is_qps { x.qps } else { x.median_ms })
                        };
                        for o in &others {
                            row.push(ratio(get(o), get(b)));
                        }
                    }
                    row
                })
                .collect();
        tables.push(Table {
            title: title.to_string(),
            header,
            rows,
            note: Some(
                if is_qps {
                    "Ratio = variant QPS / baseline QPS (the seed's 对比 column: 137% … 252%)."
                } else {
                    "Ratio = variant duration / baseline duration (the seed: 73% … 39.65%)."
                }
                .to_string(),
            ),
        });
    }
    tables
}

/// Run statistics per row (JMH style).
pub fn spread_table(r: &Results) -> Table {
    let rows = r
        .results
        .iter()
        .map(|x| {
            let f = |v: Option<f64>| v.map_or("-".to_string(), fmt_ms);
            vec![
                x.label.clone(),
                x.producers.to_string(),
                x.status.word().to_string(),
                format!("{}/{}", x.runs.iter().filter(|r| r.valid).count(), x.runs.len()),
                f(x.min_ms),
                f(x.median_ms),
                f(x.max_ms),
                f(x.stddev_ms),
                x.ci999_ms
                    .map_or("-".to_string(), |[a, b]| format!("[{}, {}]", fmt_ms(a), fmt_ms(b))),
            ]
        })
        .collect();
    Table {
        title: "Runs (ms): min / median / max, standard deviation, 99.9% CI of the mean".into(),
        header: [
            "variant",
            "P",
            "status",
            "valid runs",
            "min",
            "median",
            "max",
            "stddev",
            "CI 99.9%",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: Some(
            "Each cell runs in its own child process; statistics use valid measured runs only."
                .into(),
        ),
    }
}

/// Latency percentiles of sampled messages.
pub fn latency_table(r: &Results) -> Table {
    let rows = r
        .results
        .iter()
        .map(|x| match &x.latency_ns {
            Some(l) => vec![
                x.label.clone(),
                x.producers.to_string(),
                l.count.to_string(),
                fmt_us(l.p50),
                fmt_us(l.p90),
                fmt_us(l.p99),
                fmt_us(l.p999),
                fmt_us(l.max),
            ],
            None => vec![x.label.clone(), x.producers.to_string(), x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("-".to_string(), 5))
                .collect(),
        })
        .collect();
    Table {
        title: "End-to-end latency of sampled messages (µs, publish → consume)".into(),
        header: ["variant", "P", "samples", "p50", "p90", "p99", "p99.9", "max"]
            .map(String::from)
            .to_vec(),
        rows,
        note: Some(format!(
            "Every {}th message of each producer is stamped at send and read at receipt; \
             queueing under full load dominates these figures.",
            r.sampling.sample_every
        )),
    }
}

/// CPU use and per-thread CPU time, context switches.
pub fn cpu_table(r: &Results) -> Table {
    let rows = r
        .results
        .iter()
        .map(|x| match &x.cpu {
            Some(c) => {
                let prod: Vec<&crate::results::ThreadCpu> =
                    c.threads.iter().filter(|t| t.name.starts_with("producer")).collect();
                let cons = c.threads.iter().find(|t| t.name == "consumer");
                let vcs: f64 = c.threads.iter().map(|t| t.voluntary_cs).sum();
                let ivcs: f64 = c.threads.iter().map(|t| t.involuntary_cs).sum();
                vec![
                    x.label.clone(),
                    x.producers.to_string(),
                    format!("{:.0}%", c.process_pct),
                    format!("{:.0}%", c.machine_pct),
                    prod.iter().map(|t| format!("{:.0}", t.cpu_ms)).collect::<Vec<_>>().join(" / "),
                    cons.map_or("-".into(), |t| format!("{:.0}", t.cpu_ms)),
                    cons.map_or("-".into(), |t| format!("{:.0}", t.sys_ms)),
                    format!("{vcs:.0}"),
                    format!("{ivcs:.0}"),
                ]
            }
            None => vec![x.label.clone(), x.producers.to_string(), x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("-".to_string(), 6))
                .collect(),
        })
        .collect();
    Table {
        title: "CPU: process use, CPU time per thread (ms), context switches (means per run)"
            .into(),
        header: [
            "variant",
            "P",
            "process CPU",
            "of machine",
            "producer-0 / producer-1 / …",
            "consumer",
            "consumer sys",
            "voluntary cs",
            "involuntary cs",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: Some(
            "process CPU = CPU time / wall time (200% = two cores busy); \"of machine\" divides \
             by the online cores, like the seed's CPU graph. Thread times from \
             getrusage(RUSAGE_THREAD) at each thread's end."
                .into(),
        ),
    }
}

/// Heap profiles.
pub fn heap_table(r: &Results) -> Option<Table> {
    let rows: Vec<Vec<String>> = r
        .results
        .iter()
        .filter_map(|x| {
            x.heap.as_ref().map(|h| {
                vec![
                    x.label.clone(),
                    x.producers.to_string(),
                    h.messages.to_string(),
                    h.total_blocks.to_string(),
                    h.total_bytes.to_string(),
                    h.max_bytes.to_string(),
                    format!("{:.3}", h.blocks_per_message),
                    format!("{:.1}", h.bytes_per_message),
                    if h.valid { "ok".into() } else { "INVALID".into() },
                ]
            })
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: "Heap (dhat, a separate untimed run per cell)".into(),
        header: [
            "variant",
            "P",
            "messages",
            "allocations",
            "bytes allocated",
            "peak live bytes",
            "allocations/msg",
            "bytes/msg",
            "check",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: Some(
            "Totals include the run's fixed setup (threads, the checker, a preallocated ring); \
             per-message figures divide the totals by the heap run's messages."
                .into(),
        ),
    })
}

/// Rows that did not come out ok.
pub fn failure_table(r: &Results) -> Option<Table> {
    let rows: Vec<Vec<String>> = r
        .results
        .iter()
        .filter(|x| x.status != Status::Ok)
        .map(|x| {
            vec![
                x.label.clone(),
                x.producers.to_string(),
                x.status.word().to_string(),
                x.error.clone().unwrap_or_default(),
                x.stderr_tail.clone().unwrap_or_default(),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: "Failures (left out of every statistic)".into(),
        header: ["variant", "P", "status", "what", "stderr (tail)"].map(String::from).to_vec(),
        rows,
        note: None,
    })
}

/// Every table of the report, in order.
pub fn all_tables(r: &Results) -> Vec<Table> {
    let mut t = headline_tables(r);
    t.push(spread_table(r));
    t.push(latency_table(r));
    t.push(cpu_table(r));
    t.extend(heap_table(r));
    t.extend(failure_table(r));
    t
}

/// Renders a table for the terminal.
pub fn terminal(t: &Table) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    ct.set_header(t.header.clone());
    for row in &t.rows {
        ct.add_row(row.iter().map(|c| c.replace('\n', " ⏎ ")).collect::<Vec<_>>());
    }
    let mut s = format!("{}\n{ct}\n", t.title);
    if let Some(n) = &t.note {
        s.push_str(n);
        s.push('\n');
    }
    s
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', "<br>")
}

pub fn md_table(t: &Table) -> String {
    let mut s = format!(
        "### {}\n\n| {} |\n|{}\n",
        t.title,
        t.header.join(" | "),
        "---|".repeat(t.header.len())
    );
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|c| md_escape(c)).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    if let Some(n) = &t.note {
        let _ = write!(s, "\n{n}\n");
    }
    s.push('\n');
    s
}

fn method_lines(r: &Results) -> Vec<String> {
    let c = &r.config;
    let mut v = vec![
        format!(
            "{} producer thread(s) and one consumer per run; variants {}; {} messages per run \
             ({} payload bytes each).",
            c.producers.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
            c.variants.join(", "),
            c.messages,
            c.payload
        ),
        format!(
            "Each (variant, P) cell runs in its own child process (a JMH-style fork): {} warm-up \
             run(s), then {} measured run(s); a watchdog kills a child after {} s.",
            c.warmup, c.runs, c.timeout_s
        ),
        "Every run checks itself (count, per-producer order, checksum); a failed run is marked \
         INVALID and never enters the statistics."
            .to_string(),
        format!(
            "The ring runs with wait strategy {}; its size (and the bound of the channel peers) is \
             {} slots; the locked queue is {}.",
            c.waits.join(", "),
            c.ring_size,
            c.capacity.map_or("unbounded (as the seed)".to_string(), |x| format!("bounded at {x}"))
        ),
        format!(
            "The consumer takes messages with {}.",
            if c.batch <= 1 {
                "recv() one at a time".to_string()
            } else {
                format!("recv_batch(max {})", c.batch)
            }
        ),
    ];
    v.push(format!(
        "Heap pass ({}): after the timed cells, one untimed child per cell in the lab-heap \
         binary (global allocator dhat::Alloc) runs {} messages under dhat::Profiler; the timed \
         children use the system allocator.",
        c.heap, c.heap_messages
    ));
    v.push(format!(
        "Trace pass ({}): one more untimed child per cell runs {} messages with the recorder \
         installed; producers wrap every {}th send in a `publish` span, the consumer emits a \
         `consume` span with the same flow id and a `messages_per_ms` counter about once per ms.",
        c.trace, c.trace_messages, c.sample_every
    ));
    if let Some(n) = &c.spread_note {
        v.push(n.clone());
    }
    v
}

fn sampling_lines(r: &Results) -> Vec<String> {
    let s = &r.sampling;
    let mut v = Vec::new();
    if s.sample_every == 0 {
        v.push("Latency sampling was off.".to_string());
        return v;
    }
    if let Some(c) = s.sample_cost_ns {
        v.push(format!(
            "One sample costs {c:.1} ns (two clock reads and a histogram record, measured in each \
             child); at one sample per {} messages that is at most {:.3}% of a run's time \
             (largest per-row estimate).",
            s.sample_every,
            s.est_overhead_max_pct.unwrap_or(0.0)
        ));
    }
    if let Some(ab) = &s.ab {
        v.push(format!(
            "A/B check on {} P={}: sampled runs {:?} ms, unsampled {:?} ms: {}.",
            ab.variant,
            ab.producers,
            ab.sampled_ms.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>(),
            ab.unsampled_ms.iter().map(|x| (x * 100.0).round() / 100.0).collect::<Vec<_>>(),
            match (ab.overhead_pct, ab.overhead_pct_min) {
                (Some(o), Some(m)) => format!(
                    "difference of the medians {o:+.2}%, of the fastest runs {m:+.2}% \
                     (run-to-run noise included)"
                ),
                _ => "no valid pairs".to_string(),
            }
        ));
    }
    v
}

/// Renders report.md.
pub fn markdown(r: &Results) -> String {
    let mut s = format!("# {} — {}\n\n", r.experiment, r.environment.date);
    if r.status != "complete" {
        let _ = writeln!(
            s,
            "**{}**: only the cells that finished are shown.\n",
            r.status.to_uppercase()
        );
    }
    s.push_str("## Environment\n\n| field | value |\n|---|---|\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(s, "| {k} | {} |", md_escape(&v));
    }
    s.push_str("\n## Method\n\n");
    for l in method_lines(r) {
        let _ = writeln!(s, "- {l}");
    }
    s.push_str("\n## Results\n\n");
    for t in all_tables(r) {
        s.push_str(&md_table(&t));
    }
    s.push_str("## Latency sampling cost\n\n");
    for l in sampling_lines(r) {
        let _ = writeln!(s, "- {l}");
    }
    heap_sites_md(r, &mut s);
    s.push_str("\n## Files\n\n");
    for (label, path) in files(r) {
        let _ = writeln!(s, "- [{label}]({path})");
    }
    if !r.notes.is_empty() {
        s.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

fn heap_sites_md(r: &Results, s: &mut String) {
    let with: Vec<&Row> = r.results.iter().filter(|x| x.heap.is_some()).collect();
    if with.is_empty() {
        return;
    }
    s.push_str("\n## Top allocation sites (from the dhat files)\n\n");
    for x in with {
        let h = x.heap.as_ref().expect("filtered");
        let _ = writeln!(s, "**{} P={}** ([{}]({})):\n", x.label, x.producers, h.file, h.file);
        for site in &h.top_sites {
            let _ = writeln!(
                s,
                "- {} bytes in {} allocations ({} live at peak): `{}`",
                site.total_bytes,
                site.total_blocks,
                site.at_peak_bytes,
                site.frames.join(" ← ")
            );
        }
        s.push('\n');
    }
}

/// Links to every trace and heap file: (label, path relative to the run folder).
pub fn files(r: &Results) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for x in &r.results {
        if let Some(t) = &x.trace {
            v.push((format!("trace {} P={}", x.label, x.producers), t.clone()));
        }
        if let Some(h) = &x.heap {
            v.push((format!("heap {} P={}", x.label, x.producers), h.file.clone()));
        }
    }
    v
}

pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn html_table(t: &Table) -> String {
    let mut s = format!("<h3>{}</h3>\n<table>\n<tr>", html_escape(&t.title));
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", html_escape(h));
    }
    s.push_str("</tr>\n");
    for row in &t.rows {
        s.push_str("<tr>");
        for c in row {
            let class = if c.contains("INVALID")
                || c.contains("HUNG")
                || c.contains("CRASHED")
                || c.contains("ERROR")
            {
                " class=\"bad\""
            } else {
                ""
            };
            let _ = write!(s, "<td{class}>{}</td>", html_escape(c).replace('\n', "<br>"));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if let Some(n) = &t.note {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", html_escape(n));
    }
    s
}

const PALETTE: &[&str] =
    &["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// One line of a chart: name, colour index (one per variant), (x, y) points.
pub type Series = (String, usize, Vec<(f64, f64)>);

/// A line chart as inline SVG: one polyline per series, linear x, linear or log y.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_y: bool,
) -> String {
    let (w, h, ml, mr, mt, mb) = (640.0, 340.0, 80.0, 170.0, 30.0, 45.0);
    let pts: Vec<(f64, f64)> =
        series.iter().flat_map(|s| s.2.iter().copied()).filter(|p| p.1 > 0.0).collect();
    if pts.is_empty() {
        return format!("<p>{}: no data.</p>", html_escape(title));
    }
    let xmin = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let tf = |y: f64| if log_y { y.log10() } else { y };
    let mut ymin =
        if log_y { pts.iter().map(|p| tf(p.1)).fold(f64::INFINITY, f64::min).floor() } else { 0.0 };
    let mut ymax = pts.iter().map(|p| tf(p.1)).fold(f64::NEG_INFINITY, f64::max);
    ymax = if log_y { ymax.ceil() } else { ymax * 1.1 };
    if ymax <= ymin {
        ymax = ymin + 1.0;
        ymin -= if log_y { 1.0 } else { 0.0 };
    }
    let xspan = if xmax > xmin { xmax - xmin } else { 1.0 };
    let px = |x: f64| ml + (x - xmin) / xspan * (w - ml - mr);
    let py = |y: f64| mt + (1.0 - (tf(y) - ymin) / (ymax - ymin)) * (h - mt - mb);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{}\" y=\"18\" font-size=\"13\" \
         font-weight=\"bold\">{}</text>\n",
        ml,
        html_escape(title)
    );
    // Axes and grid.
    let _ = writeln!(
        s,
        "<line x1=\"{ml}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/><line x1=\"{ml}\" y1=\"{mt}\" \
         x2=\"{ml}\" y2=\"{}\" stroke=\"#333\"/>",
        h - mb,
        w - mr,
        h - mb,
        h - mb
    );
    // Linear: five even steps; log: one tick per power of ten.
    let ticks = if log_y { (ymax - ymin).round().max(1.0) as usize } else { 5 };
    for i in 0..=ticks {
        let v = ymin + (ymax - ymin) * i as f64 / ticks as f64;
        let real = if log_y { 10f64.powf(v) } else { v };
        let y = mt + (1.0 - i as f64 / ticks as f64) * (h - mt - mb);
        let label = if real >= 1e6 {
            format!("{:.1}M", real / 1e6)
        } else if real >= 1e3 {
            format!("{:.1}k", real / 1e3)
        } else {
            format!("{real:.1}")
        };
        let _ = writeln!(
            s,
            "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" \
             y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
            w - mr,
            ml - 5.0,
            y + 4.0
        );
    }
    let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in &xs {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{x}</text>",
            px(*x),
            h - mb + 15.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"14\" y=\"{:.1}\" \
         transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        ml + (w - ml - mr) / 2.0,
        h - 8.0,
        html_escape(x_label),
        mt + (h - mt - mb) / 2.0,
        mt + (h - mt - mb) / 2.0,
        html_escape(y_label)
    );
    for (i, (name, color_index, points)) in series.iter().enumerate() {
        let color = PALETTE[color_index % PALETTE.len()];
        let dash = if name.ends_with("p99") { " stroke-dasharray=\"5,3\"" } else { "" };
        let mut p: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.1 > 0.0).collect();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> =
            p.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
            path.join(" ")
        );
        for (x, y) in &p {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{} P={x}: {y:.0}</title></circle>",
                px(*x),
                py(*y),
                html_escape(name)
            );
        }
        let ly = mt + 14.0 * i as f64;
        let _ = writeln!(
            s,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{}\" y=\"{:.1}\">{}</text>",
            w - mr + 10.0,
            w - mr + 30.0,
            w - mr + 35.0,
            ly + 4.0,
            html_escape(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The charts: QPS against producers per variant; latency p50 and p99 against producers.
pub fn charts(r: &Results) -> String {
    let (labels, _) = axes(r);
    let ok = |x: &&Row| x.status == Status::Ok;
    let qps: Vec<Series> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let pts = r
                .results
                .iter()
                .filter(|x| &x.label == l)
                .filter(ok)
                .filter_map(|x| x.qps.map(|q| (x.producers as f64, q)))
                .collect();
            (l.clone(), i, pts)
        })
        .collect();
    let mut lat = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        for (name, f) in
            [("p50", (|x: &crate::harness::Latency| x.p50) as fn(&_) -> u64), ("p99", |x| x.p99)]
        {
            let pts = r
                .results
                .iter()
                .filter(|x| &x.label == l)
                .filter(ok)
                .filter_map(|x| {
                    x.latency_ns.as_ref().map(|v| (x.producers as f64, f(v) as f64 / 1e3))
                })
                .collect();
            lat.push((format!("{l} {name}"), i, pts));
        }
    }
    format!(
        "{}\n{}",
        line_chart("Throughput against producers", "producers (P)", "messages/s", &qps, false),
        line_chart("Latency of sampled messages (log scale)", "producers (P)", "µs", &lat, true)
    )
}

/// Renders report.html: self-contained (inline CSS and SVG), links relative to its folder.
pub fn html(r: &Results) -> String {
    let mut s = String::from("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(
        s,
        "<title>{} — {}</title>",
        html_escape(&r.experiment),
        html_escape(&r.environment.date)
    );
    s.push_str(
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
         table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:3px 8px;\
         text-align:right;font-size:13px}th{background:#eee}td:first-child{text-align:left}\
         .bad{background:#fdd;color:#900;font-weight:bold}.note{color:#555;font-size:12px}\
         code{font-size:12px}</style></head><body>\n",
    );
    let _ = writeln!(s, "<h1>{}</h1>", html_escape(&r.experiment));
    if r.status != "complete" {
        let _ = writeln!(
            s,
            "<p class=\"bad\">{}: only the cells that finished are shown.</p>",
            html_escape(&r.status.to_uppercase())
        );
    }
    s.push_str("<h2>Results</h2>\n");
    s.push_str(&charts(r));
    for t in all_tables(r) {
        s.push_str(&html_table(&t));
    }
    s.push_str("<h2>Latency sampling cost</h2>\n<ul>\n");
    for l in sampling_lines(r) {
        let _ = writeln!(s, "<li>{}</li>", html_escape(&l));
    }
    s.push_str("</ul>\n");
    let with: Vec<&Row> = r.results.iter().filter(|x| x.heap.is_some()).collect();
    if !with.is_empty() {
        s.push_str("<h2>Top allocation sites</h2>\n");
        for x in with {
            let h = x.heap.as_ref().expect("filtered");
            let _ = writeln!(
                s,
                "<h4>{} P={} (<a href=\"{}\">{}</a>)</h4><ul>",
                html_escape(&x.label),
                x.producers,
                html_escape(&h.file),
                html_escape(&h.file)
            );
            for site in &h.top_sites {
                let _ = writeln!(
                    s,
                    "<li>{} bytes in {} allocations ({} live at peak): <code>{}</code></li>",
                    site.total_bytes,
                    site.total_blocks,
                    site.at_peak_bytes,
                    html_escape(&site.frames.join(" ← "))
                );
            }
            s.push_str("</ul>\n");
        }
    }
    s.push_str("<h2>Files</h2>\n<ul>\n");
    let fs = files(r);
    if fs.is_empty() {
        s.push_str("<li>No trace or heap files in this run.</li>\n");
    }
    for (label, path) in fs {
        // Traces also get Perfetto's deep link, which works while `lab view` serves this folder.
        let deep = match crate::view::kind(&path) {
            crate::view::FileKind::Trace => format!(
                " — <a href=\"{}\">open in Perfetto (via lab view)</a>",
                html_escape(&crate::view::perfetto_link(crate::view::DEFAULT_PORT, &path))
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "<li><a href=\"{}\">{}</a> ({}){deep}</li>",
            html_escape(&path),
            html_escape(&label),
            html_escape(&path)
        );
    }
    s.push_str(
        "</ul>\n<p class=\"note\">Traces open in Perfetto (ui.perfetto.dev, \"Open trace file\", \
         or the deep links while `lab view` runs); \
         heap files in valgrind's dh_view.html (\"Load…\").</p>\n<h2>Method</h2>\n<ul>\n",
    );
    for l in method_lines(r) {
        let _ = writeln!(s, "<li>{}</li>", html_escape(&l));
    }
    s.push_str("</ul>\n<h2>Environment</h2>\n<table>\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(
            s,
            "<tr><th>{}</th><td style=\"text-align:left\">{}</td></tr>",
            html_escape(k),
            html_escape(&v)
        );
    }
    s.push_str("</table>\n");
    if !r.notes.is_empty() {
        s.push_str("<h2>Notes</h2>\n<ul>\n");
        for n in &r.notes {
            let _ = writeln!(s, "<li>{}</li>", html_escape(n));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body></html>\n");
    s
}
