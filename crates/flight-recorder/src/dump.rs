//! Writing records as Chrome Trace Event JSON, the shape Perfetto's JSON importer reads
//! without loss (checked by `tools/viewers/check-trace.mjs`).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::record::{Kind, Num, Record};
use crate::DumpStats;

pub(crate) struct ThreadDump {
    pub tid: u64,
    /// The kernel's id of the thread, 0 if unknown.
    pub os_tid: u32,
    pub name: String,
    pub records: Vec<Record>,
}

/// Records of every thread over a time range; with the trigger that asked for it.
pub(crate) struct Window {
    pub trigger: Option<(u64, u64)>,
    pub threads: Vec<ThreadDump>,
    pub overwritten: u64,
    pub from_ns: u64,
    pub to_ns: u64,
}

pub(crate) struct Info<'a> {
    pub pid: u32,
    pub process_name: &'a str,
    pub dropped: u64,
    pub records_per_thread: usize,
    pub budget_bytes: usize,
}

/// `ns` as microseconds with three decimals (Chrome trace `ts`/`dur` unit).
struct Us(u64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

fn json_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *w, s).map_err(io::Error::other)
}

/// The record's number as JSON, or `None` if it has none (or a non-finite float).
fn num_json(r: &Record) -> Option<String> {
    r.num_field()?;
    let n = r.fields.num;
    Some(match r.fields.num_kind {
        Num::U64 => n.to_string(),
        Num::I64 => (n as i64).to_string(),
        Num::Bool => (n != 0).to_string(),
        Num::F64 => {
            let f = f64::from_bits(n);
            if !f.is_finite() {
                return None;
            }
            f.to_string()
        }
    })
}

fn write_args(w: &mut impl Write, r: &Record, skip_text: bool) -> io::Result<()> {
    let mut first = true;
    let mut sep = |w: &mut dyn Write| -> io::Result<()> {
        w.write_all(if first { b",\"args\":{" } else { b"," })?;
        first = false;
        Ok(())
    };
    if let (Some(key), false) = (r.text_field(), skip_text) {
        sep(w)?;
        json_str(w, key)?;
        w.write_all(b":")?;
        json_str(w, r.fields.text())?;
    }
    if let (Some(key), Some(v)) = (r.num_field(), num_json(r)) {
        sep(w)?;
        json_str(w, key)?;
        write!(w, ":{v}")?;
    }
    if !first {
        w.write_all(b"}")?;
    }
    Ok(())
}

/// Pairs each `consume` slice with the latest unpaired `publish` slice of the same flow id
/// that started before it (ids repeat when a process runs the workload again), and numbers
/// the pairs from 1. Key: (tid, start_ns, is_publish) of a slice. Slices whose other end
/// is not in the dump get no flow.
pub(crate) fn pair_flows(win: &Window) -> HashMap<(u64, u64, bool), u64> {
    let mut publish: HashMap<u64, Vec<(u64, u64, bool)>> = HashMap::new();
    let mut consume: Vec<(u64, u64, u64)> = Vec::new();
    for t in &win.threads {
        for r in &t.records {
            if let Some(id) = flow_of(r, "publish") {
                publish.entry(id).or_default().push((r.start_ns, t.tid, false));
            } else if let Some(id) = flow_of(r, "consume") {
                consume.push((r.start_ns, t.tid, id));
            }
        }
    }
    for v in publish.values_mut() {
        v.sort_unstable();
    }
    consume.sort_unstable();
    let mut out = HashMap::new();
    let mut next = 1u64;
    for (start, tid, id) in consume {
        let Some(p) = publish.get_mut(&id) else { continue };
        let Some(k) = p.iter().rposition(|&(ps, _, used)| ps <= start && !used) else {
            continue;
        };
        p[k].2 = true;
        out.insert((p[k].1, p[k].0, true), next);
        out.insert((tid, start, false), next);
        next += 1;
    }
    out
}

/// Is `r` a span of the lab's sampled flows (`publish`/`consume` with a `flow` id)?
pub(crate) fn flow_of(r: &Record, name: &str) -> Option<u64> {
    (r.kind == Kind::Span && r.name() == name && r.num_field() == Some("flow"))
        .then_some(r.fields.num)
}

