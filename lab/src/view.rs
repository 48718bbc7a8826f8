//! `lab view [run-folder|file]`: serves a run folder to the Perfetto UI and prints how to
//! open each file.
//!
//! Perfetto's documented route for a trace on this machine: serve it on `127.0.0.1:9001`
//! with CORS allowing `https://ui.perfetto.dev`, then open
//! `https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/<file>` (the UI's content security
//! policy lets it fetch from that port only). The server is a small HTTP/1.1 file server on
//! `std::net`: `GET`, `HEAD` and `OPTIONS` (the CORS preflight, with Chrome's
//! private-network answer), regular files directly inside the folder only (no `..`, no
//! hidden files, no symlinks leading out: 403/404), `Content-Length`, one request per
//! connection. `/` lists the folder with the deep links. Heap files are opened in valgrind's
//! `dh_view.html` with its "Load…" button; the instructions are printed.
//!
//! Runs until Ctrl-C, or for `--for <secs>` / `--requests <n>` (used by the tests). A port in
//! use is one line on stderr and exit code 2.

use crate::error::Error;
use crate::report::links::{
    encode_path, html_escape, kind, native_first, perfetto_link, FileKind, DEFAULT_PORT,
    PERFETTO_ORIGIN,
};
use clap::Args;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Where Debian's valgrind puts dh_view.
pub const DH_VIEW: &str = "/usr/libexec/valgrind/dh_view.html";

/// Options of `lab view`.
#[derive(Args, Debug, Clone)]
pub struct ViewArgs {
    /// A run folder, or a file in one [default: the newest run folder under traces/].
    pub target: Option<PathBuf>,
    /// Port on 127.0.0.1 (Perfetto's UI fetches from 9001 only; 0 picks a free port).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Stop after this many seconds [default: run until Ctrl-C].
    #[arg(long = "for", value_name = "SECS")]
    pub for_secs: Option<u64>,
    /// Stop after answering this many requests.
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,
    /// Do not try to open a browser.
    #[arg(long)]
    pub no_open: bool,
}

fn decode_path(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The newest run folder (one holding a `results.json`) under `traces/<experiment>/`.
pub fn newest_run(traces: &Path) -> Option<PathBuf> {
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for exp in std::fs::read_dir(traces).ok()?.flatten() {
        let Ok(runs) = std::fs::read_dir(exp.path()) else { continue };
        for run in runs.flatten() {
            let p = run.path();
            if run.file_name() == "latest" {
                continue;
            }
            let Ok(m) = std::fs::metadata(p.join("results.json")).and_then(|m| m.modified()) else {
                continue;
            };
            if best.as_ref().is_none_or(|(t, _)| m > *t) {
                best = Some((m, p));
            }
        }
    }
    best.map(|(_, p)| p)
}

/// Regular, visible files directly inside `dir`, sorted by name.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

/// `lab view`: returns the exit code, or a one-line error: a folder, file or port that
/// cannot be served is bad input (exit 2); the server failing once started, exit 1.
pub fn run(a: ViewArgs) -> Result<i32, Error> {
    let (dir, focus) = match &a.target {
        Some(t) if t.is_dir() => (t.clone(), None),
        Some(t) if t.is_file() => {
            let dir = t.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            (dir.to_path_buf(), t.file_name().and_then(|n| n.to_str()).map(str::to_string))
        }
        Some(t) => return Err(Error::Usage(format!("no such file or folder: {}", t.display()))),
        None => {
            let traces = crate::machine::workspace_root().join("traces");
            let d = newest_run(&traces).ok_or_else(|| {
                Error::Usage(format!(
                    "no run folder (with a results.json) under {}; run an experiment first \
                     (e.g. `lab disruptor-vs-lbq`) or name a folder",
                    traces.display()
                ))
            })?;
            (d, None)
        }
    };
    let root = dir
        .canonicalize()
        .map_err(|e| Error::Usage(format!("cannot open {}: {e}", dir.display())))?;
    let listener = match TcpListener::bind(("127.0.0.1", a.port)) {
        Ok(l) => l,
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
            return Err(Error::Usage(format!(
                "port {} on 127.0.0.1 is in use (another `lab view`?); stop it or pass --port",
                a.port
            )))
        }
        Err(e) => return Err(Error::Usage(format!("cannot listen on 127.0.0.1:{}: {e}", a.port))),
    };
    let port =
        listener.local_addr().map_err(|e| Error::Failed(format!("listening socket: {e}")))?.port();
    let files = listing(&root);
    let mut out = String::new();
    out += &format!("lab view: serving {} on http://127.0.0.1:{port}/\n", root.display());
    let first_link = print_links(&mut out, &root, &files, focus.as_deref(), port);
    if port != DEFAULT_PORT {
        out += &format!(
            "note: Perfetto's UI fetches traces from port {DEFAULT_PORT} only; the deep links \
             above need `--port {DEFAULT_PORT}` (this server still answers on {port})\n"
        );
    }
    let stop = match (a.for_secs, a.requests) {
        (None, None) => "Ctrl-C to stop".to_string(),
        (s, n) => {
            let mut v = Vec::new();
            if let Some(s) = s {
                v.push(format!("{s} s"));
            }
            if let Some(n) = n {
                v.push(format!("{n} request(s)"));
            }
            format!("stops after {} or Ctrl-C", v.join(" or "))
        }
    };
    out += &format!("lab view: ready ({stop})\n");
    say(&out);
    if !a.no_open {
        if let Some(link) = first_link {
            open_browser(&link);
        }
    }
    let deadline = a.for_secs.map(|s| Instant::now() + Duration::from_secs(s));
    serve(&listener, &root, deadline, a.requests)
        .map_err(|e| Error::Failed(format!("server: {e}")))?;
    say("lab view: stopped\n");
    Ok(0)
}

