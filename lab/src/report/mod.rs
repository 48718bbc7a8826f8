//! The one report writer: the terminal, `report.md` and `report.html` (one stylesheet,
//! inline SVG charts) from the same [`Results`], and the atomic writes of the run's files.
//!
//! Order matters: the terminal tables come first, whatever then happens to the files; each
//! file is written to a temporary name and renamed, so a reader never sees a truncated one.

pub mod links;

use crate::results::{Results, Row, Status, Table};
use crate::units::fmt_num;
pub use links::html_escape;
use std::fmt::Write as _;
use std::path::Path;

/// The report's stylesheet (inlined into every report.html).
pub const STYLE: &str = include_str!("report.css");

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

/// A table in Markdown.
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

/// A table in HTML.
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
    let pts: Vec<(f64, f64)> =
        series.iter().flat_map(|s| s.2.iter().copied()).filter(|p| p.1 > 0.0).collect();
    if pts.is_empty() {
        return format!("<p>{}: no data.</p>", html_escape(title));
    }
    let f = Frame::new(&pts, log_y);
    let (w, h, ml) = (f.w, f.h, f.ml);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{}\" y=\"18\" font-size=\"13\" \
         font-weight=\"bold\">{}</text>\n",
        ml,
        html_escape(title)
    );
    chart_axes(&mut s, &f, &pts, x_label, y_label);
    for (i, one) in series.iter().enumerate() {
        chart_series(&mut s, &f, i, one);
    }
    s.push_str("</svg>\n");
    s
}

/// A chart's geometry (size and margins, px) and the ranges its axes span.
struct Frame {
    w: f64,
    h: f64,
    ml: f64,
    mr: f64,
    mt: f64,
    mb: f64,
    log_y: bool,
    xmin: f64,
    xspan: f64,
    /// In the y axis's scale (log10 of the value on a log axis).
    ymin: f64,
    /// See `ymin`.
    ymax: f64,
}

impl Frame {
    /// The frame that holds `pts` (all with y > 0): x from the smallest to the largest; y
    /// from 0 to 10% above the largest, or on a log axis from power of ten to power of ten.
    fn new(pts: &[(f64, f64)], log_y: bool) -> Frame {
        let (w, h, ml, mr, mt, mb) = (640.0, 340.0, 80.0, 170.0, 30.0, 45.0);
        let xmin = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let xmax = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let tf = |y: f64| if log_y { y.log10() } else { y };
        let mut ymin = if log_y {
            pts.iter().map(|p| tf(p.1)).fold(f64::INFINITY, f64::min).floor()
        } else {
            0.0
        };
        let mut ymax = pts.iter().map(|p| tf(p.1)).fold(f64::NEG_INFINITY, f64::max);
        ymax = if log_y { ymax.ceil() } else { ymax * 1.1 };
        if ymax <= ymin {
            ymax = ymin + 1.0;
            ymin -= if log_y { 1.0 } else { 0.0 };
        }
        let xspan = if xmax > xmin { xmax - xmin } else { 1.0 };
        Frame { w, h, ml, mr, mt, mb, log_y, xmin, xspan, ymin, ymax }
    }

    /// A value in the y axis's scale.
    fn tf(&self, y: f64) -> f64 {
        if self.log_y {
            y.log10()
        } else {
            y
        }
    }

    /// Where `x` lies across the chart, px.
    fn px(&self, x: f64) -> f64 {
        self.ml + (x - self.xmin) / self.xspan * (self.w - self.ml - self.mr)
    }

    /// Where `y` lies down the chart, px.
    fn py(&self, y: f64) -> f64 {
        let (ymin, ymax) = (self.ymin, self.ymax);
        self.mt + (1.0 - (self.tf(y) - ymin) / (ymax - ymin)) * (self.h - self.mt - self.mb)
    }
}

