//! A Chrome JSON trace as native Perfetto packets, for the traces the lab writes as JSON
//! first (the full capture's tracing-chrome file, the JVM's trace from JFR). It reads the
//! events those writers emit: `M` (`process_name`, `thread_name`), `X`, `B`/`E`, `i`/`I`,
//! `C` (a counter track named by the event; by `"<name> <arg>"`, as Perfetto's JSON
//! importer names them, where it has several numeric arguments) and flows `s`/`f`, each
//! end bound to the slice open at its time on its thread (the deepest, as Perfetto binds
//! them). A `tid` that is no kernel thread id (negative or
//! above `i32::MAX`: the JVM trace's `GC` and `Safepoints` rows) becomes a named track of
//! its process. Other phases are skipped and counted.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::{ArgValue, Event, ThreadEvents, TraceBuilder, Track};

/// What a conversion wrote and skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Converted {
    /// The encoded `Trace`.
    pub bytes: Vec<u8>,
    /// Slices and instants written.
    pub slices: u64,
    /// Events of phases this converter does not write (async, object, sample events).
    pub skipped: u64,
    /// Slices left out for crossing their parent's end (Perfetto would drop them too).
    pub not_nested: u64,
    /// `E` events with no open `B`, and `B` events never ended.
    pub unmatched: u64,
}

/// A timestamp in µs (number or numeric string) as ns.
fn ns(v: &Value) -> Option<u64> {
    let us = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.parse().ok()?,
        _ => return None,
    };
    (us >= 0.0).then(|| (us * 1000.0).round() as u64)
}

fn arg_value(v: &Value) -> Option<ArgValue> {
    Some(match v {
        Value::Bool(b) => ArgValue::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => ArgValue::U64(u),
            (None, Some(i)) => ArgValue::I64(i),
            _ => ArgValue::F64(n.as_f64()?),
        },
        Value::String(s) => ArgValue::Str(s.clone()),
        Value::Null => return None,
        other => ArgValue::Str(other.to_string()),
    })
}

fn event_of(e: &Value) -> Event {
    let args = match &e["args"] {
        Value::Object(m) => {
            m.iter().filter_map(|(k, v)| Some((k.clone(), arg_value(v)?))).collect()
        }
        _ => Vec::new(),
    };
    Event {
        name: e["name"].as_str().unwrap_or("").to_owned(),
        category: e["cat"].as_str().unwrap_or("").to_owned(),
        args,
        ..Event::default()
    }
}

type Key = (i64, i64);

/// Slices, instants and flow ends gathered per thread before they are written.
#[derive(Default)]
struct Gathered {
    process_names: BTreeMap<i64, String>,
    thread_names: HashMap<Key, String>,
    /// (start, end, is_instant, event) per thread.
    items: BTreeMap<Key, Vec<(u64, u64, bool, Event)>>,
    /// (pid, counter track name) → samples.
    counters: BTreeMap<(i64, String), Vec<(u64, f64)>>,
    /// (thread, ts, flow id, leaves) of each flow end.
    flow_ends: Vec<(Key, u64, u64, bool)>,
    skipped: u64,
    unmatched: u64,
}

impl Gathered {
    fn read(events: &[Value], pid_as: Option<i64>) -> Gathered {
        let mut g = Gathered::default();
        let mut open: HashMap<Key, Vec<(u64, Event)>> = HashMap::new();
        let mut flow_ids: HashMap<(String, String, String), u64> = HashMap::new();
        for e in events {
            let own = e["pid"].as_i64().unwrap_or(0);
            let pid = pid_as.unwrap_or(own);
            let key = (pid, e["tid"].as_i64().unwrap_or(own));
            let ts = ns(&e["ts"]);
            match (e["ph"].as_str().unwrap_or(""), ts) {
                ("M", _) => g.metadata(e, key),
                ("X", Some(ts)) => {
                    let end = ts + ns(&e["dur"]).unwrap_or(0);
                    g.items.entry(key).or_default().push((ts, end, false, event_of(e)));
                }
                ("B", Some(ts)) => open.entry(key).or_default().push((ts, event_of(e))),
                ("E", Some(end)) => match open.get_mut(&key).and_then(Vec::pop) {
                    Some((start, ev)) => {
                        g.items.entry(key).or_default().push((start, end, false, ev))
                    }
                    None => g.unmatched += 1,
                },
                ("i" | "I", Some(ts)) => {
                    g.items.entry(key).or_default().push((ts, ts, true, event_of(e)))
                }
                ("C", Some(ts)) => g.counter(e, pid, ts),
                ("s" | "f", Some(ts)) => {
                    let id = (
                        e["cat"].as_str().unwrap_or("").to_owned(),
                        e["name"].as_str().unwrap_or("").to_owned(),
                        e["id"].to_string(),
                    );
                    let next = flow_ids.len() as u64 + 1;
                    let id = *flow_ids.entry(id).or_insert(next);
                    g.flow_ends.push((key, ts, id, e["ph"] == "s"));
                }
                _ => g.skipped += 1,
            }
        }
        g.unmatched += open.values().map(|v| v.len() as u64).sum::<u64>();
        g
    }

    fn metadata(&mut self, e: &Value, key: Key) {
        let Some(name) = e["args"]["name"].as_str() else { return };
        match e["name"].as_str() {
            Some("process_name") => {
                self.process_names.insert(key.0, name.to_owned());
            }
            Some("thread_name") => {
                self.thread_names.insert(key, name.to_owned());
            }
            _ => {}
        }
    }