fn say(s: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// Appends the links and instructions for `files`; returns the link to open first.
fn print_links(
    out: &mut String,
    root: &Path,
    files: &[String],
    focus: Option<&str>,
    port: u16,
) -> Option<String> {
    let mut ordered: Vec<&String> = files.iter().collect();
    if let Some(f) = focus {
        ordered.sort_by_key(|n| n.as_str() != f);
    }
    let mut traces: Vec<&String> =
        ordered.iter().copied().filter(|n| kind(n) == FileKind::Trace).collect();
    // The focused file's stem first, then by stem; each `.pftrace` before its JSON twin.
    native_first(&mut traces);
    if let Some(f) = focus {
        let stem = |n: &str| {
            n.strip_suffix(".pftrace")
                .or_else(|| n.strip_suffix(".trace.json"))
                .unwrap_or(n)
                .to_owned()
        };
        let fs = stem(f);
        traces.sort_by_key(|n| stem(n) != fs);
    }
    let heaps: Vec<&&String> = ordered.iter().filter(|n| kind(n) == FileKind::Heap).collect();
    if files.iter().any(|f| f == "report.html") {
        *out += &format!("report: http://127.0.0.1:{port}/report.html\n");
    }
    if traces.is_empty() {
        *out += "no trace files (*.pftrace, *.trace.json) in this folder\n";
    } else {
        *out += "traces, open in Perfetto:\n";
        for t in &traces {
            *out += &format!("  {t}\n    {}\n", perfetto_link(port, t));
        }
    }
    if !heaps.is_empty() {
        let viewer = if Path::new(DH_VIEW).is_file() {
            format!("file://{DH_VIEW}")
        } else {
            format!("valgrind's dh_view.html ({DH_VIEW} once valgrind is installed)")
        };
        *out += &format!(
            "heap profiles, open in dh_view: open {viewer} in a browser, press \"Load…\" and \
             choose the file:\n"
        );
        for h in &heaps {
            *out += &format!("  {}\n", root.join(h.as_str()).display());
        }
    }
    let first = traces.first().map(|t| perfetto_link(port, t));
    first.or_else(|| {
        files
            .iter()
            .any(|f| f == "report.html")
            .then(|| format!("http://127.0.0.1:{port}/report.html"))
    })
}

fn open_browser(link: &str) {
    let opener = ["xdg-open", "open"].into_iter().find(|c| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(c).is_file()))
    });
    let Some(opener) = opener else {
        say("note: no xdg-open here to open a browser; open the link above yourself\n");
        return;
    };
    match std::process::Command::new(opener)
        .arg(link)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        // Reap it when it ends; its outcome is only a convenience.
        Ok(mut c) => drop(std::thread::spawn(move || c.wait())),
        Err(e) => say(&format!("note: could not run {opener} ({e}); open the link above\n")),
    }
}

