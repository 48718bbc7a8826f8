//! The lab's hook into the flight-recorder crate for the trace child of each cell.
//!
//! Modes: `flight` (per-thread bounded rings, dumped as Chrome-trace JSON after the run:
//! `flight_recorder::install_flight` then `Recorder::dump`) and `full` (every event streamed
//! by tracing-chrome: `flight_recorder::install_full` then `FullGuard::finish`). By default
//! a recorder is installed in the untimed trace child only, never in a timed child, so
//! traces cost the timed runs nothing. The exception is `--trace in-run`: there a traced
//! twin's timed forks record their measured runs ([`crate::profile::inrun`]), and the twin's
//! rows are set apart from the plain ones, its cost paired within rounds against them. What
//! tracing costs is measured by another experiment (`trace-overhead`).
//! Every JSON trace gets its native Perfetto twin (`.pftrace`, [`crate::profile::twin`]):
//! the flight recorder writes it from its records, the full capture's is converted.
//! The flight mode keeps one in [`FLIGHT_BATCH_EVERY`] consumer batch spans and per-batch
//! counter samples (per call site and thread); the full mode keeps them all.

use std::path::PathBuf;

/// The flight recorder's settings in the lab's children (the trace child and
/// `trace-overhead`'s flight children alike).
pub fn flight_config() -> flight_recorder::Config {
    flight_recorder::Config { process_name: Some("lab".to_string()), ..Default::default() }
}

/// Per-batch records the flight mode keeps: one consumer batch span and one per-batch
/// counter sample (`handoff::batch_counter!`) in this many, per call site and thread
/// (`handoff::trace::batch_every`): recording every batch cost measurably more throughput
/// than one in 16, which cost none that showed (figures: docs/design-figures.md). Other
/// counters, waits, instants and the sampled publish/consume flows are all kept; `--trace
/// full` keeps every batch.
pub const FLIGHT_BATCH_EVERY: u32 = 16;

/// Installs the flight recorder as the lab's children do: [`flight_config`], and per-batch
/// records sampled one in [`FLIGHT_BATCH_EVERY`].
pub fn install_flight() -> Result<flight_recorder::Recorder, String> {
    handoff::trace::set_batch_every(FLIGHT_BATCH_EVERY);
    flight_recorder::install_flight(flight_config())
        .map_err(|e| format!("installing the flight recorder: {e}"))
}

/// Runs `f` with the recorder of `mode` installed, then writes `file`: `f`'s value and the
/// recorder's one-line account.
pub fn traced<T>(
    mode: &str,
    file: &str,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<(T, String), String> {
    let mut hook = RecorderHook::default();
    hook.install(mode, file)?;
    let out = f();
    let mut note = hook.finish()?;
    // A JVM cell's trace is the JVM's (JFR's events and the kernel's), not this child's.
    match crate::profile::jfr::write_pending(std::path::Path::new(file)) {
        Ok(true) => {
            note = "the JVM's trace from Java Flight Recorder replaces the lab child's".into();
            if let Err(e) = crate::profile::twin::from_json(std::path::Path::new(file)) {
                note.push_str(&format!("; its .pftrace not written: {e}"));
            }
        }
        Ok(false) => {}
        Err(e) => note.push_str(&format!("; the JVM's trace not written: {e}")),
    }
    // The scheduler's slices of the run, if it recorded them (`crate::profile::sched`).
    if let Err(e) = crate::profile::sched::annotate(std::path::Path::new(file)) {
        note.push_str(&format!("; off-CPU slices not written: {e}"));
    }
    Ok((out?, note))
}

enum State {
    Idle,
    Flight(flight_recorder::Recorder, PathBuf),
    Full(flight_recorder::FullGuard),
}

/// Installs a recorder, then writes its file.
struct RecorderHook {
    state: State,
}

impl Default for RecorderHook {
    fn default() -> Self {
        RecorderHook { state: State::Idle }
    }
}

impl RecorderHook {
    fn install(&mut self, recorder: &str, file: &str) -> Result<(), String> {
        let path = PathBuf::from(file);
        self.state = match recorder {
            "flight" => State::Flight(install_flight()?, path),
            "full" => {
                let g = flight_recorder::install_full(&path)
                    .map_err(|e| format!("installing the full capture: {e}"))?;
                State::Full(g)
            }
            other => return Err(format!("trace mode '{other}'; valid: flight, full")),
        };
        Ok(())
    }

    fn finish(&mut self) -> Result<String, String> {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => Err("no recorder installed".to_string()),
            State::Flight(r, path) => {
                let s = r.dump(&path).map_err(|e| format!("dumping the flight recorder: {e}"))?;
                Ok(format!(
                    "flight: {} events from {} threads, {} overwritten, {} dropped; batch spans \
                     and per-batch counters kept 1 in {FLIGHT_BATCH_EVERY}",
                    s.events, s.threads, s.overwritten, s.dropped
                ))
            }
            State::Full(g) => {
                // `finish` streams out the rest and repairs the file for Perfetto.
                let path = g.path().to_path_buf();
                g.finish().map_err(|e| format!("finishing the full capture: {e}"))?;
                crate::profile::twin::from_own_json(&path)
                    .map_err(|e| format!("the full capture's .pftrace: {e}"))?;
                Ok("full: every event captured and repaired".to_string())
            }
        }
    }
}
