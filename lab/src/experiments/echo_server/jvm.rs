//! The JVM servers of `echo-server`: seed 003's own design in Java, `java-nio` (ReactiveJ's
//! reactor pattern: one `Selector` thread accepting, reading and writing,
//! tools/jvm/bus/src/main/java/NioEcho.java, plain JDK), and the Java server a user would pick, `netty`
//! (Netty 4.2, one boss and one worker `NioEventLoopGroup`, `HttpServerCodec`,
//! tools/jvm/netty/src/main/java/NettyEcho.java). Both answer with the Rust server's bytes.
//!
//! A fork starts the server as its child (`java FLAGS -cp … NioEcho --port P`), in its
//! process group like nginx, so the watchdog and Ctrl-C kill it with the fork. The fork
//! brackets each load-generator run with `run_start I PHASE` / `run_end I PHASE` on the
//! server's stdin; the server answers with the protocol's run marks (tools/jvm/bus/src/main/java/Protocol.java)
//! and its GC account of the run, and the fork reads the perf counters of every thread of
//! the java process as it reads each mark ([`JvmCounters`]), so a run's counts are those
//! between its marks. The first answer is also the readiness signal: the server reads its
//! stdin only once it listens. `stop` ends it with the `done` line and its account.

use crate::measure::jvm as mjvm;
use crate::profile::counters::RunCounters;
use crate::profile::jvm_counters::JvmCounters;
use crate::protocol::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// The JVM servers: name, main class, the tools/jvm group it needs (`None`: the base build).
pub const SERVERS: [(&str, &str, Option<&str>); 2] =
    [("java-nio", "NioEcho", None), ("netty", "NettyEcho", Some("netty"))];

/// The heap the servers run with: a 1 KiB document and a few thousand connections need
/// little, so it is fixed small (`-Xms` = `-Xmx`, pre-touched at start, outside the runs).
pub const HEAP_BYTES: u64 = 256 << 20;

/// How long the fork waits for an answer of the server (a JVM start under load included).
const ANSWER: Duration = Duration::from_secs(60);

/// The JVM server a name stands for (`fault-java-nio` → java-nio's entry).
pub fn server(name: &str) -> Option<(&'static str, &'static str, Option<&'static str>)> {
    let base = name.strip_prefix("fault-").unwrap_or(name);
    SERVERS.iter().copied().find(|s| s.0 == base)
}

/// Whether `name` is a JVM server (or its planted fault).
pub fn is_jvm(name: &str) -> bool {
    server(name).is_some()
}

/// Why JVM server `name` cannot run here, with the install command; `None` when it can.
pub fn unavailable(name: &str) -> Option<String> {
    match server(name)?.2 {
        None => mjvm::unavailable(),
        Some(group) => mjvm::group_unavailable(group),
    }
}

/// What a fork of a JVM server is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JvmCell {
    /// The main class.
    pub class: String,
    /// The class path (tools/jvm built by Maven in the parent).
    pub class_path: String,
    /// Every JVM flag given, in order (the collector's, then `--jvm-flags`).
    pub flags: String,
    /// The `--jvm-gc` setting.
    pub gc: String,
    /// `--fault short-body`: the document 100 bytes short, every run INVALID.
    pub short_body: bool,
}

impl JvmCell {
    /// The server as the launcher starts it: the default JDK, these flags, this class path.
    pub fn program(&self) -> crate::measure::jvm_program::JvmProgram {
        crate::measure::jvm_program::JvmProgram {
            java: crate::measure::jvm_program::DEFAULT_JAVA.to_string(),
            flags: self.flags.split_whitespace().map(str::to_string).collect(),
            class_path: self.class_path.clone(),
            main_class: self.class.clone(),
        }
    }
}