/// Accepts connections until the deadline or the request count; each on its own thread.
fn serve(
    listener: &TcpListener,
    root: &Path,
    deadline: Option<Instant>,
    max_requests: Option<u64>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let served = Arc::new(AtomicU64::new(0));
    let mut accepted = 0u64;
    let mut handlers = Vec::new();
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if max_requests.is_some_and(|n| accepted >= n) {
            break;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                accepted += 1;
                let root = root.to_path_buf();
                let served = served.clone();
                handlers.push(std::thread::spawn(move || {
                    let _ = handle(stream, &root);
                    served.fetch_add(1, Ordering::SeqCst);
                }));
                handlers.retain(|h| !h.is_finished());
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                say(&format!("note: accept failed: {e}\n"));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    // Let answers in flight finish (each has a read and write timeout).
    for h in handlers {
        let _ = h.join();
    }
    Ok(())
}

/// A parsed request head.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn read_head(stream: &TcpStream) -> io::Result<Option<Request>> {
    let mut r = BufReader::new(stream.take(16 * 1024));
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Ok(None);
    };
    if !version.starts_with("HTTP/1.") {
        return Ok(None);
    }
    let mut req =
        Request { method: method.to_string(), target: target.to_string(), headers: Vec::new() };
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 {
            return Ok(None); // head cut short or over 16 KiB
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            req.headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok(Some(req))
}

/// Why a path is not served.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: not a path, or bad percent-encoding.
    BadRequest,
    /// 403: leaves the folder (`..`, a symlink out) or names a hidden file.
    Forbidden,
    /// 404: no such regular file.
    NotFound,
}

/// What a request target names inside `root` (canonical): `None` for the folder listing.
pub fn resolve(root: &Path, target: &str) -> Result<Option<PathBuf>, Refusal> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(Refusal::BadRequest);
    }
    let decoded = decode_path(path).ok_or(Refusal::BadRequest)?;
    if decoded.contains(['\0', '\\']) {
        return Err(Refusal::BadRequest);
    }
    let mut p = root.to_path_buf();
    let mut depth = 0;
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(Refusal::Forbidden),
            s if s.starts_with('.') => return Err(Refusal::Forbidden),
            s => {
                p.push(s);
                depth += 1;
            }
        }
    }
    if depth == 0 {
        return Ok(None);
    }
    let canon = p.canonicalize().map_err(|_| Refusal::NotFound)?;
    if !canon.starts_with(root) || canon.parent() != Some(root) {
        // A symlink leading out of the folder, or into a subfolder: only the folder's own
        // files are served.
        return Err(Refusal::Forbidden);
    }
    if !canon.is_file() {
        return Err(Refusal::NotFound);
    }
    Ok(Some(canon))
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or("") {
        "json" => "application/json",
        "html" => "text/html; charset=utf-8",
        "md" | "txt" | "csv" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "css" => "text/css",
        "js" => "text/javascript",
        _ => "application/octet-stream",
    }
}

fn status_text(code: u16) -> &'static str {
    match code {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    }
}

fn write_head(
    w: &mut impl Write,
    code: u16,
    len: u64,
    ctype: &str,
    extra: &[(&str, String)],
) -> io::Result<()> {
    let mut h = format!("HTTP/1.1 {code} {}\r\n", status_text(code));
    h += &format!("Access-Control-Allow-Origin: {PERFETTO_ORIGIN}\r\n");
    h += &format!("Content-Length: {len}\r\n");
    if !ctype.is_empty() {
        h += &format!("Content-Type: {ctype}\r\n");
    }
    for (k, v) in extra {
        h += &format!("{k}: {v}\r\n");
    }
    h += "Cache-Control: no-cache\r\nConnection: close\r\n\r\n";
    w.write_all(h.as_bytes())
}