/// The axes, the y grid with its labels, a label per x of `pts`, and the axis titles.
fn chart_axes(s: &mut String, f: &Frame, pts: &[(f64, f64)], x_label: &str, y_label: &str) {
    let (w, h, ml, mr, mt, mb) = (f.w, f.h, f.ml, f.mr, f.mt, f.mb);
    let (ymin, ymax, log_y) = (f.ymin, f.ymax, f.log_y);
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
            f.px(*x),
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
}

/// Series `i`: its polyline, a dot per point with its value, and its legend entry.
fn chart_series(s: &mut String, f: &Frame, i: usize, (name, color_index, points): &Series) {
    let (w, mr, mt) = (f.w, f.mr, f.mt);
    let color = PALETTE[color_index % PALETTE.len()];
    let dash = if name.ends_with("p99") { " stroke-dasharray=\"5,3\"" } else { "" };
    let mut p: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.1 > 0.0).collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let path: Vec<String> =
        p.iter().map(|(x, y)| format!("{:.1},{:.1}", f.px(*x), f.py(*y))).collect();
    let _ = writeln!(
        s,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
        path.join(" ")
    );
    for (x, y) in &p {
        let _ = writeln!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{} P={x}: {y:.0}</title></circle>",
            f.px(*x),
            f.py(*y),
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

fn status_line(r: &Results) -> Option<String> {
    match r.status.as_str() {
        "complete" => None,
        "interrupted" => Some(format!(
            "INTERRUPTED: {} of {} rounds finished; only what finished is shown.",
            r.rounds.finished, r.rounds.planned
        )),
        other => {
            Some(format!("{}: some rows did not pass (see the tables).", other.to_uppercase()))
        }
    }
}

/// The table of rows that did not finish OK (left out of every statistic), or `None` when
/// every row did: the row's key columns (`keys` names them, `key_of` fills them), then its
/// status, what went wrong and the tail of its stderr.
pub fn failure_table(
    r: &Results,
    keys: &[&str],
    key_of: impl Fn(&Row) -> Vec<String>,
) -> Option<Table> {
    let headers: Vec<&str> =
        keys.iter().copied().chain(["status", "what", "stderr (tail)"]).collect();
    let mut t = Table::new("Failures (left out of every statistic)", &headers);
    for x in r.results.iter().filter(|x| x.status != Status::Ok) {
        let mut line = key_of(x);
        line.push(x.status.word().to_string());
        line.push(x.error.clone().unwrap_or_default());
        line.push(x.stderr_tail.clone().unwrap_or_default());
        t.rows.push(line);
    }
    t.headline = true;
    (!t.rows.is_empty()).then_some(t)
}

/// The terminal output. Without `details`: a status line when the run is not complete, the
/// headline tables (ratio cells made compact), the verdict, the reasons table, failures,
/// and a count of the notes, about one screen; with `details`: every table in full, the
/// targets, the Why sentences and the notes as well.
pub fn terminal_report(r: &Results, details: bool) -> String {
    let mut s = String::new();
    if let Some(l) = status_line(r) {
        let _ = writeln!(s, "{l}");
    }
    if details {
        for t in &r.tables {
            let _ = writeln!(s, "{}", terminal(t));
        }
    } else {
        for t in headline_tables(r) {
            let _ = writeln!(s, "{}", terminal_brief(t));
        }
    }
    if !r.verdict.is_empty() {
        let _ = writeln!(s, "Verdict:");
        for l in &r.verdict {
            s.push_str(&wrap(l, TERMINAL_WIDTH, "  - ", "    "));
        }
        s.push('\n');
    }
    if let Some(t) = &r.reasons {
        let _ = writeln!(s, "{}", terminal_reasons(t));
    }
    if details {
        for t in &r.targets {
            let _ =
                writeln!(s, "target: {}: {} vs {}: {}", t.what, t.target, t.measured, t.verdict());
        }
        if !r.why.is_empty() {
            let _ = writeln!(s, "Why (sentences computed from this run; fields in results.json):");
            for w in &r.why {
                let _ = writeln!(s, "  - {} [{}]", w.text, figure_list(w));
            }
        }
        for n in &r.notes {
            let _ = writeln!(s, "note: {n}");
        }
    } else if !r.notes.is_empty() {
        let _ = writeln!(
            s,
            "{} note(s) in the report; other tables, the Why sentences and the notes: --details",
            r.notes.len()
        );
    }
    s
}

/// The widest line the terminal report aims for.
pub const TERMINAL_WIDTH: usize = 120;

/// Whether a table is a failure table (always shown).
fn is_failures(t: &Table) -> bool {
    t.title.starts_with("Failures")
}

/// The tables the terminal shows without `--details`: those marked headline and the
/// failures; in results written before the mark, the first table and the failures.
fn headline_tables(r: &Results) -> Vec<&Table> {
    let marked = r.tables.iter().any(|t| t.headline);
    r.tables
        .iter()
        .enumerate()
        .filter(|(i, t)| t.headline || is_failures(t) || (!marked && *i == 0))
        .map(|(_, t)| t)
        .collect()
}

/// A table for the terminal without its note, its ratio cells compact, at most
/// [`TERMINAL_WIDTH`] wide.
pub fn terminal_brief(t: &Table) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    ct.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    ct.set_width(TERMINAL_WIDTH as u16);
    ct.set_header(t.header.clone());
    for row in &t.rows {
        ct.add_row(
            row.iter()
                .map(|c| compact_ratio(c).unwrap_or_else(|| c.replace('\n', " ⏎ ")))
                .collect::<Vec<_>>(),
        );
    }
    format!("{}\n{ct}\n", t.title)
}

