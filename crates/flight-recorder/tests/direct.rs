//! The direct path dumps what the `tracing` path dumps for the same calls: one thread emits
//! every macro of `handoff::trace` under the flight recorder's subscriber before
//! `install_flight` (the macros then go through `tracing`), and again after it (straight
//! into the rings); the two dumps agree on every event but its timestamps and tid. One
//! test: `install_flight` is once per process.

use std::path::Path;

use flight_recorder::{install_flight, subscriber, Config};
use handoff::trace::{flow_id, WAIT_EMPTY, WAIT_FULL};
use handoff::{batch_counter, batch_span, consume_span, counter, instant, publish_span, wait_span};

/// Every macro, nested as the lab's variants nest them, with flows joining publish to
/// consume; `tracing`'s own macros too (they take the `tracing` path either way).
fn emit() {
    for seq in 0..4u64 {
        {
            let _p = publish_span!(flow_id(0, seq));
            let _w = wait_span!(WAIT_FULL);
            counter!("queue_depth", seq * 2);
        }
        let _b = batch_span!(seq + 1);
        batch_counter!("queue_depth", seq);
        {
            let _c = consume_span!(flow_id(0, seq));
            instant!("overflow", count = seq, value = -(seq as i64));
        }
        let _w = wait_span!(WAIT_EMPTY);
        instant!("no_fields");
        instant!("debug", what = ?seq);
        tracing::info!(seq, "a message");
    }
}

/// Runs `emit` on a thread named `name` and dumps `rec` to `path`; returns the dump's
/// events without their timestamps, pids and tids, in order, and its `otherData` without
/// its window.
fn record(
    rec: &flight_recorder::Recorder,
    name: &str,
    path: &Path,
    dispatch: Option<tracing::Dispatch>,
) -> (Vec<serde_json::Value>, serde_json::Value) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || match dispatch {
            Some(d) => tracing::dispatcher::with_default(&d, emit),
            None => emit(),
        })
        .expect("spawn")
        .join()
        .expect("join");
    rec.dump(path).expect("dump");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON");
    let mut events = doc["traceEvents"].as_array().expect("traceEvents").clone();
    for e in &mut events {
        let o = e.as_object_mut().expect("object");
        for k in ["ts", "dur", "pid", "tid"] {
            o.remove(k);
        }
        if o.get("name").and_then(|n| n.as_str()).is_some_and(|n| n.starts_with("event ")) {
            o.insert("name".into(), "event <file:line>".into()); // `tracing`'s event names
        }
    }
    let mut other = doc["otherData"].clone();
    for k in ["window_from_ns", "window_to_ns"] {
        other.as_object_mut().expect("otherData").remove(k);
    }
    (events, other)
}

#[test]
fn the_direct_path_dumps_what_the_tracing_path_dumps() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("direct");
    std::fs::create_dir_all(&dir).expect("dir");
    let config = || Config { process_name: Some("test".into()), ..Config::default() };

    let (sub, rec) = subscriber(config()).expect("subscriber");
    let via_tracing =
        record(&rec, "worker", &dir.join("tracing.json"), Some(tracing::Dispatch::new(sub)));

    let rec = install_flight(config()).expect("install");
    let direct = record(&rec, "worker", &dir.join("direct.json"), None);

    assert_eq!(via_tracing.1, direct.1, "otherData");
    assert_eq!(via_tracing.0.len(), direct.0.len(), "{:#?}\n{:#?}", via_tracing.0, direct.0);
    for (a, b) in via_tracing.0.iter().zip(&direct.0) {
        assert_eq!(a, b);
    }
    // What was compared: every kind of event the macros make.
    let phases: std::collections::BTreeSet<&str> =
        direct.0.iter().filter_map(|e| e["ph"].as_str()).collect();
    assert_eq!(phases, ["C", "M", "X", "f", "i", "s"].into_iter().collect());
}