/// Builds the server's classes and its cell (in the parent, once per run).
pub fn cell(name: &str, gc: &str, extra_flags: &str) -> Result<JvmCell, String> {
    let (_, class, group) = server(name).ok_or_else(|| format!("not a JVM server: {name}"))?;
    let class_path = match group {
        None => mjvm::build()?,
        Some(g) => mjvm::build_group(g)?,
    };
    let gc_flags =
        mjvm::gc_flags(gc, HEAP_BYTES).ok_or_else(|| format!("unknown --jvm-gc {gc}"))?;
    Ok(JvmCell {
        class: class.into(),
        class_path,
        flags: format!("{gc_flags} {extra_flags}").trim().to_string(),
        gc: gc.into(),
        short_body: name.starts_with("fault-"),
    })
}

/// One measured run's JVM figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JvmRun {
    /// Collections during the run (GarbageCollectorMXBean, summed over the collectors).
    pub gc_count: u64,
    /// Their time, ms.
    pub gc_ms: f64,
    /// perf counters of the java process's threads during the run, per request: the
    /// process and by thread (`echo-*` are the server's, the JVM's own by kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<RunCounters>,
}

/// What a JVM server fork reports beside its runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JvmAccount {
    /// The main class.
    pub program: String,
    /// The flags the lab gave the JVM.
    pub flags: String,
    /// The `--jvm-gc` setting.
    pub gc: String,
    /// The JVM's own account: version, the flags it saw, its collectors, max heap.
    pub jvm: Value,
    /// Netty's version (netty only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netty_version: Option<String>,
    /// The planted fault, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// The measured runs, in order.
    pub runs: Vec<JvmRun>,
}

/// The server's own account, as it writes it in `done`.
#[derive(Debug, Deserialize)]
struct Done {
    requests_served: u64,
    bad_requests: u64,
    errors: u64,
    event_loop_iterations: Option<u64>,
    connections_accepted: u64,
    partial_writes: Option<u64>,
    fatal: Option<String>,
    jvm: Value,
    #[serde(default)]
    netty_version: Option<String>,
    fault: Option<String>,
    runs: Vec<DoneRun>,
}

#[derive(Debug, Deserialize)]
struct DoneRun {
    phase: String,
    gc_count: u64,
    gc_ms: f64,
}

/// A running JVM server.
#[derive(Debug)]
pub struct JvmServer {
    cell: JvmCell,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    addr: SocketAddr,
    counters: Option<JvmCounters>,
}

