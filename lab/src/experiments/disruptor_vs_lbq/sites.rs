//! The top allocation sites of each row: dhat's (the Rust rows' untimed heap pass, exact
//! bytes) beside Java Flight Recorder's (the JVM rows' trace pass, sampled bytes).

use super::HandoffDetail;
use crate::results::{Results, Table};

/// Sites shown per row.
const PER_ROW: usize = 3;

/// The table, when some row has sites.
pub(super) fn table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Top allocation sites (dhat for Rust rows, JFR allocation samples for JVM rows)",
        &["variant", "P", "profiler", "site", "bytes", "bytes/msg", "blocks or samples"],
    );
    for x in &r.results {
        let Some(d) = x.typed_detail::<HandoffDetail>() else { continue };
        let p = x.key_u64("producers").map_or("–".into(), |p| p.to_string());
        if let Some(h) = &d.heap {
            let m = h.messages.max(1) as f64;
            for s in h.top_sites.iter().take(PER_ROW) {
                t.rows.push(vec![
                    x.label.clone(),
                    p.clone(),
                    "dhat".into(),
                    s.frames.first().cloned().unwrap_or_else(|| "?".into()),
                    s.total_bytes.to_string(),
                    format!("{:.1}", s.total_bytes as f64 / m),
                    s.total_blocks.to_string(),
                ]);
            }
        }
        for s in d.jvm.iter().flat_map(|j| j.allocation_sites.iter()).take(PER_ROW) {
            t.rows.push(vec![
                x.label.clone(),
                p.clone(),
                "JFR".into(),
                format!("{} at {}", s.class, s.frame),
                format!("{:.0}", s.weight_bytes),
                "–".into(),
                s.samples.to_string(),
            ]);
        }
    }
    t.note = Some(
        "dhat: every allocation of the heap run (results[].heap.top_sites), per message over \
         its messages. JFR: jdk.ObjectAllocationSample in the trace pass \
         (results[].jvm.allocation_sites), bytes are the samples' weights (JFR's estimate of \
         what was allocated there), over Bus's marked runs where it marks them, else the \
         whole JVM (its JIT warm-up too), so no per-message figure."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}