/// A ratio as the verdict prints it: 1 decimal from 3 up, else 2.
fn factor(x: f64) -> String {
    if x.abs() >= 3.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A ratio cell as [`crate::results::Ratio::text`] writes it, made compact for the terminal:
/// `15.12× [10.31, 18.80] unstable (≈ 40 rounds); 13 off-phase rounds apart: 2.10×` →
/// `15.1× [10.3, 18.8] unstable 13 off-phase`; `None` for any other cell.
pub fn compact_ratio(c: &str) -> Option<String> {
    let (m, rest) = c.split_once('×')?;
    let m: f64 = m.trim().parse().ok()?;
    let (inner, rest) = rest.trim_start().strip_prefix('[')?.split_once(']')?;
    let ci = match inner.split_once(", ") {
        Some((a, b)) => format!("[{}, {}]", factor(a.parse().ok()?), factor(b.parse().ok()?)),
        None if inner == "–" => "[–]".into(),
        None => return None,
    };
    let mut s = format!("{}× {ci}", factor(m));
    let (flag, apart) = rest.split_once(';').unwrap_or((rest, ""));
    if flag.contains("unstable") {
        s += " unstable";
    } else if !flag.trim().is_empty() {
        return None;
    }
    if let Some(n) = apart.trim().split(' ').next().filter(|_| apart.contains("off-phase")) {
        s += &format!(" {n} off-phase");
    }
    Some(s)
}

/// The reasons table for the terminal: a row per reason, a column per pair; a fired
/// rule's cell is marked `*`.
pub fn terminal_reasons(t: &crate::results::Reasons) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    ct.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    ct.set_width(TERMINAL_WIDTH as u16);
    let mut header = vec!["reason".to_string()];
    header.extend(t.columns.iter().cloned());
    ct.set_header(header);
    for row in &t.rows {
        let mut line = vec![row.reason.clone()];
        line.extend(row.cells.iter().map(|c| match c {
            Some(c) if c.fired => format!("{}*", c.text),
            Some(c) => c.text.clone(),
            None => "–".into(),
        }));
        ct.add_row(line);
    }
    // One space before each cell, none after: the columns are many and the cells short.
    for c in ct.column_iter_mut() {
        c.set_padding((1, 0));
    }
    let mut s = format!("{}\n{ct}\n", t.title);
    if let Some(n) = &t.note {
        s += &wrap(n, TERMINAL_WIDTH, "", "");
    }
    s
}