    fn counter(&mut self, e: &Value, pid: i64, ts: u64) {
        let name = e["name"].as_str().unwrap_or("");
        let Value::Object(args) = &e["args"] else { return };
        let numeric: Vec<(&String, f64)> = args
            .iter()
            .filter_map(|(k, v)| Some((k, v.as_f64().filter(|v| v.is_finite())?)))
            .collect();
        let one = numeric.len() == 1;
        for (k, v) in numeric {
            let track = if one { name.to_owned() } else { format!("{name} {k}") };
            self.counters.entry((pid, track)).or_default().push((ts, v));
        }
    }

    /// Puts each flow end on the slice open at its time on its thread: the latest-starting
    /// one that contains it.
    fn bind_flows(&mut self) {
        for items in self.items.values_mut() {
            items.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        }
        for &(key, ts, id, leaves) in &self.flow_ends {
            let Some(items) = self.items.get_mut(&key) else { continue };
            let upto = items.partition_point(|it| it.0 <= ts);
            let hit = items[..upto].iter_mut().rev().find(|it| !it.2 && it.1 >= ts);
            if let Some(it) = hit {
                if leaves {
                    it.3.flow_out = Some(id);
                } else {
                    it.3.flow_in = Some(id);
                }
            }
        }
    }
}

/// Converts the events of a Chrome JSON trace (`{"traceEvents": […]}` or a bare array).
/// `pid_as` puts every event in that process instead of the one it names (tracing-chrome
/// writes `pid` 1 whatever the process, which in a trace with the kernel's records is
/// `init`).
pub fn convert(doc: &Value, seq: u32, pid_as: Option<i64>) -> Converted {
    let events: &[Value] = match doc {
        Value::Array(a) => a,
        other => other["traceEvents"].as_array().map_or(&[], Vec::as_slice),
    };
    let mut g = Gathered::read(events, pid_as);
    g.bind_flows();
    let mut b = TraceBuilder::new(seq, 0);
    let mut processes: BTreeMap<i64, Track> = BTreeMap::new();
    let mut process = |b: &mut TraceBuilder, pid: i64, names: &BTreeMap<i64, String>| {
        *processes.entry(pid).or_insert_with(|| {
            let name = names.get(&pid).cloned().unwrap_or_else(|| format!("pid {pid}"));
            b.process(pid as i32, &name)
        })
    };
    let mut out = Converted { skipped: g.skipped, unmatched: g.unmatched, ..Converted::default() };
    for (&(pid, tid), items) in &mut g.items {
        let p = process(&mut b, pid, &g.process_names);
        let name = g.thread_names.get(&(pid, tid)).cloned().unwrap_or_else(|| format!("{tid}"));
        let track = match i32::try_from(tid) {
            Ok(t) if t > 0 => b.thread(p, pid as i32, t, &name),
            _ => b.named_track(p, &name),
        };
        let mut te = ThreadEvents::default();
        for (start, end, instant, ev) in items.drain(..) {
            if instant {
                te.instant(start, ev);
            } else {
                te.slice(start, end, ev);
            }
        }
        out.slices += te.len() as u64;
        let dropped = te.write(&mut b, track);
        out.slices -= dropped;
        out.not_nested += dropped;
    }
    for ((pid, name), samples) in &g.counters {
        let p = process(&mut b, *pid, &g.process_names);
        let ct = b.counter_track(p, name);
        for &(ts, v) in samples {
            b.counter(ct, ts, v);
        }
    }
    // Named threads without events still get their names, as in the JSON.
    let named: Vec<Key> = g.thread_names.keys().copied().collect();
    for (pid, tid) in named {
        if g.items.contains_key(&(pid, tid)) {
            continue;
        }
        if let Ok(t) = i32::try_from(tid) {
            let p = process(&mut b, pid, &g.process_names);
            b.thread(p, pid as i32, t, &g.thread_names[&(pid, tid)]);
        }
    }
    out.bytes = b.encode();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slices_instants_counters_and_flows_convert() {
        let doc = json!({"traceEvents": [
            {"ph": "M", "pid": 5, "name": "process_name", "args": {"name": "java"}},
            {"ph": "M", "pid": 5, "tid": 7, "name": "thread_name", "args": {"name": "worker"}},
            {"ph": "X", "pid": 5, "tid": 7, "ts": 1.0, "dur": 2.0, "name": "a", "cat": "c"},
            {"ph": "s", "pid": 5, "tid": 7, "ts": 1.0, "id": 3, "name": "f", "cat": "c"},
            {"ph": "B", "pid": 5, "tid": 8, "ts": 4.0, "name": "b"},
            {"ph": "f", "bp": "e", "pid": 5, "tid": 8, "ts": 4.0, "id": 3, "name": "f", "cat": "c"},
            {"ph": "E", "pid": 5, "tid": 8, "ts": 5.0},
            {"ph": "i", "s": "t", "pid": 5, "tid": 4000000001i64, "ts": 2.0, "name": "gc"},
            {"ph": "C", "pid": 5, "tid": 7, "ts": 2.0, "name": "depth", "args": {"value": 3}},
            {"ph": "b", "pid": 5, "tid": 7, "ts": 2.0, "name": "async", "id": 1},
        ]});
        let c = convert(&doc, 1, None);
        assert_eq!((c.slices, c.skipped, c.unmatched, c.not_nested), (3, 1, 0, 0));
        let trace: crate::protos::Trace = prost::Message::decode(c.bytes.as_slice()).unwrap();
        let events: Vec<_> = trace
            .packet
            .iter()
            .filter_map(|p| match &p.data {
                Some(crate::protos::trace_packet::Data::TrackEvent(e)) => Some(e),
                _ => None,
            })
            .collect();
        assert!(events.iter().any(|e| e.flow_ids == vec![1]));
        assert!(events.iter().any(|e| e.terminating_flow_ids == vec![1]));
        assert!(events.iter().any(|e| e.counter_value_field.is_some()));
    }
}
