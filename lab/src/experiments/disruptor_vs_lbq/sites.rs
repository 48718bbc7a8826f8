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
        let Some(d) = x.detail_if_any::<HandoffDetail>() else { continue };
        let p = super::key(x).producers.to_string();
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
        if let Some(j) =
            d.jvm.as_ref().filter(|j| j.allocation_sites.is_empty() && d.trace.is_some())
        {
            // Traced, yet JFR sampled nothing: a row that allocates (almost) nothing per
            // message says so rather than vanish from the table.
            let per = j.allocated_bytes_per_message.map_or("–".into(), |b| format!("{b:.2}"));
            t.rows.push(vec![
                x.label.clone(),
                p.clone(),
                "JFR".into(),
                "none sampled (bytes/msg: ThreadMXBean, timed runs)".into(),
                "0".into(),
                per,
                "0".into(),
            ]);
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

#[cfg(test)]
mod tests {
    use super::super::detail::JvmDetail;
    use super::*;
    use serde_json::json;

    fn results(jvm: JvmDetail, trace: Option<&str>) -> Results {
        let mut x: crate::results::Row = serde_json::from_value(json!({
            "label": "jvm-disruptor", "key": {"variant": "jvm-disruptor", "producers": 1}, "group": "P=1", "status": "OK",
            "valid": true, "unit": "ms", "higher_is_better": false, "score": 10.0, "forks": []
        }))
        .expect("row");
        let d = HandoffDetail {
            jvm: Some(jvm),
            trace: trace.map(str::to_string),
            ..Default::default()
        };
        x.set_detail(&d);
        let mut r: Results = serde_json::from_value(json!({
            "schema_version": crate::results::SCHEMA_VERSION, "experiment": "t",
            "status": "complete", "environment": crate::machine::Environment::default(),
            "config": {}, "rounds": {"planned": 1, "finished": 1, "made_up": 0},
            "results": [], "ratios": [], "tables": [], "targets": [], "charts": [],
            "files": [], "method": [], "notes": [], "why": [], "verdict": []
        }))
        .expect("results");
        r.results.push(x);
        r
    }

    /// A traced JVM row for which JFR sampled no allocation keeps a row that says so, with
    /// the JVM's own bytes per message; untraced, it has nothing to show.
    #[test]
    fn a_traced_jvm_row_without_samples_says_none_were_sampled() {
        let jvm = JvmDetail { allocated_bytes_per_message: Some(0.11), ..Default::default() };
        let t = table(&results(jvm.clone(), Some("jvm-disruptor-p1.trace.json"))).expect("a row");
        assert_eq!(t.rows.len(), 1, "{:?}", t.rows);
        assert!(t.rows[0][3].starts_with("none sampled"), "{:?}", t.rows[0]);
        assert_eq!(t.rows[0][5], "0.11");
        assert!(table(&results(jvm, None)).is_none());
    }
}
