//! The environment record written with every run (seed 000's template: date, machine,
//! OS, toolchain, flags, source version, warm-up and measured runs, input size, notes).
//!
//! [`placement`]: the CPUs a run may use and where its threads run.

pub mod placement;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A digest of the sources and build settings this binary was built from (lab/build.rs).
/// Every lab binary carries it; the runner asks a sibling binary for its own (with
/// [`BUILD_ID_ARG`]) to tell whether it was built from the same sources.
pub const BUILD_ID: &str = env!("LAB_BUILD_ID");

/// The argument on which lab-cell-* and lab-heap print [`BUILD_ID`] and exit.
pub const BUILD_ID_ARG: &str = "__build-id";

/// Where the lab keeps its outputs: the workspace root (found from the crate's manifest
/// directory at build time, checked at run time), else the nearest ancestor of the current
/// directory with a `[workspace]` Cargo.toml, else the current directory.
pub fn workspace_root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf);
    if let Some(root) = built.filter(|r| is_workspace_root(r)) {
        return root;
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors().find(|d| is_workspace_root(d)).map(Path::to_path_buf).unwrap_or(cwd)
}

fn is_workspace_root(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|s| s.contains("[workspace]"))
}

/// Everything the record holds. Fields stay flat so the report can print them as a table.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Environment {
    /// UTC, ISO 8601.
    pub date: String,
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical CPUs online (/proc/cpuinfo processors).
    pub cores: usize,
    /// CPUs this process may run on (`available_parallelism`, honours affinity and quotas).
    pub cores_available: usize,
    /// MemTotal from /proc/meminfo, in MiB.
    pub memory_mib: u64,
    /// PRETTY_NAME from /etc/os-release.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// `rustc -V` at build time.
    pub rustc: String,
    /// Cargo profile the lab was built with, optimisation level and debug info.
    pub build_profile: String,
    /// RUSTFLAGS at build time (empty when none) and the target triple.
    pub build_flags: String,
    /// Git commit of the workspace, or "unknown".
    pub git_commit: String,
    /// Whether the work tree had uncommitted changes.
    pub git_dirty: bool,
    /// 1-, 5- and 15-minute load averages when the experiment started.
    pub load_average_at_start: [f64; 3],
    /// Allocator of the timed children.
    pub timed_allocator: String,
    /// Allocator of the heap-profiling children.
    pub heap_allocator: String,
    /// Warm-up runs per fork.
    pub warmup_runs: usize,
    /// Measured runs per fork.
    pub measured_runs: usize,
    /// Rounds (forks per cell).
    #[serde(default)]
    pub rounds: usize,
    /// How the children were scheduled (timed forks alone; untimed passes side by side).
    #[serde(default)]
    pub scheduling: String,
    /// Messages per run (the input size).
    pub messages: u64,
    /// Tracing mode and whether trace files were written.
    pub tracing: String,
    /// Heap profiling mode and whether heap files were written.
    pub heap_profiling: String,
    /// The command line.
    pub command: String,
    /// Anything else worth knowing (other load, caveats).
    pub notes: Vec<String>,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The current load averages.
pub fn load_average() -> [f64; 3] {
    let s = read("/proc/loadavg");
    let mut it = s.split_whitespace().map(|x| x.parse().unwrap_or(f64::NAN));
    [it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN)]
}

/// UTC date and time from the system clock: (`YYYY-mm-ddTHH:MM:SSZ`, `YYYYmmdd-HHMMSS`).
pub fn utc_now() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z"),
        format!("{y:04}{mo:02}{d:02}-{h:02}{m:02}{s:02}"),
    )
}

impl Environment {
    /// Reads the machine, toolchain and source state now.
    pub fn capture() -> Environment {
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        let cores = cpuinfo.lines().filter(|l| l.starts_with("processor")).count();
        let memory_mib = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024);
        let os = read("/etc/os-release")
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel = read("/proc/sys/kernel/osrelease").trim().to_string();
        let root = workspace_root();
        let git_commit = git(&root, &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
        let git_dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|s| !s.is_empty());
        let flags = env!("LAB_BUILD_RUSTFLAGS");
        Environment {
            date: utc_now().0,
            cpu_model,
            cores,
            cores_available: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_mib,
            os,
            kernel,
            rustc: env!("LAB_BUILD_RUSTC").to_string(),
            build_profile: format!(
                "{} (opt-level {}, debug {})",
                env!("LAB_BUILD_PROFILE"),
                env!("LAB_BUILD_OPT_LEVEL"),
                env!("LAB_BUILD_DEBUG")
            ),
            build_flags: format!(
                "RUSTFLAGS={}; target {}",
                if flags.is_empty() { "(none)" } else { flags },
                env!("LAB_BUILD_TARGET")
            ),
            git_commit,
            git_dirty,
            load_average_at_start: load_average(),
            timed_allocator: "std::alloc::System (the platform malloc); no profiler".into(),
            heap_allocator: "dhat::Alloc in the separate lab-heap binary".into(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            ..Default::default()
        }
    }

    /// `(field, value)` pairs in the template's order, for tables.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let la = self.load_average_at_start;
        vec![
            ("date", self.date.clone()),
            ("CPU", self.cpu_model.clone()),
            (
                "cores",
                format!("{} online, {} available to the lab", self.cores, self.cores_available),
            ),
            ("memory", format!("{} MiB", self.memory_mib)),
            ("OS", self.os.clone()),
            ("kernel", self.kernel.clone()),
            ("rustc", self.rustc.clone()),
            ("build profile", self.build_profile.clone()),
            ("build flags", self.build_flags.clone()),
            (
                "git commit",
                format!("{}{}", self.git_commit, if self.git_dirty { " (dirty)" } else { "" }),
            ),
            ("rounds", self.rounds.to_string()),
            ("warm-up runs", self.warmup_runs.to_string()),
            ("measured runs", self.measured_runs.to_string()),
            ("scheduling", self.scheduling.clone()),
            ("input size", format!("{} messages per run", self.messages)),
            ("load average at start", format!("{:.2} {:.2} {:.2}", la[0], la[1], la[2])),
            ("timed runs' allocator", self.timed_allocator.clone()),
            ("heap runs' allocator", self.heap_allocator.clone()),
            ("tracing", self.tracing.clone()),
            ("heap profiling", self.heap_profiling.clone()),
            ("command", self.command.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_date_has_the_right_shape() {
        let (iso, stamp) = utc_now();
        assert_eq!(iso.len(), 20, "{iso}");
        assert!(iso.starts_with("20") && iso.ends_with('Z'), "{iso}");
        assert_eq!(stamp.len(), 15, "{stamp}");
        assert_eq!(&stamp[..4], &iso[..4]);
    }

    #[test]
    fn capture_fills_the_template() {
        let e = Environment::capture();
        assert!(e.cores >= 1 && e.cores_available >= 1);
        assert!(e.memory_mib > 0);
        assert!(e.rustc.starts_with("rustc "), "{}", e.rustc);
        assert!(!e.kernel.is_empty());
        assert!(workspace_root().join("lab").is_dir());
    }
}
