//! One child process under the watchdog: started in its own process group, its protocol
//! lines read as they come, killed with its whole group (grandchildren such as `ab` and
//! nginx included) when it goes `timeout` without a heartbeat or the run is interrupted.

use super::signal;
use crate::protocol::{ChildSpec, HeapTotals, Message};
use crate::results::Status;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug)]
pub enum ChildEnd {
    /// It sent `done`.
    Done {
        /// The outcome, as the experiment serialised it.
        outcome: Value,
        /// Heap totals (heap passes).
        heap: Option<HeapTotals>,
        /// The recorder's account (trace passes).
        note: Option<String>,
    },
    /// It failed, hung or crashed.
    Failed {
        /// `Error`, `Hung` or `Crashed`.
        status: Status,
        /// Why, in one line.
        error: String,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// The run was interrupted; the child's group was killed.
    Interrupted,
}

enum Line {
    Msg(Message),
    Eof,
    /// An interrupt killed the child's group ([`signal::track`]).
    Interrupted,
}

/// The last `lines` lines of `s`, at most 2000 bytes.
pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    let t = v[v.len().saturating_sub(lines)..].join("\n");
    if t.len() <= 2000 {
        return t;
    }
    let cut = t.len() - 2000;
    let start = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
    t[start..].to_string()
}

/// Runs `program <spec>` (or `program args… ` for a foreign child such as the JVM, with
/// `spec` `None`), calling `on_beat` at each heartbeat.
pub fn run(
    program: &Path,
    args: &[String],
    spec: Option<&ChildSpec>,
    timeout: Duration,
    on_beat: &dyn Fn(u64),
) -> ChildEnd {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(spec) = spec {
        cmd.arg(serde_json::to_string(spec).expect("specs serialise"));
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own group: the terminal's Ctrl-C reaches the parent only, which then kills the
    // group (the child and whatever it started) after noting what finished.
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ChildEnd::Failed {
                status: Status::Error,
                error: format!("could not start {}: {e}", program.display()),
                stderr_tail: String::new(),
            }
        }
    };
    let pgid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<Line>();
    let waker = tx.clone();
    signal::track(pgid, move || {
        let _ = waker.send(Line::Interrupted);
    });
    // An interrupt that came before the group was tracked killed nothing of it: kill it
    // now; the watch below sees the flag at once (it never polls).
    if signal::interrupted() {
        signal::kill_group(pgid);
        let _ = tx.send(Line::Interrupted);
    }
    let out_reader = read_protocol(child.stdout.take().expect("piped stdout"), tx);
    let err_reader = read_stderr(child.stderr.take().expect("piped stderr"));
    let (verdict, end) = watch(&rx, timeout, on_beat);
    if verdict.is_err() {
        signal::kill_group(pgid);
    }
    let status = child.wait();
    signal::untrack(pgid);
    // Anything the child started and left behind goes with it.
    signal::kill_group(pgid);
    let grace = Instant::now() + READER_GRACE;
    let junk = collected(out_reader, grace);
    let stderr = collected(err_reader, grace);
    let stderr_tail = tail(&format!("{stderr}{junk}"), 15);
    ending(verdict, end, status, stderr_tail)
}

/// How long a reader may go on after the child has gone: a process the child started in a
/// session of its own keeps the pipe open, and the run must not wait for it.
const READER_GRACE: Duration = Duration::from_secs(2);

/// A reader thread's text, sent once when its pipe ends.
type Collected = mpsc::Receiver<String>;

/// Runs `read` on a thread of its own; its text arrives on the receiver when it ends.
fn reading(read: impl FnOnce() -> String + Send + 'static) -> Collected {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    rx
}

/// What a reader thread collected, as soon as it ends, if that is by `deadline`; else
/// nothing (the thread is left to end when the pipe does).
fn collected(reader: Collected, deadline: Instant) -> String {
    reader.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_default()
}

