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
