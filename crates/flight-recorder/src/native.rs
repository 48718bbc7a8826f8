//! Writing records as a native Perfetto trace (`.pftrace`, the `pftrace` crate's
//! TrackEvent packets), from the same window of records as the JSON dump and with the same
//! choices: the same slices (spans that cross their parent's end left out), instants named
//! by their `kind`/`message` text, counters named by their `counter` text, and the same
//! publish → consume flow pairs. Threads are named by the kernel's tid (where it was read),
//! so that the scheduler's records added later join their tracks; counters are process
//! counter tracks, one per name, as Perfetto's JSON importer makes them.

use std::collections::HashMap;
use std::io::{self, Write};

use pftrace::{ArgValue, Event, ThreadEvents, TraceBuilder, Track};

use crate::dump::{flow_of, pair_flows, Info, ThreadDump, Window};
use crate::record::{Kind, Num, Record};

/// The sequence id of a dump's packets (any nonzero id; one sequence per file).
const SEQ: u32 = 1;

/// The record's number as an argument, if it has one (a non-finite float has none).
fn num_arg(r: &Record) -> Option<(String, ArgValue)> {
    let key = r.num_field()?;
    let n = r.fields.num;
    let v = match r.fields.num_kind {
        Num::U64 => ArgValue::U64(n),
        Num::I64 => ArgValue::I64(n as i64),
        Num::Bool => ArgValue::Bool(n != 0),
        Num::F64 => {
            let f = f64::from_bits(n);
            if !f.is_finite() {
                return None;
            }
            ArgValue::F64(f)
        }
    };
    Some((key.to_owned(), v))
}

fn args(r: &Record, skip_text: bool) -> Vec<(String, ArgValue)> {
    let mut out = Vec::new();
    if let (Some(key), false) = (r.text_field(), skip_text) {
        out.push((key.to_owned(), ArgValue::Str(r.fields.text().to_owned())));
    }
    out.extend(num_arg(r));
    out
}

/// The counter's value as the JSON dump writes it (`None`: left out there too).
fn counter_value(r: &Record) -> Option<f64> {
    r.num_field()?;
    let n = r.fields.num;
    let v = match r.fields.num_kind {
        Num::U64 => n as f64,
        Num::I64 => n as i64 as f64,
        Num::Bool => (n != 0) as u8 as f64,
        Num::F64 => f64::from_bits(n),
    };
    v.is_finite().then_some(v)
}

/// Writes `win` as an encoded Perfetto `Trace`; returns the bytes written.
pub(crate) fn write_pftrace(w: &mut impl Write, info: &Info<'_>, win: &Window) -> io::Result<u64> {
    let pid = info.pid as i32;
    let mut b = TraceBuilder::new(SEQ, 0);
    let process = b.process(pid, info.process_name);
    let flows = pair_flows(win);
    let mut counters: HashMap<String, Track> = HashMap::new();
    for t in &win.threads {
        write_thread(&mut b, process, pid, t, &flows, &mut counters);
    }
    let bytes = b.encode();
    w.write_all(&bytes)?;
    Ok(bytes.len() as u64)
}

fn write_thread(
    b: &mut TraceBuilder,
    process: Track,
    pid: i32,
    t: &ThreadDump,
    flows: &HashMap<(u64, u64, bool), u64>,
    counters: &mut HashMap<String, Track>,
) {
    // A thread whose kernel id is unknown keeps the recorder's number, far above the
    // kernel's ids so that it meets none of them.
    let tid = match t.os_tid {
        0 => i32::try_from(t.tid).map_or(i32::MAX, |n| i32::MAX / 2 + n.min(i32::MAX / 2)),
        n => n as i32,
    };
    let track = b.thread(process, pid, tid, &t.name);
    let mut events = ThreadEvents::default();
    let mut samples: Vec<(String, u64, f64)> = Vec::new();
    for r in &t.records {
        match r.kind {
            Kind::Span => {
                let flow = flows.get(&(t.tid, r.start_ns, r.name() == "publish")).copied();
                let ev = Event {
                    name: r.name().to_owned(),
                    category: r.target().to_owned(),
                    args: args(r, false),
                    flow_out: flow.filter(|_| flow_of(r, "publish").is_some()),
                    flow_in: flow.filter(|_| flow_of(r, "consume").is_some()),
                };
                events.slice(r.start_ns, r.end_ns, ev);
            }
            Kind::Instant => {
                let by_text = matches!(r.text_field(), Some("kind" | "message"));
                let name = if by_text { r.fields.text() } else { r.name() };
                let ev = Event {
                    name: name.to_owned(),
                    category: r.target().to_owned(),
                    args: args(r, by_text),
                    ..Event::default()
                };
                events.instant(r.start_ns, ev);
            }
            Kind::Counter => {
                let Some(v) = counter_value(r) else { continue };
                let name = match r.text_field() {
                    Some("counter") => r.fields.text(),
                    _ => r.name(),
                };
                samples.push((name.to_owned(), r.start_ns, v));
            }
        }
    }
    events.write(b, track);
    for (name, ts, v) in samples {
        let ct = match counters.get(&name) {
            Some(&ct) => ct,
            None => {
                let ct = b.counter_track(process, &name);
                counters.insert(name, ct);
                ct
            }
        };
        b.counter(ct, ts, v);
    }
}
