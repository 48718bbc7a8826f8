//! Helpers the lab's end-to-end tests share: a fresh output folder, running the built
//! binary, and its output for assertion messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty folder for one test's runs, under cargo's per-target temp dir.
pub fn out_dir(suite: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(suite).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create out dir");
    d
}

/// Runs the built `lab` binary with `args` and waits for it.
pub fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab")).args(args).output().expect("run lab")
}

/// Exit code, stdout and stderr of a run, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
