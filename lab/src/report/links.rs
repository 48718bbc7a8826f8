//! Where a run's files open: the kind of each file by its name, Perfetto's deep link
//! through `lab view`, and HTML escaping for the pages that link them.

/// The origin `lab view` allows (CORS): Perfetto's UI.
pub const PERFETTO_ORIGIN: &str = "https://ui.perfetto.dev";

/// The port the Perfetto UI may fetch from (its content security policy names it).
pub const DEFAULT_PORT: u16 = 9001;

/// The deep link that opens `file` (relative to the served folder) in Perfetto's UI.
pub fn perfetto_link(port: u16, file: &str) -> String {
    format!("{PERFETTO_ORIGIN}/#!/?url=http://127.0.0.1:{port}/{}", encode_path(file))
}

/// Percent-encodes everything but RFC 3986 unreserved characters and `/`.
pub fn encode_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a file in a run folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A trace for Perfetto: Chrome-trace JSON (`*.trace.json`) or its native Perfetto
    /// twin (`*.pftrace`, see [`twin_of`]).
    Trace,
    /// A dhat profile (`*.dhat-heap.json`): dh_view.
    Heap,
    /// The run's HTML report.
    Report,
    /// Anything else.
    Other,
}

/// Classifies a file by its name.
pub fn kind(name: &str) -> FileKind {
    if name.ends_with(".trace.json") || name.ends_with(".pftrace") {
        FileKind::Trace
    } else if name.ends_with(".dhat-heap.json") {
        FileKind::Heap
    } else if name.ends_with(".html") {
        FileKind::Report
    } else {
        FileKind::Other
    }
}

/// The native Perfetto trace the lab writes beside a JSON trace: `x.trace.json` →
/// `x.pftrace` (as `pftrace::twin_path` names it); `None` for any other name.
pub fn twin_of(name: &str) -> Option<String> {
    name.strip_suffix(".trace.json").map(|stem| format!("{stem}.pftrace"))
}

/// Traces in the order to offer them: by stem, each `.pftrace` before its JSON twin (it
/// loads faster and carries the kernel's thread states); other files keep their places
/// after them.
pub fn native_first(names: &mut [&String]) {
    let key = |n: &str| match n.strip_suffix(".pftrace") {
        Some(stem) => (stem.to_owned(), 0),
        None => (n.strip_suffix(".trace.json").unwrap_or(n).to_owned(), 1),
    };
    names.sort_by_key(|n| key(n));
}

/// Escapes text for HTML (element content and double-quoted attributes).
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
