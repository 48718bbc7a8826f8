//! The bus's plain loops under the referee. The lab side is `Bus --plain` (Plain.java), the
//! own loop disruptor-vs-lbq calibrates `jvm-lbq` and `jvm-disruptor` against; JMH's side
//! is the same per-message work (the lab's message, each producer's sequence and stamp,
//! the consumer's check, from `lab.bus.PlainParts`) in JMH's own threads as an asymmetric
//! group (tools/jvm/jmh's `BusLbqReferee`, `BusDisruptorReferee`), on the same JVM flags,
//! producers and CPUs. Both give messages per µs (M msgs/s).

use crate::machine::placement::{self, Placement};
use crate::measure::harness::{CellSpec, JvmSettings};
use crate::measure::jvm;

/// Ring slots of the Disruptor, both sides (disruptor-vs-lbq's default).
const RING_SIZE: usize = 64 * 1024;
/// Stamp every K-th message of each producer, both sides (disruptor-vs-lbq's default).
const SAMPLE_EVERY: u64 = 1024;
/// Payload bytes of the lab's message.
const PAYLOAD: usize = 16;
/// JIT passes before a lab fork's runs (disruptor-vs-lbq's default).
const JIT_WARMUP: u64 = 2;
/// Messages the heap is sized for at least: JMH's unbounded queue can hold a second's
/// backlog when an iteration ends, more than a short lab run sends.
const HEAP_MESSAGES: u64 = 16 << 20;
/// The wait strategy, both sides: seed 001's.
const WAIT: &str = "blocking";

/// The lab side: `variant`'s own-loop cell with `p` producers and `messages` a run.
pub fn lab_cell(
    variant: &str,
    p: usize,
    messages: u64,
    (warmup, runs): (usize, usize),
) -> Result<CellSpec, String> {
    let heap = jvm::heap_bytes(
        messages.max(HEAP_MESSAGES),
        RING_SIZE as u64,
        PAYLOAD,
        "inline",
        jvm::heap_cap(),
    );
    let flags = jvm::gc_flags(jvm::DEFAULT_GC, heap).ok_or("the default collector has flags")?;
    Ok(CellSpec {
        variant: variant.to_string(),
        wait: Some(WAIT.to_string()),
        producers: p,
        messages,
        warmup,
        runs,
        ring_size: RING_SIZE,
        capacity: None,
        prefetch: 256,
        payload: PAYLOAD,
        sample_every: SAMPLE_EVERY,
        batch: 1,
        sampling_ab_pairs: 0,
        heap_messages: messages,
        trace_messages: messages,
        min_measure_ms: 0.0,
        spread_measure_ms: 0.0,
        in_run_trace: None,
        jvm: Some(JvmSettings {
            classes: jvm::class_path(variant)?,
            flags,
            wait: WAIT.to_string(),
            message: "inline".to_string(),
            gc: jvm::DEFAULT_GC.to_string(),
            jit_warmup: JIT_WARMUP,
            drop_one: false,
        }),
        allocator: None,
        placement: Placement::Auto,
        calibration: None,
    })
}

/// JMH's side of a bus workload.
#[derive(Debug)]
pub struct JmhForm {
    /// The benchmark, fully qualified.
    pub benchmark: String,
    /// Its `-p` parameters.
    pub params: Vec<(String, String)>,
    /// Its thread groups (`-tg`).
    pub thread_groups: String,
    /// The method whose score is the figure (`None`: the group's).
    pub metric: Option<String>,
}

/// JMH's side of `variant` with `p` producers.
pub fn jmh_form(variant: &str, p: usize) -> Result<JmhForm, String> {
    // The CPUs Bus would pin to (consumer first), so both sides run in one placement;
    // `:`-separated, as JMH's `-p` splits a value on commas.
    let pin = placement::plan(Placement::Auto, p + 1)?
        .map(|cpus| cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(":"))
        .unwrap_or_default();
    let mut params = vec![
        ("message", "inline".to_string()),
        ("payload", PAYLOAD.to_string()),
        ("sampleEvery", SAMPLE_EVERY.to_string()),
        ("producers", p.to_string()),
        ("pin", pin),
    ];
    let form = match variant {
        // Subgroups in the order of their methods' names: `put`, then `take`.
        "jvm-lbq" => ("lab.referee.BusLbqReferee.lbq", format!("{p},1"), Some("take")),
        "jvm-disruptor" => {
            params.push(("ringSize", RING_SIZE.to_string()));
            params.push(("waitStrategy", WAIT.to_string()));
            ("lab.referee.BusDisruptorReferee.disruptor", p.to_string(), None)
        }
        other => return Err(format!("no JMH form of {other}; valid: jvm-lbq, jvm-disruptor")),
    };
    Ok(JmhForm {
        benchmark: form.0.to_string(),
        params: params.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        thread_groups: form.1,
        metric: form.2.map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sides agree on what they run: producers, the wait and the thread groups.
    #[test]
    fn both_sides_run_the_same_loop() {
        let f = jmh_form("jvm-lbq", 4).unwrap();
        assert_eq!(f.benchmark, "lab.referee.BusLbqReferee.lbq");
        assert_eq!((f.thread_groups.as_str(), f.metric.as_deref()), ("4,1", Some("take")));
        assert!(f.params.contains(&("producers".to_string(), "4".to_string())), "{f:?}");
        let f = jmh_form("jvm-disruptor", 2).unwrap();
        assert_eq!((f.thread_groups.as_str(), f.metric), ("2", None));
        assert!(f.params.contains(&("waitStrategy".to_string(), WAIT.to_string())));
        assert!(jmh_form("ring", 1).unwrap_err().contains("valid: jvm-lbq, jvm-disruptor"));
    }
}
