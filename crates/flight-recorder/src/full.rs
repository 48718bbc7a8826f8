//! Full streaming capture with `tracing-chrome` 0.7, then a repair pass so Perfetto reads
//! the file without loss.
//!
//! What tracing-chrome 0.7.2 writes, and what [`FullGuard::finish`] changes:
//! * tids count from 0, and Perfetto merges tid 0 into tid 1: every tid becomes tid + 1;
//! * no `process_name`: one is added (the executable's name);
//! * events of the lab's counter convention (`lab::counter`) arrive as instants whose args
//!   are Debug strings (`"\"queue_depth\""`, `"42"`): they become `C` counter events;
//!   `lab::instant` instants are renamed by their `kind`;
//! * `publish`/`consume` spans with a `flow` arg get `s`/`f` flow events (`bp:"e"`);
//! * an `E` with no open `B` on its thread is dropped, and a `B` still open at the end
//!   (a span alive when the capture stopped) is closed at the last timestamp of the trace,
//!   with the arg `"unfinished": true`.
//!
//! Known limits (of tracing-chrome itself): every event allocates (about 9 allocations,
//! ~690 B) and costs microseconds, not the recorder's nanoseconds (this crate's bench,
//! writer thread competing for the 2 cores; figures: docs/design-figures.md); its queue to
//! the writer thread is unbounded,
//! so memory grows without limit under load; its sender and tid live in global
//! thread-locals, so only one such layer may exist per process (a second mixes tids); the
//! repair pass reads the whole file into memory.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt;

use crate::Error;

/// Full capture in progress; call [`FullGuard::finish`] to flush and repair the file.
/// Dropped without `finish`, it flushes but leaves tracing-chrome's file unrepaired.
pub struct FullGuard {
    guard: Option<tracing_chrome::FlushGuard>,
    path: PathBuf,
}

impl std::fmt::Debug for FullGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FullGuard").field("path", &self.path).finish()
    }
}

/// Installs tracing-chrome as the process's global subscriber, streaming every span and
/// event to `path`. One per process, and not together with [`crate::install_flight`].
pub fn install_full(path: &Path) -> Result<FullGuard, Error> {
    let file = File::create(path)
        .map_err(|e| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?;
    let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
        .writer(BufWriter::new(file))
        .include_args(true)
        .build();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .map_err(|e| Error::AlreadyInstalled(e.to_string()))?;
    Ok(FullGuard { guard: Some(guard), path: path.to_owned() })
}

impl FullGuard {
    /// The trace file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops the writer thread and leaves tracing-chrome's file as it wrote it (for showing
    /// what the repair fixes; Perfetto's importer mis-reads it).
    pub fn finish_unrepaired(mut self) -> io::Result<()> {
        drop(self.guard.take());
        Ok(())
    }

    /// Stops the writer thread (events after this are lost), then repairs the file in place.
    pub fn finish(self) -> io::Result<()> {
        self.finish_with_stats().map(|_| ())
    }

    /// [`FullGuard::finish`], saying what the repair changed.
    pub fn finish_with_stats(mut self) -> io::Result<RepairStats> {
        drop(self.guard.take());
        repair_file(&self.path)
    }
}

/// What the repair pass changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairStats {
    /// Events in the repaired file.
    pub events: usize,
    /// Instants turned into counter events.
    pub counters: usize,
    /// Flow arrows added.
    pub flows: usize,
    /// `E` events without a `B`, dropped.
    pub dropped_unmatched_ends: usize,
    /// `B` events never ended, closed at the end of the trace.
    pub closed_open_begins: usize,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", path.display()))
}