impl JvmServer {
    /// Starts the server on 127.0.0.1:`port` (0: a free port chosen now); perf counters on
    /// its threads when `timed`. Ready once the first mark is answered.
    pub fn start(cell: &JvmCell, port: u16, timed: bool) -> Result<JvmServer, String> {
        let port = if port == 0 { free_port()? } else { port };
        let mut cmd = cell.program().command(None, &["--port", &port.to_string()]);
        if cell.short_body {
            cmd.args(["--fault", "short-body"]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start java: {e}"))?;
        let counters = timed.then(|| JvmCounters::start(child.id()));
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        Ok(JvmServer { cell: cell.clone(), child, stdin, lines, addr, counters })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn send(&mut self, command: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the server's stdin is closed")?;
        writeln!(stdin, "{command}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: cannot send '{command}': {e}", self.cell.class))
    }

    /// The next line of the server, fed to the counters; an error when it ended or failed.
    fn next_line(&mut self) -> Result<String, String> {
        let line = match self.lines.recv_timeout(ANSWER) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!("{} did not answer within {ANSWER:?}", self.cell.class))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map_or("unknown".into(), |s| s.to_string());
                return Err(format!("{} ended ({status}) without answering", self.cell.class));
            }
        };
        if let Some(c) = &mut self.counters {
            c.line(&line);
        }
        if let Ok(Message::Failed { error }) = serde_json::from_str::<Message>(&line) {
            return Err(format!("{}: {error}", self.cell.class));
        }
        Ok(line)
    }

    /// Marks the start or end of run `run` and waits for the server's mark (the counters
    /// are read as it arrives).
    pub fn mark(&mut self, start: bool, run: usize, phase: &str) -> Result<(), String> {
        let word = if start { "run_start" } else { "run_end" };
        self.send(&format!("{word} {run} {phase}"))?;
        loop {
            let line = self.next_line()?;
            let m = crate::protocol::RunMark::parse(&line);
            if m.is_some_and(|m| m.start == start && m.run == run as u64) {
                return Ok(());
            }
        }
    }

    /// Stops it: `stop`, its `done` line, its exit. The echo server's account (for the
    /// server table) and the JVM's. `requests`: per run, for the counters' per-request
    /// figures; `measured`, `all`: measured runs and all runs (warm-up first).
    pub fn stop(
        mut self,
        requests: u64,
        measured: usize,
        all: usize,
    ) -> Result<(super::Server, JvmAccount), String> {
        self.send("stop")?;
        self.stdin = None;
        let done = loop {
            let line = self.next_line()?;
            if let Ok(Message::Done { outcome, .. }) = serde_json::from_str::<Message>(&line) {
                break outcome;
            }
        };
        let status = self.child.wait().map_err(|e| format!("waiting for java: {e}"))?;
        if !status.success() {
            return Err(format!("{} exited with {status} after its outcome", self.cell.class));
        }
        let d: Done = serde_json::from_value(done)
            .map_err(|e| format!("unreadable outcome of {}: {e}", self.cell.class))?;
        let counted = match self.counters.take() {
            Some(c) => c.finish(measured, all, requests, requests * all as u64),
            None => Vec::new(),
        };
        let per_run = counted.len() == measured;
        let runs = d
            .runs
            .iter()
            .filter(|r| r.phase == "measured")
            .enumerate()
            .map(|(k, r)| JvmRun {
                gc_count: r.gc_count,
                gc_ms: r.gc_ms,
                counters: counted.get(if per_run { k } else { 0 }).cloned(),
            })
            .collect();
        let mut not_counted = Vec::new();
        if d.event_loop_iterations.is_none() {
            not_counted.push("event_loop_iterations".to_string());
        }
        if d.partial_writes.is_none() {
            not_counted.push("partial_writes".to_string());
        }
        let server = super::Server {
            requests_served: d.requests_served,
            bad_requests: d.bad_requests,
            errors: d.errors,
            event_loop_iterations: d.event_loop_iterations.unwrap_or(0),
            connections_accepted: d.connections_accepted,
            partial_writes: d.partial_writes.unwrap_or(0),
            worker_handled: 0,
            fatal: d.fatal,
            not_counted,
            server_cpu_ms: None,
        };
        let account = JvmAccount {
            program: self.cell.class.clone(),
            flags: self.cell.flags.clone(),
            gc: self.cell.gc.clone(),
            jvm: d.jvm,
            netty_version: d.netty_version,
            fault: d.fault,
            runs,
        };
        Ok((server, account))
    }

    /// The java process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for JvmServer {
    fn drop(&mut self) {
        // Stopped already when waited for; otherwise (an error on the way) killed.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("finding a free port: {e}"))?;
    Ok(l.local_addr().map_err(|e| format!("finding a free port: {e}"))?.port())
}

