//! The one report writer: the terminal, `report.md` and `report.html` (one stylesheet,
//! inline SVG charts) from the same [`Results`], and the atomic writes of the run's files.
//!
//! Order matters: the terminal tables come first, whatever then happens to the files; each
//! file is written to a temporary name and renamed, so a reader never sees a truncated one.

pub mod chart;
pub mod html;
pub mod links;

pub use chart::{line_chart, Series};
pub use html::html;

use crate::results::{Results, Table};
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

/// The machine in one line: CPU model, cores, memory, OS.
pub fn machine_line(r: &Results) -> String {
    let v = &r.environment;
    format!(
        "{}, {} cores ({} available to the lab), {} MiB, {}",
        if v.cpu_model.is_empty() { "unknown CPU" } else { &v.cpu_model },
        v.cores,
        v.cores_available,
        v.memory_mib,
        v.os
    )
}

/// `'a b'` for a word the shell would split or expand; the word itself otherwise.
fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,=:+%@".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The command that reproduces the run: the recorded command line with the binary as
/// `lab`; for results without one, `lab <experiment>` and the options of `config` (its
/// `shared` and `experiment` objects, each field as `--field value`).
pub fn reproduce_command(r: &Results) -> String {
    let recorded = r.environment.command.trim();
    if let Some((_, rest)) = recorded.split_once(' ') {
        return format!("lab {}", rest.trim());
    }
    let mut s = format!("lab {}", r.experiment);
    for part in ["shared", "experiment"] {
        let Some(serde_json::Value::Object(m)) = r.config.get(part) else { continue };
        for (k, v) in m {
            let flag = format!("--{}", k.replace('_', "-"));
            let value = match v {
                serde_json::Value::Bool(true) => Some(None),
                serde_json::Value::String(x) => Some(Some(x.clone())),
                serde_json::Value::Number(n) => Some(Some(n.to_string())),
                serde_json::Value::Array(a) if !a.is_empty() => Some(Some(
                    a.iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(","),
                )),
                _ => None,
            };
            match value {
                Some(Some(x)) => {
                    let _ = write!(s, " {flag} {}", shell_word(&x));
                }
                Some(None) => {
                    let _ = write!(s, " {flag}");
                }
                None => {}
            }
        }
    }
    s
}

/// The reasons table in Markdown, each cell's figures as numbered footnotes.
fn md_reasons(rs: &crate::results::Reasons) -> String {
    let mut header = vec!["reason".to_string(), "rule".to_string()];
    header.extend(rs.columns.iter().cloned());
    let mut t = Table { title: rs.title.clone(), header, ..Default::default() };
    let mut notes = Vec::new();
    for row in &rs.rows {
        let mut line = vec![row.reason.clone(), format!("`{}`", row.rule)];
        for c in &row.cells {
            line.push(c.as_ref().map_or("–".into(), |c| {
                let marks: Vec<String> = c
                    .figures
                    .iter()
                    .map(|f| {
                        notes.push(format!("`{}` = {}", f.field, fmt_num(f.value)));
                        format!("[{}]", notes.len())
                    })
                    .collect();
                let text = if c.fired { format!("**{}**", c.text) } else { c.text.clone() };
                format!("{text} {}", marks.join(""))
            }));
        }
        t.rows.push(line);
    }
    t.note = rs.note.clone();
    let mut s = md_table(&t);
    for (i, n) in notes.iter().enumerate() {
        let _ = writeln!(s, "{}. {n}", i + 1);
    }
    if !notes.is_empty() {
        s.push('\n');
    }
    s
}

/// Renders report.md: the verdict, the machine, the date and the command first; then the
/// reasons, the tables and the rest.
pub fn markdown(r: &Results) -> String {
    let mut s = format!("# {} — {}\n\n", r.experiment, r.environment.date);
    if let Some(l) = status_line(r) {
        let _ = writeln!(s, "**{l}**\n");
    }
    for v in &r.verdict {
        let _ = writeln!(s, "- **{v}**");
    }
    if !r.verdict.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{} · {}\n\nReproduce: `{}`\n",
        machine_line(r),
        r.environment.date,
        reproduce_command(r)
    );
    if let Some(rs) = &r.reasons {
        s.push_str(&md_reasons(rs));
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
            // A JSON trace's native Perfetto twin first.
            let twin = links::twin_of(&f.file).map_or(String::new(), |t| format!("[{t}]({t}) · "));
            let _ = writeln!(s, "- {twin}[{}]({}) — {}", f.file, f.file, f.what);
        }
        s.push_str("\nTraces open in Perfetto (ui.perfetto.dev, or `lab view`), the `.pftrace` (Perfetto's own format, with the kernel's thread states) before its JSON twin; heap files in dh_view.html.\n\n");
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