/// Reads the child's stdout on a thread: each protocol line goes to `tx` as it comes, then
/// [`Line::Eof`]; the thread returns the first 4 KiB or so of lines that were not protocol.
fn read_protocol(stdout: std::process::ChildStdout, tx: mpsc::Sender<Line>) -> Collected {
    reading(move || {
        let mut junk = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            match serde_json::from_str::<Message>(&line) {
                Ok(m) => {
                    let _ = tx.send(Line::Msg(m));
                }
                Err(_) if junk.len() < 4096 => {
                    junk.push_str(&line);
                    junk.push('\n');
                }
                Err(_) => {}
            }
        }
        let _ = tx.send(Line::Eof);
        junk
    })
}

/// Reads the child's stderr on a thread, keeping the last MiB or so.
fn read_stderr(stderr: std::process::ChildStderr) -> Collected {
    reading(move || {
        let mut s = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            s.push_str(&line);
            s.push('\n');
            if s.len() > 1 << 20 {
                s.drain(..s.len() / 2);
            }
        }
        s
    })
}

/// Why the watch ended: `Ok` at the end of the child's stdout, `Err(None)` on an interrupt,
/// `Err(Some(timeout))` when no heartbeat came within `timeout`.
type Watched = Result<(), Option<Duration>>;

/// Follows the child's protocol lines until its stdout ends, the run is interrupted or
/// `timeout` passes without a heartbeat; returns why, and the last line other than a
/// heartbeat (its `done` or `failed`).
///
/// It sleeps until a line comes or the watchdog's deadline passes, never on a short poll:
/// this thread must not wake on the CPUs of a child being timed. An interrupt kills the
/// tracked children's groups and wakes their watches ([`signal::track`]).
fn watch(
    rx: &mpsc::Receiver<Line>,
    timeout: Duration,
    on_beat: &dyn Fn(u64),
) -> (Watched, Option<Message>) {
    let mut last_beat = Instant::now();
    let mut end: Option<Message> = None;
    let mut eof = false;
    let verdict = loop {
        let left = timeout.saturating_sub(last_beat.elapsed());
        match rx.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok(Line::Msg(Message::Heartbeat { run })) => {
                last_beat = Instant::now();
                on_beat(run);
            }
            Ok(Line::Msg(m)) => end = Some(m),
            Ok(Line::Eof) | Err(mpsc::RecvTimeoutError::Disconnected) => eof = true,
            Ok(Line::Interrupted) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if signal::interrupted() {
            break Err(None);
        }
        if eof {
            break Ok(());
        }
        if last_beat.elapsed() > timeout {
            break Err(Some(timeout));
        }
    };
    (verdict, end)
}

/// How the child ended, from why the watch ended, its last line and its exit status.
fn ending(
    verdict: Watched,
    end: Option<Message>,
    status: std::io::Result<std::process::ExitStatus>,
    stderr_tail: String,
) -> ChildEnd {
    match verdict {
        Err(None) => return ChildEnd::Interrupted,
        Err(Some(t)) => {
            return ChildEnd::Failed {
                status: Status::Hung,
                error: format!(
                    "no run finished within {} s; the watchdog killed the child's process group",
                    t.as_secs()
                ),
                stderr_tail,
            }
        }
        Ok(()) => {}
    }
    match end {
        Some(Message::Done { outcome, heap, note }) => ChildEnd::Done { outcome, heap, note },
        Some(Message::Failed { error }) => {
            ChildEnd::Failed { status: Status::Error, error, stderr_tail }
        }
        _ => {
            use std::os::unix::process::ExitStatusExt;
            let how = match status.as_ref().map(|s| (s.code(), s.signal())) {
                Ok((Some(c), _)) => format!("the child exited with code {c} and no result"),
                Ok((None, Some(s))) => format!("the child was killed by signal {s}"),
                _ => "lost track of the child process".to_string(),
            };
            ChildEnd::Failed { status: Status::Crashed, error: how, stderr_tail }
        }
    }
}