pub(crate) fn write_trace(
    w: &mut impl Write,
    info: &Info<'_>,
    win: &Window,
) -> io::Result<DumpStats> {
    let pid = info.pid;
    let mut stats = DumpStats {
        overwritten: win.overwritten,
        dropped: info.dropped,
        threads: win.threads.len(),
        records: win.threads.iter().map(|t| t.records.len() as u64).sum(),
        span_records: win
            .threads
            .iter()
            .flat_map(|t| &t.records)
            .filter(|r| r.kind == Kind::Span)
            .count() as u64,
        ..DumpStats::default()
    };
    w.write_all(b"{\"traceEvents\":[\n")?;
    write!(w, "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":")?;
    json_str(w, info.process_name)?;
    w.write_all(b"}}")?;

    let flows = pair_flows(win);

    for t in &win.threads {
        write_thread(w, pid, t, &flows, &mut stats)?;
    }
    write_other_data(w, info, win, &stats)?;
    Ok(stats)
}

/// One thread's name and sort index, then its records as events.
fn write_thread(
    w: &mut impl Write,
    pid: u32,
    t: &ThreadDump,
    flows: &HashMap<(u64, u64, bool), u64>,
    stats: &mut DumpStats,
) -> io::Result<()> {
    write!(
        w,
        ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":",
        t.tid
    )?;
    json_str(w, &t.name)?;
    w.write_all(b"}}")?;
    write!(w, ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{0},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{0}}}}}", t.tid)?;

    // Parents before children at equal start, so nesting is unambiguous.
    let mut order: Vec<&Record> = t.records.iter().collect();
    order.sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(b.end_ns.cmp(&a.end_ns)));
    // Ends of the enclosing spans written so far: a span that starts inside one and
    // ends after it (exits out of order, with manual enter/exit) would be dropped by
    // Perfetto with an error; it is left out here and counted instead.
    let mut open: Vec<u64> = Vec::new();
    for r in order {
        let tid = t.tid;
        match r.kind {
            Kind::Span => {
                while open.last().is_some_and(|&end| end <= r.start_ns) {
                    open.pop();
                }
                if open.last().is_some_and(|&end| r.end_ns > end) {
                    stats.overlapping += 1;
                    continue;
                }
                open.push(r.end_ns);
                write_span(w, pid, tid, r, flows, stats)?;
            }
            Kind::Instant => write_instant(w, pid, tid, r, stats)?,
            Kind::Counter => write_counter(w, pid, tid, r, stats)?,
        }
    }
    Ok(())
}

/// A span as an `X` slice, with the flow end (`s` or `f`) its publish or consume has.
fn write_span(
    w: &mut impl Write,
    pid: u32,
    tid: u64,
    r: &Record,
    flows: &HashMap<(u64, u64, bool), u64>,
    stats: &mut DumpStats,
) -> io::Result<()> {
    write!(
        w,
        ",\n{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":",
        Us(r.start_ns),
        Us(r.end_ns - r.start_ns)
    )?;
    json_str(w, r.name())?;
    w.write_all(b",\"cat\":")?;
    json_str(w, r.target())?;
    write_args(w, r, false)?;
    w.write_all(b"}")?;
    stats.events += 1;
    // Flow ends go at the slice's start, right after it: Perfetto binds `s` to the deepest
    // slice open there, which a later child (a wait inside the publish) would otherwise be.
    let at = Us(r.start_ns);
    let flow = flows.get(&(tid, r.start_ns, r.name() == "publish"));
    if let (Some(id), Some(_)) = (flow, flow_of(r, "publish")) {
        write!(w, ",\n{{\"ph\":\"s\",\"pid\":{pid},\"tid\":{tid},\"ts\":{at},\"id\":{id},\"name\":\"flow\",\"cat\":\"flow\"}}")?;
        stats.events += 1;
    }
    if let (Some(id), Some(_)) = (flow, flow_of(r, "consume")) {
        write!(w, ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":{pid},\"tid\":{tid},\"ts\":{at},\"id\":{id},\"name\":\"flow\",\"cat\":\"flow\"}}")?;
        stats.events += 1;
    }
    Ok(())
}

/// An instant as an `i` event, named by its `kind` or `message` text where it has one.
fn write_instant(
    w: &mut impl Write,
    pid: u32,
    tid: u64,
    r: &Record,
    stats: &mut DumpStats,
) -> io::Result<()> {
    let named_by_text = matches!(r.text_field(), Some("kind" | "message"));
    write!(
        w,
        ",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":",
        Us(r.start_ns)
    )?;
    if named_by_text {
        json_str(w, r.fields.text())?;
    } else {
        json_str(w, r.name())?;
    }
    w.write_all(b",\"cat\":")?;
    json_str(w, r.target())?;
    write_args(w, r, named_by_text)?;
    w.write_all(b"}")?;
    stats.events += 1;
    Ok(())
}

/// A counter as a `C` event named by its `counter` text (else its event's name); one
/// without a number (or with a non-finite one) is left out.
fn write_counter(
    w: &mut impl Write,
    pid: u32,
    tid: u64,
    r: &Record,
    stats: &mut DumpStats,
) -> io::Result<()> {
    let Some(v) = num_json(r) else { return Ok(()) };
    let name = match r.text_field() {
        Some("counter") => r.fields.text(),
        _ => r.name(),
    };
    write!(w, ",\n{{\"ph\":\"C\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":", Us(r.start_ns))?;
    json_str(w, name)?;
    write!(w, ",\"args\":{{\"value\":{v}}}}}")?;
    stats.events += 1;
    Ok(())
}

/// The end of the event list and the dump's own figures (`otherData`).
fn write_other_data(
    w: &mut impl Write,
    info: &Info<'_>,
    win: &Window,
    stats: &DumpStats,
) -> io::Result<()> {
    write!(
        w,
        "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"recorder\":\"flight-recorder\",\
         \"overwritten\":{},\"dropped\":{},\"overlapping\":{},\"threads\":{},\"records_per_thread\":{},\
         \"budget_bytes\":{},\"window_from_ns\":{},\"window_to_ns\":{}",
        stats.overwritten,
        stats.dropped,
        stats.overlapping,
        stats.threads,
        info.records_per_thread,
        info.budget_bytes,
        win.from_ns,
        win.to_ns.min(i64::MAX as u64)
    )?;
    if let Some((id, at)) = win.trigger {
        write!(w, ",\"trigger\":{id},\"trigger_at_us\":{}", Us(at))?;
    }
    w.write_all(b"}}\n")?;
    Ok(())
}
