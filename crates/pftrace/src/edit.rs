//! Reading a written `.pftrace` back and changing it: taking out instants by name (the
//! lab's clock markers, which the JSON trace also loses once they have been read) and
//! adding packets (the kernel's scheduler records).

use std::collections::HashMap;
use std::io;
use std::path::Path;

use prost::Message;

use crate::protos::debug_annotation::{NameField as ArgName, Value as ArgVal};
use crate::protos::trace_packet::{Data, OptionalTrustedPacketSequenceId, SequenceFlags};
use crate::protos::track_event::{NameField, Type};
use crate::protos::{InternedData, Trace, TracePacket};
use crate::ArgValue;

/// The packets of the trace at `path`.
pub fn read(path: &Path) -> io::Result<Vec<TracePacket>> {
    let bytes = std::fs::read(path)?;
    let trace = Trace::decode(bytes.as_slice()).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
    })?;
    Ok(trace.packet)
}

/// Writes `packets` to `path` as a `Trace`, through a temporary file renamed over it, so
/// that a failed write (a full disk) leaves the old file whole and no temporary behind.
pub fn write(path: &Path, packets: Vec<TracePacket>) -> io::Result<()> {
    let tmp = path.with_extension("pftrace.tmp");
    let done =
        std::fs::write(&tmp, crate::encode(packets)).and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// An instant taken out: its time and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    pub ts: u64,
    pub args: Vec<(String, ArgValue)>,
}

/// Per sequence: the interned names seen so far.
#[derive(Default)]
struct SeqNames {
    names: HashMap<u64, String>,
    args: HashMap<u64, String>,
}

impl SeqNames {
    fn learn(&mut self, d: &InternedData) {
        for n in &d.event_names {
            self.names.insert(n.iid(), n.name().to_owned());
        }
        for n in &d.debug_annotation_names {
            self.args.insert(n.iid(), n.name().to_owned());
        }
    }
}

fn seq_of(p: &TracePacket) -> u32 {
    match p.optional_trusted_packet_sequence_id {
        Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s)) => s,
        None => 0,
    }
}

/// Takes out every TrackEvent instant named `name`; returns them in file order. A packet
/// taken out hands its interned data (and its sequence flags) to the next packet of its
/// sequence, which later packets may rely on.
pub fn take_instants(packets: &mut Vec<TracePacket>, name: &str) -> Vec<Taken> {
    let mut seqs: HashMap<u32, SeqNames> = HashMap::new();
    let mut carry: HashMap<u32, (InternedData, u32)> = HashMap::new();
    let mut taken = Vec::new();
    let mut kept = Vec::with_capacity(packets.len());
    for mut p in packets.drain(..) {
        let seq = seq_of(&p);
        let names = seqs.entry(seq).or_default();
        if p.sequence_flags() & SequenceFlags::SeqIncrementalStateCleared as u32 != 0 {
            *names = SeqNames::default();
        }
        if let Some(d) = &p.interned_data {
            names.learn(d);
        }
        let hit = match &p.data {
            Some(Data::TrackEvent(e)) if e.r#type == Some(Type::Instant as i32) => {
                let n = match &e.name_field {
                    Some(NameField::NameIid(iid)) => names.names.get(iid).map(String::as_str),
                    Some(NameField::Name(n)) => Some(n.as_str()),
                    None => None,
                };
                (n == Some(name)).then(|| Taken {
                    ts: p.timestamp(),
                    args: e.debug_annotations.iter().filter_map(|a| arg(a, names)).collect(),
                })
            }
            _ => None,
        };
        if let Some(t) = hit {
            taken.push(t);
            let entry = carry.entry(seq).or_default();
            if let Some(d) = p.interned_data.take() {
                merge(&mut entry.0, d);
            }
            entry.1 |= p.sequence_flags() & SequenceFlags::SeqIncrementalStateCleared as u32;
            continue;
        }
        if let Some((d, flags)) = carry.remove(&seq) {
            let mut all = d;
            if let Some(own) = p.interned_data.take() {
                merge(&mut all, own);
            }
            p.interned_data = Some(all);
            p.sequence_flags = Some(p.sequence_flags() | flags);
        }
        kept.push(p);
    }
    *packets = kept;
    taken
}

fn merge(into: &mut InternedData, d: InternedData) {
    into.event_names.extend(d.event_names);
    into.event_categories.extend(d.event_categories);
    into.debug_annotation_names.extend(d.debug_annotation_names);
}

fn arg(a: &crate::protos::DebugAnnotation, names: &SeqNames) -> Option<(String, ArgValue)> {
    let key = match &a.name_field {
        Some(ArgName::NameIid(iid)) => names.args.get(iid)?.clone(),
        Some(ArgName::Name(n)) => n.clone(),
        None => return None,
    };
    let v = match a.value.as_ref()? {
        ArgVal::BoolValue(b) => ArgValue::Bool(*b),
        ArgVal::UintValue(n) => ArgValue::U64(*n),
        ArgVal::IntValue(n) => ArgValue::I64(*n),
        ArgVal::DoubleValue(n) => ArgValue::F64(*n),
        ArgVal::StringValue(s) => ArgValue::Str(s.clone()),
    };
    Some((key, v))
}

/// The thread descriptors' (pid, tid, name), in file order.
pub fn threads(packets: &[TracePacket]) -> Vec<(i32, i32, String)> {
    packets
        .iter()
        .filter_map(|p| match &p.data {
            Some(Data::TrackDescriptor(d)) => d.thread.as_ref(),
            _ => None,
        })
        .map(|t| (t.pid(), t.tid(), t.thread_name().to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, TraceBuilder};

    #[test]
    fn taken_instants_leave_the_interned_names_to_later_packets() {
        let mut b = TraceBuilder::new(3, 0);
        let p = b.process(10, "p");
        let t = b.thread(p, 10, 11, "main");
        let mut mark = Event::named("clock_sync", "lab::instant");
        mark.args.push(("mono_ns".into(), ArgValue::U64(77)));
        b.instant(t, 5, &mark);
        b.instant(t, 6, &Event::named("other", "lab::instant"));
        b.instant(t, 7, &mark);
        let mut packets = b.into_packets();
        let before = packets.len();
        let taken = take_instants(&mut packets, "clock_sync");
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].ts, 5);
        assert_eq!(taken[0].args, vec![("mono_ns".to_string(), ArgValue::U64(77))]);
        assert_eq!(packets.len(), before - 2);
        // The category interned with the first marker now travels with `other`.
        let other = packets.iter().find(|p| p.timestamp == Some(6)).unwrap();
        let d = other.interned_data.as_ref().unwrap();
        assert!(d.event_categories.iter().any(|c| c.name() == "lab::instant"));
        assert!(d.event_names.iter().any(|c| c.name() == "other"));
        assert_eq!(threads(&packets), vec![(10, 11, "main".to_string())]);
    }
}
