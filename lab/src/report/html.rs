//! report.html: the answer first (the verdict, the machine, the date, the command that
//! reproduces the run), then the charts, the reasons with the results.json fields they
//! quote, the tables with each row's trace and heap files beside it, and the long evidence
//! (forks, counters, CPU, method, notes) collapsed. Self-contained: inline CSS and SVG,
//! links relative to the run folder.

use super::links::{self, FileKind};
use super::{chart, html_escape as e, machine_line, reproduce_command, status_line, STYLE};
use crate::results::{Reasons, Results, Table};
use crate::units::fmt_num;
use std::fmt::Write as _;

/// The trace and heap files a row of results.json names in its own fields (and the run
/// lists among its files): what ties a file to the row it explains.
#[derive(Debug, Clone)]
pub struct RowFiles<'a> {
    /// The row's label.
    pub label: &'a str,
    /// Its group (`P=2`).
    pub group: &'a str,
    /// Its files, relative to the run folder.
    pub files: Vec<&'a str>,
}

/// Every row's trace and heap files.
pub fn row_files(r: &Results) -> Vec<RowFiles<'_>> {
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(m) => m.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let listed = |f: &str| r.files.iter().any(|l| l.file == f);
    r.results
        .iter()
        .map(|row| {
            let mut files = Vec::new();
            row.detail.values().for_each(|v| strings(v, &mut files));
            files.retain(|f| matches!(links::kind(f), FileKind::Trace | FileKind::Heap));
            files.retain(|f| listed(f));
            files.sort_unstable();
            files.dedup();
            RowFiles { label: &row.label, group: &row.group, files }
        })
        .filter(|x| !x.files.is_empty())
        .collect()
}

/// A file's links: a trace opens in Perfetto through `lab view` (and as the file itself),
/// its native `.pftrace` twin first (every JSON trace the lab writes has one); a heap file
/// is the file, to load in dh_view.
fn file_links(files: &[&str]) -> String {
    let mut s = String::new();
    for f in files {
        let href = e(&links::encode_path(f));
        if let Some(twin) = links::twin_of(f) {
            let _ = write!(
                s,
                "<span class=\"files\"><a class=\"trace\" data-file=\"{}\" href=\"{}\" title=\"open \
                 the native Perfetto trace in Perfetto (via lab view), while it serves this \
                 folder\">trace ⧉</a> <a class=\"trace-file\" href=\"{}\" title=\"{}\">pftrace</a>\
                 </span> ",
                e(&twin),
                e(&links::perfetto_link(links::DEFAULT_PORT, &twin)),
                e(&links::encode_path(&twin)),
                e(&twin)
            );
        }
        let _ = match links::kind(f) {
            FileKind::Trace => write!(
                s,
                "<span class=\"files\"><a class=\"trace\" data-file=\"{}\" href=\"{}\" title=\"open the \
                 Chrome JSON trace in Perfetto (via lab view), while it serves this folder\">json ⧉</a> \
                 <a class=\"trace-file\" href=\"{href}\" title=\"{}\">json</a></span> ",
                e(f),
                e(&links::perfetto_link(links::DEFAULT_PORT, f)),
                e(f)
            ),
            _ => write!(
                s,
                "<span class=\"files\"><a class=\"heap\" data-file=\"{}\" href=\"{href}\" \
                 title=\"{}: load in valgrind's dh_view.html\">heap</a><sup class=\"note\" \
                 title=\"open in valgrind's dh_view.html (Load…)\">dh_view</sup></span> ",
                e(f),
                e(f)
            ),
        };
    }
    s
}