/// CPU time, ms, of the threads of process `pid` whose name starts with `echo-` (the
/// server's own threads in the Rust server and in both JVM servers), from
/// `/proc/<pid>/task/<tid>/schedstat` (time on CPU, ns), and how many there were; `None`
/// when none could be read.
pub fn server_threads_cpu_ms(pid: u32) -> Option<(f64, usize)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut ns = 0u64;
    let mut n = 0;
    for t in tasks.flatten() {
        let dir = t.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !comm.starts_with("echo-") {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("schedstat")).unwrap_or_default();
        if let Some(v) = stat.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) {
            ns += v;
            n += 1;
        }
    }
    (n > 0).then(|| (ns as f64 / 1e6, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use echo_server::http::{response_bytes, ResponseKind};
    use std::io::Read;
    use std::net::TcpStream;

    fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        s.write_all(request).expect("write");
        s.shutdown(std::net::Shutdown::Write).expect("shutdown");
        let mut out = Vec::new();
        s.read_to_end(&mut out).expect("read to the server's close");
        out
    }

    /// Each JVM server answers byte for byte as the Rust server does (close, keep-alive then
    /// close on one connection, HEAD, a malformed request), brackets a run with its marks,
    /// and reports its account; under the planted fault the document is 100 bytes short.
    #[test]
    fn jvm_servers_answer_with_the_rust_servers_bytes() {
        for (name, _, _) in SERVERS {
            if let Some(why) = unavailable(name) {
                panic!("{name} needs a JDK and its jars: {why}");
            }
            let c = cell(name, "serial", "").expect("builds");
            assert!(c.flags.starts_with("-XX:+UseSerialGC -Xms256m -Xmx256m"), "{}", c.flags);
            let mut s = JvmServer::start(&c, 0, false).expect("starts");
            s.mark(true, 0, "measured").expect("run_start answered");
            let ok = |keep| response_bytes(ResponseKind::Ok, keep).to_vec();
            assert_eq!(
                exchange(s.addr(), b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"),
                ok(false),
                "{name}"
            );
            let two = b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n";
            assert_eq!(exchange(s.addr(), two), [ok(true), ok(false)].concat(), "{name}");
            let head = exchange(s.addr(), b"HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n");
            assert_eq!(head, response_bytes(ResponseKind::OkHead, false), "{name}");
            let bad = exchange(s.addr(), b"GARBAGE\r\n\r\n");
            assert!(bad.starts_with(b"HTTP/1.0 400 Bad Request\r\n"), "{name}");
            s.mark(false, 0, "measured").expect("run_end answered");
            let (server, account) = s.stop(4, 1, 1).expect("stops with its account");
            assert_eq!((server.requests_served, server.bad_requests), (4, 1), "{name}");
            assert_eq!(server.connections_accepted, 4, "{name}");
            assert_eq!(account.runs.len(), 1, "{name}");
            assert!(account.jvm["flags"].to_string().contains("-XX:+UseSerialGC"), "{name}");
            assert_eq!(account.netty_version.is_some(), name == "netty");

            let mut f = cell(&format!("fault-{name}"), "serial", "").expect("builds");
            assert!(f.short_body);
            f.flags = c.flags.replace(" -XX:+AlwaysPreTouch", "");
            let mut s = JvmServer::start(&f, 0, false).expect("starts");
            s.mark(true, 0, "measured").expect("ready");
            let r = exchange(s.addr(), b"GET / HTTP/1.0\r\n\r\n");
            let text = String::from_utf8_lossy(&r);
            assert!(text.contains("\r\nContent-Length: 928\r\n"), "{name}: {text}");
            // 100 bytes of document and one digit of Content-Length (928, not 1028).
            assert_eq!(r.len(), ok(false).len() - 101, "{name}");
        }
    }

    #[test]
    fn names_and_the_server_threads_cpu_of_this_process() {
        assert!(is_jvm("java-nio") && is_jvm("fault-netty") && !is_jvm("inline"));
        assert_eq!(server("fault-netty").map(|s| s.1), Some("NettyEcho"));
        let (tx, rx) = mpsc::channel();
        let h = std::thread::Builder::new()
            .name("echo-test-spin".into())
            .spawn(move || {
                let t = std::time::Instant::now();
                while t.elapsed() < Duration::from_millis(30) {}
                let own =
                    std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
                let ns: u64 = own.split_whitespace().next().unwrap().parse().unwrap();
                tx.send(ns).expect("send");
                std::thread::sleep(Duration::from_millis(300));
            })
            .expect("spawn");
        let own_ns = rx.recv().expect("the thread's own reading");
        let (ms, n) = server_threads_cpu_ms(std::process::id()).expect("an echo-* thread");
        // Other tests of this process may run echo servers (echo-* threads) meanwhile.
        assert!(n >= 1 && own_ns > 0 && ms * 1e6 >= own_ns as f64, "{ms} ms, {n} threads");
        h.join().expect("join");
    }
}