fn handle(stream: TcpStream, root: &Path) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(60)))?;
    let Some(req) = read_head(&stream)? else { return Ok(()) };
    let mut w = io::BufWriter::new(&stream);
    let head_only = req.method == "HEAD";
    let text = |w: &mut io::BufWriter<&TcpStream>, code: u16, body: &str| -> io::Result<()> {
        let extra = if code == 405 {
            vec![("Allow", "GET, HEAD, OPTIONS".to_string())]
        } else {
            Vec::new()
        };
        write_head(w, code, body.len() as u64, "text/plain; charset=utf-8", &extra)?;
        if !head_only {
            w.write_all(body.as_bytes())?;
        }
        Ok(())
    };
    match req.method.as_str() {
        "OPTIONS" => {
            let mut extra = vec![
                ("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS".to_string()),
                (
                    "Access-Control-Allow-Headers",
                    req.header("Access-Control-Request-Headers").unwrap_or("*").to_string(),
                ),
                ("Access-Control-Max-Age", "600".to_string()),
            ];
            // Chrome asks before a public page reaches a loopback address.
            if req.header("Access-Control-Request-Private-Network").is_some() {
                extra.push(("Access-Control-Allow-Private-Network", "true".to_string()));
            }
            write_head(&mut w, 204, 0, "", &extra)?;
        }
        "GET" | "HEAD" => match resolve(root, &req.target) {
            Ok(Some(path)) => {
                let mut f = std::fs::File::open(&path)?;
                let len = f.metadata()?.len();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                write_head(&mut w, 200, len, content_type(name), &[])?;
                if !head_only {
                    io::copy(&mut f, &mut w)?;
                }
            }
            Ok(None) => {
                let body = index_page(root, port_of(&stream));
                write_head(&mut w, 200, body.len() as u64, "text/html; charset=utf-8", &[])?;
                if !head_only {
                    w.write_all(body.as_bytes())?;
                }
            }
            Err(Refusal::BadRequest) => text(&mut w, 400, "bad request path\n")?,
            Err(Refusal::Forbidden) => text(&mut w, 403, "outside the served folder\n")?,
            Err(Refusal::NotFound) => text(&mut w, 404, "no such file in the served folder\n")?,
        },
        _ => text(&mut w, 405, "only GET, HEAD and OPTIONS\n")?,
    }
    w.flush()
}

fn port_of(s: &TcpStream) -> u16 {
    s.local_addr().map(|a| a.port()).unwrap_or(DEFAULT_PORT)
}