/// `text` wrapped at spaces to `width` columns, the first line after `first`, the others
/// after `rest`.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let len = line.chars().count() + word.chars().count() + usize::from(!empty);
        if !empty && len > width {
            out += &line;
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line += word;
        empty = false;
    }
    out += &line;
    out.push('\n');
    out
}

/// A Why sentence's figures as `field = value` pairs.
fn figure_list(w: &crate::results::Why) -> String {
    w.figures
        .iter()
        .map(|f| format!("{} = {}", f.field, fmt_num(f.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders report.md.
pub fn markdown(r: &Results) -> String {
    let mut s = format!("# {} — {}\n\n", r.experiment, r.environment.date);
    if let Some(l) = status_line(r) {
        let _ = writeln!(s, "**{l}**\n");
    }
    for t in &r.tables {
        s.push_str(&md_table(t));
    }
    if !r.targets.is_empty() {
        s.push_str("## Targets\n\n");
        for t in &r.targets {
            let _ = writeln!(
                s,
                "- {}: target {}, measured {}: **{}**",
                t.what,
                t.target,
                t.measured,
                t.verdict()
            );
        }
        s.push('\n');
    }
    if !r.why.is_empty() {
        s.push_str("## Why\n\nSentences computed from this run's figures, each with the fields of results.json it rests on and the rule that produced it.\n\n");
        for w in &r.why {
            let _ = writeln!(s, "- {} (rule `{}`; {})", w.text, w.rule, figure_list(w));
        }
        s.push('\n');
    }
    if !r.files.is_empty() {
        s.push_str("## Files\n\n");
        for f in &r.files {
            let _ = writeln!(s, "- [{}]({}) — {}", f.file, f.file, f.what);
        }
        s.push_str("\nTraces open in Perfetto (ui.perfetto.dev, or `lab view`); heap files in dh_view.html.\n\n");
    }
    s.push_str("## Method\n\n");
    for m in &r.method {
        let _ = writeln!(s, "- {m}");
    }
    s.push_str("\n## Environment\n\n| field | value |\n|---|---|\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(s, "| {k} | {} |", md_escape(&v));
    }
    if !r.notes.is_empty() {
        s.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// Renders report.html: self-contained (inline CSS and SVG), links relative to its folder.
pub fn html(r: &Results) -> String {
    let e = html_escape;
    let mut s = String::from("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(s, "<title>{} — {}</title>", e(&r.experiment), e(&r.environment.date));
    let _ = writeln!(s, "<style>{STYLE}</style></head><body>");
    let _ = writeln!(s, "<h1>{}</h1>", e(&r.experiment));
    if let Some(l) = status_line(r) {
        let _ = writeln!(s, "<p class=\"bad\">{}</p>", e(&l));
    }
    for c in &r.charts {
        let series: Vec<Series> =
            c.series.iter().enumerate().map(|(i, (n, p))| (n.clone(), i, p.clone())).collect();
        let log = c.title.contains("log scale");
        s.push_str(&line_chart(&c.title, &c.x_label, &c.y_label, &series, log));
    }
    for t in &r.tables {
        s.push_str(&html_table(t));
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
                t.verdict()
            );
        }
        s.push_str("</ul>\n");
    }
    if !r.why.is_empty() {
        s.push_str("<h2>Why</h2>\n<ul>\n");
        for w in &r.why {
            let _ = writeln!(
                s,
                "<li>{} <span class=\"note\">(rule {}; {})</span></li>",
                e(&w.text),
                e(&w.rule),
                e(&figure_list(w))
            );
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Files</h2>\n<ul>\n");
    if r.files.is_empty() {
        s.push_str("<li>No trace or heap files in this run.</li>\n");
    }
    for f in &r.files {
        // Traces also get Perfetto's deep link, which works while `lab view` serves this folder.
        let deep = match links::kind(&f.file) {
            links::FileKind::Trace => format!(
                " — <a href=\"{}\">open in Perfetto (via lab view)</a>",
                e(&links::perfetto_link(links::DEFAULT_PORT, &f.file))
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "<li><a href=\"{}\">{}</a> ({}){deep}</li>",
            e(&f.file),
            e(&f.file),
            e(&f.what)
        );
    }
    s.push_str(
        "</ul>\n<p class=\"note\">Traces open in Perfetto (ui.perfetto.dev, \"Open trace file\", \
         or the deep links while `lab view` runs); heap files in valgrind's dh_view.html \
         (\"Load…\").</p>\n<h2>Method</h2>\n<ul>\n",
    );
    for l in &r.method {
        let _ = writeln!(s, "<li>{}</li>", e(l));
    }
    s.push_str("</ul>\n<h2>Environment</h2>\n<table>\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(s, "<tr><th>{}</th><td class=\"text\">{}</td></tr>", e(k), e(&v));
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

/// Writes `body` to `dir/name` atomically (a temporary file, then a rename).
pub fn write_atomic(dir: &Path, name: &str, body: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let result = std::fs::write(&tmp, body).and_then(|()| std::fs::rename(&tmp, &path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Prints the terminal report, then writes results.json, report.md and report.html (and
/// the `latest` link for a run in the default location). The first failed write is the
/// error; the tables are on the terminal already.
pub fn emit(r: &Results, dir: &Path, default_location: bool, details: bool) -> Result<(), String> {
    use std::io::Write as _;
    let mut out = std::io::stdout();
    let _ = write!(out, "{}", terminal_report(r, details));
    let _ = out.flush();
    let json = serde_json::to_string_pretty(r).expect("results serialise");
    let mut first_error = None;
    for (name, body) in [
        ("results.json", json.into_bytes()),
        ("report.md", markdown(r).into_bytes()),
        ("report.html", html(r).into_bytes()),
    ] {
        if let Err(e) = write_atomic(dir, name, &body) {
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if default_location {
        if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
            let link = parent.join("latest");
            let _ = std::fs::remove_file(&link);
            if let Err(e) = std::os::unix::fs::symlink(name, &link) {
                eprintln!("lab: could not update {}: {e}", link.display());
            }
        }
    }
    let _ = writeln!(out, "report: {}", dir.join("report.html").display());
    let _ = writeln!(out, "results: {}", dir.join("results.json").display());
    if r.files.iter().any(|f| links::kind(&f.file) == links::FileKind::Trace) {
        let _ = writeln!(
            out,
            "traces: `lab view {}` (or `just lab view`) opens them in Perfetto",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn ratio_cells_become_compact() {
        let c = |s: &str| compact_ratio(s);
        assert_eq!(c("15.12× [10.31, 18.80]").unwrap(), "15.1× [10.3, 18.8]");
        assert_eq!(
            c("15.12× [10.31, 18.80] unstable (≈ 40 rounds); 13 off-phase rounds apart: 2.10×")
                .unwrap(),
            "15.1× [10.3, 18.8] unstable 13 off-phase"
        );
        assert_eq!(c("1.23× [–] unstable").unwrap(), "1.23× [–] unstable");
        assert_eq!(c("0.98× [0.91, 1.07]").unwrap(), "0.98× [0.91, 1.07]");
        assert_eq!(c("12 345"), None);
        assert_eq!(c("83.1%"), None);
    }

    #[test]
    fn wrap_keeps_lines_within_the_width() {
        let text = "word ".repeat(60);
        let w = wrap(text.trim(), 40, "  - ", "    ");
        assert!(w.lines().all(|l| l.chars().count() <= 40), "{w}");
        assert!(w.starts_with("  - word") && w.lines().nth(1).unwrap().starts_with("    word"));
    }
}