/// For each row of `t`, the files that belong in its cells: a row that names a label (its
/// first cell) and a group (a `header=cell` pair, e.g. `P=2`) gets that row's files in a
/// column of its own (`None` key); a row per group with a column per label (the QPS table)
/// gets each label's files in that label's cell.
fn table_files<'a>(t: &Table, rf: &[RowFiles<'a>]) -> Vec<Vec<(Option<usize>, Vec<&'a str>)>> {
    let one_group = rf.windows(2).all(|w| w[0].group == w[1].group);
    t.rows
        .iter()
        .map(|row| {
            let pairs: Vec<String> =
                t.header.iter().zip(row).map(|(h, c)| format!("{h}={c}")).collect();
            let in_group = |g: &str| one_group || pairs.iter().any(|p| p == g);
            let mut out: Vec<(Option<usize>, Vec<&'a str>)> = Vec::new();
            for x in rf.iter().filter(|x| in_group(x.group)) {
                let at = if row.first().is_some_and(|c| c == x.label) {
                    None
                } else if let Some(j) = t.header.iter().position(|h| h == x.label) {
                    Some(j)
                } else {
                    continue;
                };
                match out.iter_mut().find(|(k, _)| *k == at) {
                    Some((_, v)) => v.extend(x.files.iter().copied()),
                    None => out.push((at, x.files.clone())),
                }
            }
            out
        })
        .collect()
}

/// A table in HTML, each row with its files (from [`row_files`]).
pub fn html_table_with_files(t: &Table, rf: &[RowFiles<'_>]) -> String {
    let tf = table_files(t, rf);
    let own_column = tf.iter().flatten().any(|(k, _)| k.is_none());
    let mut s = String::from("<table>\n<tr>");
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", e(h));
    }
    if own_column {
        s.push_str("<th>files</th>");
    }
    s.push_str("</tr>\n");
    for (row, files) in t.rows.iter().zip(&tf) {
        s.push_str("<tr>");
        for (j, c) in row.iter().enumerate() {
            let bad = ["INVALID", "HUNG", "CRASHED", "ERROR"].iter().any(|w| c.contains(w));
            let class = if bad { " class=\"bad\"" } else { "" };
            let extra = files.iter().find(|(k, _)| *k == Some(j)).map(|(_, f)| f.as_slice());
            let links = extra.map_or(String::new(), |f| format!("<br>{}", file_links(f)));
            let _ = write!(s, "<td{class}>{}{links}</td>", e(c).replace('\n', "<br>"));
        }
        if own_column {
            let mine = files.iter().find(|(k, _)| k.is_none()).map(|(_, f)| f.as_slice());
            let _ = write!(s, "<td class=\"text\">{}</td>", file_links(mine.unwrap_or(&[])));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if let Some(n) = &t.note {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", e(n));
    }
    s
}

/// Open: the first two tables (an experiment's headline tables come first) and the
/// failures; the rest (forks, counters, CPU, heap…) behind their titles.
fn table_open(i: usize, t: &Table) -> bool {
    i < 2 || t.title.starts_with("Failures")
}

/// `<details>` around `body` under `summary`, open or not.
fn fold(summary: &str, body: &str, open: bool) -> String {
    format!(
        "<details{}><summary>{summary}</summary>\n{body}</details>\n",
        if open { " open" } else { "" }
    )
}

/// The headline: the status, the verdict, the machine, the date and the command; the
/// environment card beside it.
fn headline(r: &Results) -> String {
    let mut s = String::from("<section class=\"headline\">\n");
    s.push_str(&environment_card(r));
    if let Some(l) = status_line(r) {
        let _ = writeln!(s, "<p class=\"bad\">{}</p>", e(&l));
    }
    if !r.verdict.is_empty() {
        s.push_str("<ul class=\"verdict\">\n");
        for v in &r.verdict {
            let _ = writeln!(s, "<li>{}</li>", e(v));
        }
        s.push_str("</ul>\n");
    }
    let _ = writeln!(
        s,
        "<p class=\"machine\">{} · {}</p>\n<p class=\"command\">Reproduce: <code>{}</code></p>",
        e(&machine_line(r)),
        e(&r.environment.date),
        e(&reproduce_command(r))
    );
    s.push_str("</section>\n");
    s
}

/// The environment's key facts as a compact box.
fn environment_card(r: &Results) -> String {
    let v = &r.environment;
    let la = v.load_average_at_start;
    let facts = [
        ("CPU", v.cpu_model.clone()),
        ("cores", format!("{} online, {} available", v.cores, v.cores_available)),
        ("memory", format!("{} MiB", v.memory_mib)),
        ("OS", format!("{} ({})", v.os, v.kernel)),
        ("build", format!("{}; {}", v.rustc, v.build_profile)),
        ("commit", format!("{}{}", v.git_commit, if v.git_dirty { " (dirty)" } else { "" })),
        (
            "runs",
            format!(
                "{} rounds ({} finished), {} warm-up + {} measured per fork",
                r.rounds.planned, r.rounds.finished, v.warmup_runs, v.measured_runs
            ),
        ),
        ("input", format!("{} messages per run", fmt_num(v.messages as f64))),
        ("allocator", v.timed_allocator.clone()),
        ("load at start", format!("{:.2} {:.2} {:.2}", la[0], la[1], la[2])),
        ("trace / heap", format!("{} / {}", v.tracing, v.heap_profiling)),
    ];
    let mut s = String::from("<aside class=\"card\"><h3>Environment</h3><dl>\n");
    for (k, x) in facts.iter().filter(|(_, x)| !x.trim().is_empty()) {
        let _ = writeln!(s, "<dt>{k}</dt><dd>{}</dd>", e(x));
    }
    s.push_str("</dl></aside>\n");
    s
}

/// The reasons table: each cell's figures on hover (`title`) and as one numbered footnote
/// per cell.
fn reasons_table(rs: &Reasons) -> String {
    let mut s = format!(
        "<h2>{}</h2>\n<table class=\"reasons\">\n<tr><th>reason</th><th>rule</th>",
        e(&rs.title)
    );
    for c in &rs.columns {
        let _ = write!(s, "<th>{}</th>", e(c));
    }
    s.push_str("</tr>\n");
    let mut notes: Vec<String> = Vec::new();
    for row in &rs.rows {
        let _ = write!(
            s,
            "<tr><td class=\"text\">{}</td><td class=\"text\"><code>{}</code></td>",
            e(&row.reason),
            e(&row.rule)
        );
        for cell in &row.cells {
            let Some(c) = cell else {
                s.push_str("<td>–</td>");
                continue;
            };
            let title: Vec<String> =
                c.figures.iter().map(|f| format!("{} = {}", f.field, fmt_num(f.value))).collect();
            // One mark per cell (a mark per figure made the table wider than the page); its
            // footnote lists every figure of the cell.
            let sup = if c.figures.is_empty() {
                String::new()
            } else {
                let listed: Vec<String> = c
                    .figures
                    .iter()
                    .map(|f| format!("<code>{}</code> = {}", e(&f.field), e(&fmt_num(f.value))))
                    .collect();
                notes.push(listed.join("; "));
                let n = notes.len();
                format!("<sup><a href=\"#figure-{n}\">{n}</a></sup>")
            };
            let _ = write!(
                s,
                "<td{} title=\"{}\">{}{sup}</td>",
                if c.fired { " class=\"fired\"" } else { "" },
                e(&title.join("\n")),
                e(&c.text)
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if let Some(n) = &rs.note {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", e(n));
    }
    if !notes.is_empty() {
        s.push_str("<ol class=\"footnotes note\">\n");
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(s, "<li id=\"figure-{}\">{n}</li>", i + 1);
        }
        s.push_str("</ol>\n");
    }
    s
}

/// The reasons, then the Why sentences (collapsed under a reasons table).
fn reasons_and_why(r: &Results) -> String {
    let mut s = r.reasons.as_ref().map_or(String::new(), reasons_table);
    if !r.why.is_empty() {
        let mut ul = String::from("<ul>\n");
        for w in &r.why {
            let _ = writeln!(
                ul,
                "<li>{} <span class=\"note\">(rule {}; {})</span></li>",
                e(&w.text),
                e(&w.rule),
                e(&super::figure_list(w))
            );
        }
        ul.push_str("</ul>\n");
        let summary = format!("<h2>Why</h2> <span class=\"note\">{} sentences</span>", r.why.len());
        s.push_str(&fold(&summary, &ul, r.reasons.is_none()));
    }
    s
}

/// The files the rows did not already link, and how to open them (collapsed).
fn files_section(r: &Results, rf: &[RowFiles<'_>]) -> String {
    let mut s = String::from("<ul>\n");
    if r.files.is_empty() {
        s.push_str("<li>No trace or heap files in this run.</li>\n");
    }
    for f in &r.files {
        let _ = writeln!(
            s,
            "<li>{}<a href=\"{}\">{}</a> ({})</li>",
            file_links(&[f.file.as_str()]).replace("<span class=\"files\">", "<span>"),
            e(&links::encode_path(&f.file)),
            e(&f.file),
            e(&f.what)
        );
    }
    s.push_str(
        "</ul>\n<p class=\"note\">Traces open in Perfetto (ui.perfetto.dev, \"Open trace file\", \
         or the trace ⧉ links while `lab view` serves this folder); heap files in valgrind's \
         dh_view.html (\"Load…\").</p>\n",
    );
    let tied: usize = rf.iter().map(|x| x.files.len()).sum();
    let summary = format!(
        "<h2>Files</h2> <span class=\"note\">{} ({tied} beside their rows)</span>",
        r.files.len()
    );
    fold(&summary, &s, false)
}

/// A list of lines, collapsed under `title`.
fn folded_list(title: &str, lines: &[String]) -> String {
    let mut s = String::from("<ul>\n");
    for l in lines {
        let _ = writeln!(s, "<li>{}</li>", e(l));
    }
    s.push_str("</ul>\n");
    fold(&format!("<h2>{title}</h2> <span class=\"note\">{}</span>", lines.len()), &s, false)
}

/// Renders report.html.
pub fn html(r: &Results) -> String {
    let mut s = String::from("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(s, "<title>{} — {}</title>", e(&r.experiment), e(&r.environment.date));
    let _ = writeln!(s, "<link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style></head><body>");
    let _ = writeln!(s, "<h1>{}</h1>", e(&r.experiment));
    s.push_str(&headline(r));
    if !r.charts.is_empty() {
        s.push_str("<div class=\"charts\">\n");
        for c in &r.charts {
            s.push_str(&chart::chart(c));
        }
        s.push_str("</div>\n");
    }
    s.push_str(&reasons_and_why(r));
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
    let rf = row_files(r);
    for (i, t) in r.tables.iter().enumerate() {
        let body = html_table_with_files(t, &rf);
        let summary = format!("<h3>{}</h3>", e(&t.title));
        s.push_str(&fold(&summary, &body, table_open(i, t)));
    }
    s.push_str(&files_section(r, &rf));
    s.push_str(&folded_list("Method", &r.method));
    let mut env = String::from("<table>\n");
    for (k, v) in r.environment.rows() {
        let _ = writeln!(env, "<tr><th>{}</th><td class=\"text\">{}</td></tr>", e(k), e(&v));
    }
    env.push_str("</table>\n");
    s.push_str(&fold(
        "<h2>Environment</h2> <span class=\"note\">the full record</span>",
        &env,
        false,
    ));
    if !r.notes.is_empty() {
        s.push_str(&folded_list("Notes", &r.notes));
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Figure, ReasonCell, ReasonRow};

    #[test]
    fn a_reasons_cell_has_one_mark_whose_footnote_lists_all_its_figures() {
        let fig = |f: &str, v: f64| Figure { field: f.into(), value: v };
        let cell = ReasonCell {
            text: "1.00 vs 0.001".into(),
            figures: vec![
                fig("results[0].a", 1.0),
                fig("results[1].a", 0.001),
                fig("ratios[2].median", 3.5),
            ],
            fired: true,
        };
        let rs = Reasons {
            title: "Reasons".into(),
            columns: vec!["x/y P=1".into(), "x/y P=2".into()],
            rows: vec![ReasonRow {
                reason: "allocations per message".into(),
                rule: "allocation".into(),
                cells: vec![
                    Some(cell.clone()),
                    Some(ReasonCell { figures: vec![cell.figures[0].clone()], ..cell }),
                ],
            }],
            note: None,
        };
        let s = reasons_table(&rs);
        assert_eq!(s.matches("<sup>").count(), 2, "one mark per cell: {s}");
        assert_eq!(s.matches("href=\"#figure-").count(), 2, "{s}");
        let notes: Vec<&str> = s.lines().filter(|l| l.starts_with("<li id=\"figure-")).collect();
        assert_eq!(notes.len(), 2, "{s}");
        for f in ["results[0].a", "results[1].a", "ratios[2].median"] {
            assert!(notes[0].contains(f), "the first cell's footnote lists {f}: {}", notes[0]);
        }
        assert!(!notes[1].contains("ratios[2].median"));
        // The hover title still names every figure of the cell.
        let title: Vec<String> = ["results[0].a", "results[1].a", "ratios[2].median"]
            .iter()
            .zip([1.0, 0.001, 3.5])
            .map(|(f, v)| format!("{f} = {}", fmt_num(v)))
            .collect();
        assert!(s.contains(&format!("title=\"{}\"", title.join("\n"))), "{s}");
    }
}