/// The page at `/`: every file, with the Perfetto deep link for traces.
fn index_page(root: &Path, port: u16) -> String {
    let mut s = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>lab view</title></head>\
         <body style=\"font-family:sans-serif\"><h1>{}</h1><ul>\n",
        html_escape(&root.display().to_string())
    );
    for f in listing(root) {
        let href = html_escape(&encode_path(&f));
        s += &format!("<li><a href=\"{href}\">{}</a>", html_escape(&f));
        match kind(&f) {
            FileKind::Trace => {
                s += &format!(
                    " — <a href=\"{}\">open in Perfetto</a>",
                    html_escape(&perfetto_link(port, &f))
                )
            }
            FileKind::Heap => s += " — dh_view: \"Load…\" this file",
            _ => {}
        }
        s += "</li>\n";
    }
    s += "</ul></body></html>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("lab-view-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let run = base.join("run");
        std::fs::create_dir_all(run.join("sub")).unwrap();
        std::fs::write(run.join("a b.trace.json"), "{}").unwrap();
        std::fs::write(run.join(".hidden"), "x").unwrap();
        std::fs::write(run.join("sub/inner.json"), "x").unwrap();
        std::fs::write(base.join("secret.txt"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("secret.txt"), run.join("link.txt")).unwrap();
        (base.clone(), run.canonicalize().unwrap())
    }

    #[test]
    fn resolve_refuses_what_is_outside() {
        let (base, root) = folder();
        assert_eq!(resolve(&root, "/a%20b.trace.json?x=1"), Ok(Some(root.join("a b.trace.json"))));
        assert_eq!(resolve(&root, "/"), Ok(None));
        assert_eq!(resolve(&root, "/../secret.txt"), Err(Refusal::Forbidden));
        assert_eq!(resolve(&root, "/%2e%2e/secret.txt"), Err(Refusal::Forbidden));
        assert_eq!(resolve(&root, "/link.txt"), Err(Refusal::Forbidden));
        assert_eq!(resolve(&root, "/.hidden"), Err(Refusal::Forbidden));
        assert_eq!(resolve(&root, "/sub/inner.json"), Err(Refusal::Forbidden));
        assert_eq!(resolve(&root, "/sub"), Err(Refusal::NotFound));
        assert_eq!(resolve(&root, "/missing.json"), Err(Refusal::NotFound));
        assert_eq!(resolve(&root, "/%zz"), Err(Refusal::BadRequest));
        assert_eq!(resolve(&root, "/a%5cb"), Err(Refusal::BadRequest));
        assert_eq!(resolve(&root, "http://x/"), Err(Refusal::BadRequest));
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn links_are_perfettos_route() {
        assert_eq!(
            perfetto_link(9001, "ring-p2.trace.json"),
            "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/ring-p2.trace.json"
        );
        assert_eq!(
            perfetto_link(9001, "a b[1].json"),
            format!("{PERFETTO_ORIGIN}/#!/?url=http://127.0.0.1:9001/a%20b%5B1%5D.json")
        );
        assert_eq!(decode_path("/a%20b%5B1%5D.json").as_deref(), Some("/a b[1].json"));
        assert_eq!(kind("x.dhat-heap.json"), FileKind::Heap);
        assert_eq!(kind("x.trace.json"), FileKind::Trace);
        assert_eq!(kind("x.pftrace"), FileKind::Trace);
        assert_eq!(crate::report::links::twin_of("a.b.trace.json").as_deref(), Some("a.b.pftrace"));
        assert_eq!(crate::report::links::twin_of("x.pftrace"), None);
        assert_eq!(kind("results.json"), FileKind::Other);
    }

    #[test]
    fn newest_run_picks_the_latest_results() {
        let base = std::env::temp_dir().join(format!("lab-view-newest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let old = base.join("exp-a/20260101-000000");
        let new = base.join("exp-b/20260102-000000");
        let empty = base.join("exp-b/20260103-000000");
        for d in [&old, &new, &empty] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(old.join("results.json"), "{}").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(new.join("results.json"), "{}").unwrap();
        assert_eq!(newest_run(&base), Some(new));
        assert_eq!(newest_run(&base.join("none")), None);
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn the_native_trace_is_offered_before_its_json_twin() {
        let files: Vec<String> =
            ["b.trace.json", "a.trace.json", "a.pftrace", "b.pftrace", "report.html"]
                .map(String::from)
                .to_vec();
        let mut out = String::new();
        let first = print_links(&mut out, Path::new("/x"), &files, None, 9001);
        assert_eq!(first.as_deref(), Some(perfetto_link(9001, "a.pftrace").as_str()));
        let at = |f: &str| out.find(&format!("  {f}\n")).unwrap_or_else(|| panic!("{f}: {out}"));
        assert!(at("a.pftrace") < at("a.trace.json") && at("a.trace.json") < at("b.pftrace"));
        assert!(at("b.pftrace") < at("b.trace.json"), "{out}");
        let mut out = String::new();
        let first = print_links(&mut out, Path::new("/x"), &files, Some("b.trace.json"), 9001);
        assert_eq!(first.as_deref(), Some(perfetto_link(9001, "b.pftrace").as_str()));
    }
}
