//! The lab's hook into a trace recorder for the trace child of each cell.
//!
//! Modes: `flight` (the flight-recorder crate's per-thread rings, dumped as Chrome-trace
//! JSON after the run) and `full` (streaming capture of every event). The recorder is
//! installed in the trace child only, never in a timed child.

use crate::harness::TraceHook;

/// Why tracing cannot run in this build, if it cannot.
pub fn unavailable() -> Option<String> {
    Some(
        "the flight-recorder crate does not provide install_flight/install_full in this build; \
         trace files were not written"
            .to_string(),
    )
}

/// The hook used by the trace child.
#[derive(Debug, Default)]
pub struct RecorderHook {
    file: Option<String>,
}

impl TraceHook for RecorderHook {
    fn install(&mut self, recorder: &str, file: &str) -> Result<(), String> {
        self.file = Some(file.to_string());
        match unavailable() {
            Some(why) => Err(format!("trace mode '{recorder}': {why}")),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        Err("no recorder installed".to_string())
    }
}