/// Repairs a tracing-chrome file in place (see the module docs).
pub fn repair_file(path: &Path) -> io::Result<RepairStats> {
    let file = File::open(path).map_err(|e| bad(path, e))?;
    let doc: Value = serde_json::from_reader(BufReader::new(file))
        .map_err(|e| bad(path, format!("not a complete JSON trace ({e})")))?;
    let events = match doc {
        Value::Array(v) => v,
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(v)) => v,
            _ => return Err(bad(path, "no traceEvents array")),
        },
        _ => return Err(bad(path, "neither an array nor an object of trace events")),
    };
    let process_name = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "lab".to_owned());
    let (out, stats) = repair(events, &process_name);
    let tmp = path.with_extension("repair.tmp");
    let written = (|| -> io::Result<()> {
        let mut w = BufWriter::new(File::create(&tmp).map_err(|e| bad(&tmp, e))?);
        w.write_all(b"{\"traceEvents\":[\n")?;
        for (i, e) in out.iter().enumerate() {
            if i > 0 {
                w.write_all(b",\n")?;
            }
            serde_json::to_writer(&mut w, e).map_err(io::Error::other)?;
        }
        w.write_all(b"\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"recorder\":\"tracing-chrome (repaired)\"}}\n")?;
        w.flush()
    })();
    // A failed write (a full disk) leaves the original file as it was and no temporary.
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(bad(&tmp, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| bad(path, e))?;
    Ok(stats)
}

/// A Debug-formatted string arg as its value: `"\"abc\""` → `abc`, `"42"` → 42.
fn unquote(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    Some(match serde_json::from_str::<String>(s) {
        Ok(inner) => inner,
        Err(_) => s.to_owned(),
    })
}

fn number(v: &Value) -> Option<Value> {
    match v {
        Value::Number(_) => Some(v.clone()),
        Value::String(s) => serde_json::from_str::<serde_json::Number>(s).ok().map(Value::Number),
        _ => None,
    }
}

