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
    let text = std::fs::read(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{}: not a JSON trace ({e})", json.display()))?;
    let converted = pftrace::chrome::convert(&doc, CONVERTED_SEQ);
    let twin = pftrace::twin_path(json);
    std::fs::write(&twin, &converted.bytes).map_err(|e| format!("{}: {e}", twin.display()))?;
    Ok(twin)
}
