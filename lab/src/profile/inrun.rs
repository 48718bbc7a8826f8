//! The child half of `--trace in-run`: the flight recorder installed in a timed fork after
//! its warm-up runs and dumped after its measured runs ([`Recording`]).
//!
//! The dump goes to `<run folder>/inrun/<stem>.<pid>.trace.json`, a scratch name unique
//! per fork; the fork reports that name in its outcome and the parent (the experiment that
//! planned the traced twins) keeps or deletes it. The run folder reaches every child as
//! [`crate::protocol::RUN_DIR_ENV`], set by the pipeline before the first fork.

use crate::protocol::RUN_DIR_ENV;
use std::path::{Path, PathBuf};

/// The scratch folder of the forks' dumps, inside the run folder.
pub const SCRATCH: &str = "inrun";

/// The flight recorder over a twin's measured runs (in its timed fork).
#[derive(Debug)]
pub struct Recording {
    recorder: flight_recorder::Recorder,
    file: String,
    path: PathBuf,
}

impl Recording {
    /// Installs the flight recorder (as the trace pass does); the dump is to be named after
    /// `stem` and this process.
    pub fn start(stem: &str) -> Result<Recording, String> {
        let dir = std::env::var_os(RUN_DIR_ENV).ok_or_else(|| {
            format!("in-run trace: no run folder ({RUN_DIR_ENV} is not set by a parent lab)")
        })?;
        let file = format!("{SCRATCH}/{stem}.{}.trace.json", std::process::id());
        let path = Path::new(&dir).join(&file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("in-run trace: {}: {e}", parent.display()))?;
        }
        let recorder = crate::profile::trace::install_flight()?;
        Ok(Recording { recorder, file, path })
    }

    /// Dumps the recorder; the file's name relative to the run folder.
    pub fn finish(self) -> Result<String, String> {
        self.recorder
            .dump(&self.path)
            .map_err(|e| format!("in-run trace: dumping the flight recorder: {e}"))?;
        Ok(self.file)
    }
}