pub(crate) fn repair(events: Vec<Value>, process_name: &str) -> (Vec<Value>, RepairStats) {
    let mut stats = RepairStats::default();
    let mut out: Vec<Value> = Vec::with_capacity(events.len() + 8);
    let mut pids: HashSet<i64> = HashSet::new();
    let mut named: HashSet<(i64, i64)> = HashSet::new();
    let mut seen: HashSet<(i64, i64)> = HashSet::new();
    // Open B events per thread: index into `out`.
    let mut open: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    let mut flow_ends: Vec<(usize, usize)> = Vec::new(); // (B index, E index) of flow spans
    let mut last_ts = 0.0f64;

    for mut e in events {
        let Some(obj) = e.as_object_mut() else { continue };
        let pid = obj.get("pid").and_then(Value::as_i64).unwrap_or(1);
        pids.insert(pid);
        if let Some(t) = obj.get("tid").and_then(Value::as_i64) {
            obj.insert("tid".into(), json!(t + 1));
        }
        let tid = obj.get("tid").and_then(Value::as_i64).unwrap_or(1);
        if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
            last_ts = last_ts.max(ts);
        }
        let ph = obj.get("ph").and_then(Value::as_str).unwrap_or("").to_owned();
        let cat = obj.get("cat").and_then(Value::as_str).unwrap_or("").to_owned();
        match ph.as_str() {
            "M" if obj.get("name").and_then(Value::as_str) == Some("thread_name") => {
                named.insert((pid, tid));
            }
            // An unreadable counter stays an instant, and is not renamed.
            "i" if cat == "lab::counter" => stats.counters += usize::from(to_counter(obj)),
            "i" => name_instant(obj, &cat),
            "B" => {
                open.entry((pid, tid)).or_default().push(out.len());
            }
            "E" => {
                let Some(b) = open.get_mut(&(pid, tid)).and_then(Vec::pop) else {
                    stats.dropped_unmatched_ends += 1;
                    continue;
                };
                let name = out[b].get("name").and_then(Value::as_str).unwrap_or("");
                if (name == "publish" || name == "consume")
                    && out[b].pointer("/args/flow").is_some()
                {
                    flow_ends.push((b, out.len()));
                }
            }
            _ => {}
        }
        if ph != "M" {
            seen.insert((pid, tid));
        }
        out.push(e);
    }
    stats.closed_open_begins += close_open(&mut out, open, last_ts);
    let pairs = pair_flows(&out, &flow_ends);
    stats.flows += add_flows(&mut out, pairs);
    for &pid in &pids {
        out.push(
            json!({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": process_name}}),
        );
    }
    for &(pid, tid) in seen.difference(&named) {
        out.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": format!("thread-{tid}")}}));
    }
    stats.events = out.len();
    (out, stats)
}

/// A `lab::counter` instant made a `C` counter event, named by its `counter` arg with its
/// `value` arg; false (the instant left as it is) when either arg is missing or unreadable.
fn to_counter(obj: &mut serde_json::Map<String, Value>) -> bool {
    let args = obj.get("args").cloned().unwrap_or(Value::Null);
    let (Some(name), Some(value)) =
        (args.get("counter").and_then(unquote), args.get("value").and_then(number))
    else {
        return false;
    };
    obj.insert("ph".into(), json!("C"));
    obj.insert("name".into(), json!(name));
    obj.insert("args".into(), json!({ "value": value }));
    obj.remove("s");
    true
}

/// An instant renamed by its `kind` arg (`lab::instant`) or else by its `message` arg,
/// where it has one.
fn name_instant(obj: &mut serde_json::Map<String, Value>, cat: &str) {
    let args = obj.get("args").cloned().unwrap_or(Value::Null);
    let name = if cat == "lab::instant" {
        args.get("kind").and_then(unquote)
    } else {
        args.get("message").and_then(unquote)
    };
    if let Some(n) = name {
        obj.insert("name".into(), json!(n));
    }
}

/// Closes what is still open, innermost first, at the end of the trace (`last_ts`), each
/// `B` marked `"unfinished": true`; returns how many it closed.
fn close_open(out: &mut Vec<Value>, open: HashMap<(i64, i64), Vec<usize>>, last_ts: f64) -> usize {
    let mut still_open: Vec<((i64, i64), usize)> =
        open.into_iter().flat_map(|(k, v)| v.into_iter().map(move |i| (k, i))).collect();
    still_open.sort_by_key(|&(_, i)| std::cmp::Reverse(i));
    let closed = still_open.len();
    for ((pid, tid), b) in still_open {
        if let Some(args) = out[b].as_object_mut().map(|o| o.entry("args").or_insert(json!({}))) {
            if let Some(a) = args.as_object_mut() {
                a.insert("unfinished".into(), json!(true));
            }
        }
        out.push(json!({"ph": "E", "pid": pid, "tid": tid, "ts": last_ts}));
    }
    closed
}

/// Pairs publish and consume spans with the same flow id (both complete), as their `B`
/// indexes in `out`. Ids repeat when a process runs the workload again: each consume pairs
/// with the latest unpaired publish of its id that began before it.
fn pair_flows(out: &[Value], flow_ends: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let ts_of = |b: usize| out[b].get("ts").and_then(Value::as_f64).unwrap_or(0.0);
    let mut publish: HashMap<String, Vec<(f64, usize, bool)>> = HashMap::new();
    let mut consume: Vec<(f64, usize, String)> = Vec::new();
    for &(b, _) in flow_ends {
        let id = out[b].pointer("/args/flow").and_then(unquote).unwrap_or_default();
        if out[b]["name"] == "publish" {
            publish.entry(id).or_default().push((ts_of(b), b, false));
        } else {
            consume.push((ts_of(b), b, id));
        }
    }
    for v in publish.values_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    consume.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (t, cb, id) in consume {
        let Some(p) = publish.get_mut(&id) else { continue };
        let Some(k) = p.iter().rposition(|&(pt, _, used)| pt <= t && !used) else { continue };
        p[k].2 = true;
        pairs.push((p[k].1, cb));
    }
    pairs
}

/// Adds a flow (`s` at the publish, `f` at the consume, numbered from 1) for each pair;
/// returns how many. Each flow end goes at its slice's start, right after its `B`:
/// Perfetto binds `s` to the deepest slice open there, which a later child (a wait inside
/// the publish) would be.
fn add_flows(out: &mut Vec<Value>, pairs: Vec<(usize, usize)>) -> usize {
    let flows = pairs.len();
    let mut after: HashMap<usize, Value> = HashMap::new();
    for (n, (pb, cb)) in pairs.into_iter().enumerate() {
        let id = n + 1;
        for (b, ph) in [(pb, "s"), (cb, "f")] {
            let mut ev = json!({
                "ph": ph, "pid": out[b]["pid"], "tid": out[b]["tid"], "ts": out[b]["ts"],
                "id": id, "name": "flow", "cat": "flow",
            });
            if ph == "f" {
                ev["bp"] = json!("e");
            }
            after.insert(b, ev);
        }
    }
    if !after.is_empty() {
        let old = std::mem::take(out);
        for (i, e) in old.into_iter().enumerate() {
            out.push(e);
            if let Some(f) = after.remove(&i) {
                out.push(f);
            }
        }
    }
    flows
}
