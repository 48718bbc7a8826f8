//! The native Perfetto trace (`.pftrace`) beside each Chrome JSON trace the lab writes,
//! named by [`pftrace::twin_path`] (`x.trace.json` → `x.pftrace`).
//!
//! The flight recorder writes its twin itself, from its records, when it dumps. The traces
//! that are written as JSON first get theirs here, converted from the finished JSON
//! ([`pftrace::chrome`]): the full capture (tracing-chrome's file, once repaired) and the
//! JVM's trace from JFR's events. Either way [`crate::profile::sched::annotate`] then adds
//! the kernel's scheduler records to the twin as ftrace packets.

use std::path::{Path, PathBuf};

/// The sequence id of converted traces' packets (the flight recorder's dumps use 1).
const CONVERTED_SEQ: u32 = 2;

/// Writes the `.pftrace` of the JSON trace at `json`, converted; returns its path.
pub fn from_json(json: &Path) -> Result<PathBuf, String> {
    convert(json, None)
}

/// As [`from_json`], for a trace of this process whose events name another pid (the full
/// capture's: tracing-chrome writes pid 1), so that the kernel's records join it.
pub fn from_own_json(json: &Path) -> Result<PathBuf, String> {
    convert(json, Some(i64::from(std::process::id())))
}

fn convert(json: &Path, pid_as: Option<i64>) -> Result<PathBuf, String> {
    let text = std::fs::read(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{}: not a JSON trace ({e})", json.display()))?;
    let converted = pftrace::chrome::convert(&doc, CONVERTED_SEQ, pid_as);
    let twin = pftrace::twin_path(json);
    std::fs::write(&twin, &converted.bytes).map_err(|e| format!("{}: {e}", twin.display()))?;
    Ok(twin)
}

/// Gives every `*.trace.json` directly in `dir` that has none its `.pftrace` (the traces
/// that experiments write, move or rename as JSON after the recorder's dump: the slowest
/// messages' journeys, the in-run forks' dumps, trace-overhead's files). Returns a note per
/// trace that could not be converted.
pub fn complete_dir(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut jsons: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".trace.json")))
        .filter(|p| !pftrace::twin_path(p).exists())
        .collect();
    jsons.sort();
    jsons
        .iter()
        .filter_map(|p| from_json(p).err())
        .map(|e| format!("a trace's .pftrace not written: {e}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_trace_left_without_a_twin_gets_one() {
        let dir = std::env::temp_dir().join(format!("lab-twin-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("a.slowest.trace.json");
        std::fs::write(
            &json,
            r#"{"traceEvents":[
              {"ph":"M","pid":3,"tid":4,"name":"thread_name","args":{"name":"consumer"}},
              {"ph":"X","pid":3,"tid":4,"ts":1.5,"dur":2,"name":"in the channel","cat":"lab"}]}"#,
        )
        .unwrap();
        std::fs::write(dir.join("broken.trace.json"), "{").unwrap();
        std::fs::write(dir.join("results.json"), "{}").unwrap();
        let notes = complete_dir(&dir);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("broken.trace.json"), "{notes:?}");
        let packets = pftrace::edit::read(&dir.join("a.slowest.pftrace")).unwrap();
        assert_eq!(pftrace::edit::threads(&packets), vec![(3, 4, "consumer".to_string())]);
        assert!(!dir.join("results.pftrace").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
