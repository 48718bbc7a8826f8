//! Helpers the lab's end-to-end tests share: a fresh output folder, running the built
//! binary, the arguments of a tiny run, and its output for assertion messages.

// Every test crate compiles this module and uses a part of it.
#![allow(dead_code)]

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

/// A tiny run's arguments: `experiment`, `--rounds rounds`, one measured run per fork and
/// no warm-up, then `extra`.
/// A tiny run's arguments. A `disruptor-vs-lbq` run leaves our variants' own loops out
/// unless `extra` names `--own-loops` (the calibration tests do): the other tests count
/// and read the lab's own rows.
pub fn tiny<'a>(experiment: &'a str, rounds: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![experiment, "--rounds", rounds, "--runs", "1", "--warmup", "0"];
    if experiment == "disruptor-vs-lbq" && !extra.contains(&"--own-loops") {
        args.extend(["--own-loops", "off"]);
    }
    args.extend_from_slice(extra);
    args
}

/// [`tiny`] without the untimed passes (`--heap off --trace off`), then `extra`.
pub fn tiny_no_passes<'a>(experiment: &'a str, rounds: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--heap", "off", "--trace", "off"];
    all.extend_from_slice(extra);
    tiny(experiment, rounds, &all)
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
