//! The one runner: forks in interleaved rounds, then the untimed passes.
//!
//! Each round runs every timed cell once, each as a fresh child process (a fork); the
//! groups' order rotates by one each round and so do the cells within each group, which
//! always run side by side, so that every cell meets the same phases of a noisy machine
//! and the rows a ratio pairs ran seconds apart. Timed forks run one at a time and nothing
//! else of the lab runs beside them. After the rounds come the untimed passes: the heap
//! passes side by side on a rayon pool of two, then the trace passes one at a time, each
//! alone, since a trace records where threads waited and a child beside it would take its
//! CPU. Every child is watched ([`child`]): a heartbeat per run, its process group
//! killed on a stall or an interrupt. Progress is one bar with an ETA for every
//! experiment (plain lines when stderr is not a terminal).

pub mod child;
pub mod signal;
pub mod speed;

use crate::experiment::{
    fork_of, CellPlan, CellRecord, Experiment, Finished, ForkRecord, PassRecord, Plan, Shared,
    Switch, TraceMode,
};
use crate::protocol::{ChildSpec, Pass};
use crate::results::{Disturbance, Fork, RoundsDone, Status};
use child::ChildEnd;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Progress for every experiment: on a terminal, a bar with ETA (and a line above it per
/// failed fork or pass); otherwise plain lines, `[done/total]` first: the first finished
/// step, one per round, one per kind of pass, and one per failure.
#[derive(Debug)]
pub struct Progress {
    bar: indicatif::ProgressBar,
    plain: bool,
    done: AtomicU64,
    total: AtomicU64,
    started: Instant,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let plain = !std::io::stderr().is_terminal();
        let bar = if plain {
            indicatif::ProgressBar::hidden()
        } else {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {msg}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            b
        };
        let (done, total) = (AtomicU64::new(0), AtomicU64::new(total));
        Progress { bar, plain, done, total, started: Instant::now() }
    }

    /// `n` more steps (a made-up round).
    fn grow(&self, n: u64) {
        self.total.fetch_add(n, Ordering::SeqCst);
        self.bar.inc_length(n);
    }

    fn start(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// `[done/total]`.
    fn count(&self) -> String {
        let n = self.done.load(Ordering::SeqCst);
        format!("[{n}/{}]", self.total.load(Ordering::SeqCst))
    }

    /// A line: plain, or above the bar.
    fn say(&self, line: String) {
        if self.plain {
            eprintln!("{} {line}", self.count());
        } else {
            self.bar.println(line);
        }
    }

    /// One step done; a line only for a failure (`ok` false) or, in plain mode, the first
    /// step of the run (so a log shows the run going before its first round ends).
    fn finish_one(&self, what: &str, result: &str, ok: bool) {
        let n = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        self.bar.inc(1);
        if !ok || (self.plain && n == 1) {
            self.say(format!("{what}: {result}"));
        }
    }

    /// The estimated time left, from the pace so far.
    fn eta(&self) -> String {
        let done = self.done.load(Ordering::SeqCst).max(1);
        let left = self.total.load(Ordering::SeqCst).saturating_sub(done);
        let secs = self.started.elapsed().as_secs_f64() / done as f64 * left as f64;
        let s = secs.round() as u64;
        if s >= 60 {
            format!("{}m{:02}s", s / 60, s % 60)
        } else {
            format!("{s}s")
        }
    }

    /// A round finished (plain mode only: the bar shows it): `round 3/27: 12 forks, 41 s,
    /// ETA 2m10s`.
    fn round_done(&self, round: usize, rounds: usize, forks: usize, took: f64) {
        if self.plain {
            let extra = if round > rounds { " (made up)" } else { "" };
            self.say(format!(
                "round {round}/{rounds}{extra}: {forks} forks, {took:.0} s, ETA {}",
                self.eta()
            ));
        }
    }

    /// A kind of pass finished (plain mode only): `heap passes: 12, 30 s`.
    fn passes_done(&self, what: &str, n: usize, took: f64) {
        if self.plain && n > 0 {
            self.say(format!("{what} passes: {n}, {took:.0} s, ETA {}", self.eta()));
        }
    }
}

fn steal_and_total() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice, already in user]
    let total: u64 = v.iter().take(8).sum();
    Some((*v.get(7)?, total))
}

/// Runs `exe __child` for `spec` under the watchdog, recording what disturbed it.
fn fork<E: Experiment>(
    exe: &Path,
    c: &CellPlan<E::Cell>,
    round: usize,
    slot: usize,
    shared: &Shared,
    cores: usize,
) -> Result<ForkRecord<E::Outcome>, ()> {
    let spec = ChildSpec {
        experiment: E::NAME.into(),
        pass: Pass::Timed,
        cell: serde_json::to_value(&c.cell).expect("cells serialise"),
    };
    let cpu_ns_per_op = speed::probe();
    let cpu_ping_pong_ns = speed::ping_pong();
    let before = steal_and_total();
    let t0 = Instant::now();
    let end = child::run(exe, &["__child".into()], Some(&spec), shared.timeout(), &|_| {});
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_ping_pong_after_ns = speed::ping_pong();
    let after = steal_and_total();
    let steal_pct = match (before, after) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => {
            Some((s1 - s0) as f64 / (t1 - t0) as f64 * 100.0)
        }
        _ => None,
    };
    let disturbance = Disturbance {
        steal_pct,
        load_avg: Some(crate::machine::load_average()[0]),
        oversubscribed: c.threads > cores,
        cpu_ns_per_op,
        cpu_ping_pong_ns,
        cpu_ping_pong_after_ns,
    };
    let base = Fork {
        round,
        slot,
        score: None,
        runs: Vec::new(),
        status: Status::Ok,
        error: None,
        wall_s,
        disturbance,
    };
    match end {
        ChildEnd::Interrupted => Err(()),
        ChildEnd::Done { outcome, .. } => match serde_json::from_value::<E::Outcome>(outcome) {
            Ok(o) => {
                Ok(ForkRecord { fork: fork_of(&o, base), outcome: Some(o), stderr_tail: None })
            }
            Err(e) => Ok(ForkRecord {
                fork: Fork {
                    status: Status::Error,
                    error: Some(format!("unreadable outcome: {e}")),
                    ..base
                },
                outcome: None,
                stderr_tail: None,
            }),
        },
        ChildEnd::Failed { status, error, stderr_tail } => Ok(ForkRecord {
            fork: Fork { status, error: Some(error), ..base },
            outcome: None,
            stderr_tail: (!stderr_tail.is_empty()).then_some(stderr_tail),
        }),
    }
}

fn summary(f: &Fork, unit: &str) -> String {
    match (f.status, f.score) {
        (Status::Ok, Some(s)) => format!("{} {unit}", crate::units::fmt_num(s)),
        (s, _) => format!("{} {}", s.word(), f.error.clone().unwrap_or_default()),
    }
}

/// The order of round `round`: the groups rotated by one each round, and the cells of each
/// group rotated within it, so a group's cells (the rows its ratios pair) always run side
/// by side, each first in turn. `timed`: the cells this round runs.
fn round_order<E: Experiment>(
    cells: &[CellRecord<E>],
    timed: &[usize],
    round: usize,
) -> Vec<usize> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for &i in timed {
        let g = cells[i].plan.group.as_str();
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, v)) => v.push(i),
            None => groups.push((g, vec![i])),
        }
    }
    let n = groups.len();
    (0..n)
        .flat_map(|k| {
            let members = &groups[(k + round) % n].1;
            let m = members.len();
            (0..m).map(move |j| members[(j + round) % m])
        })
        .collect()
}

/// The timed cells (indices into `cells`) of the ratios whose usable rounds are still short
/// of `rounds` ([`crate::analysis::pairing::short_pairs`]): those a made-up round runs.
fn still_short<E: Experiment>(
    cells: &[CellRecord<E>],
    timed: &[usize],
    plan: &Plan<E::Cell>,
    rounds: usize,
) -> Vec<usize> {
    let forks: Vec<Vec<Fork>> =
        timed.iter().map(|&i| cells[i].forks.iter().map(|r| r.fork.clone()).collect()).collect();
    let rows: Vec<crate::analysis::pairing::RowForks<'_>> = timed
        .iter()
        .zip(&forks)
        .map(|(&i, f)| (cells[i].plan.group.as_str(), cells[i].plan.label.as_str(), f.as_slice()))
        .collect();
    let short =
        crate::analysis::pairing::short_pairs(&rows, plan.baseline.as_deref(), &plan.pairs, rounds);
    let mut members: Vec<usize> = short.iter().flat_map(|&(a, b)| [timed[a], timed[b]]).collect();
    members.sort_unstable();
    members.dedup();
    members
}

/// Runs the plan: rounds of forks, then the passes.
pub fn run<E: Experiment>(plan: &Plan<E::Cell>, shared: &Shared, dir: &Path) -> Finished<E> {
    signal::install();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lab"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut notes = Vec::new();
    let programs = cell_programs(plan, &exe, &mut notes);
    let mut cells: Vec<CellRecord<E>> = plan
        .cells
        .iter()
        .map(|c| CellRecord { plan: c.clone(), forks: Vec::new(), heap: None, trace: None })
        .collect();
    let timed: Vec<usize> = (0..cells.len()).filter(|&i| cells[i].plan.timed).collect();
    let rounds = if timed.is_empty() { 0 } else { shared.rounds as usize };
    let heap_bin = match shared.heap {
        Switch::On => heap_binary(&mut notes),
        Switch::Off => None,
    };
    let passes: Vec<(usize, bool)> = (0..cells.len())
        .flat_map(|i| [(i, true), (i, false)])
        .filter(|&(i, heap)| {
            let p = &cells[i].plan;
            if heap {
                p.heap && heap_bin.is_some()
            } else {
                p.trace && shared.trace != TraceMode::Off
            }
        })
        .collect();
    let progress = Progress::new((rounds * timed.len() + passes.len()) as u64);
    let mut finished = 0;
    let mut interrupted = false;
    let mut given_up: Vec<usize> = Vec::new();
    // Rounds another phase of the machine took are made up, up to as many again, when the
    // planned rounds are enough for an interval at all. A made-up round runs only the rows
    // of the ratios still short of usable rounds: another whole round would spend most of
    // its forks on pairs that have enough.
    let make_up = if E::MAKE_UP_ROUNDS
        && rounds >= crate::stats::repeat_samples_min(crate::analysis::pairing::RESULT_COVERAGE)
    {
        rounds
    } else {
        0
    };
    'rounds: for round in 0..rounds + make_up {
        let members = if round >= rounds {
            let members = still_short(&cells, &timed, plan, rounds);
            if members.is_empty() {
                break;
            }
            progress.grow(members.len() as u64);
            members
        } else {
            timed.clone()
        };
        let round_started = Instant::now();
        let order = round_order(&cells, &members, round);
        let forks = order.len();
        for (slot, ci) in order.into_iter().enumerate() {
            let c = &cells[ci].plan;
            let extra = if round >= rounds { " (made up)" } else { "" };
            let what = format!("round {}/{rounds}{extra} {} {}", round + 1, c.label, c.group);
            if given_up.contains(&ci) {
                progress.finish_one(&what, "skipped (hung or crashed in an earlier round)", true);
                continue;
            }
            progress.start(&what);
            match fork::<E>(&programs[ci], c, round, slot, shared, cores) {
                Err(()) => {
                    interrupted = true;
                    break 'rounds;
                }
                Ok(rec) => {
                    let ok = rec.fork.status == Status::Ok;
                    progress.finish_one(&what, &summary(&rec.fork, c.unit), ok);
                    if matches!(rec.fork.status, Status::Hung | Status::Crashed) {
                        given_up.push(ci);
                    }
                    cells[ci].forks.push(rec);
                }
            }
        }
        finished += 1;
        progress.round_done(round + 1, rounds, forks, round_started.elapsed().as_secs_f64());
    }
    if !given_up.is_empty() {
        notes.push(
            "A cell that hung or crashed is not run again in later rounds (its row keeps the \
             failed fork)."
                .into(),
        );
    }
    if !interrupted && !passes.is_empty() {
        interrupted = run_passes::<E>(
            &mut cells,
            &passes,
            shared,
            dir,
            &programs,
            heap_bin.as_deref(),
            &progress,
        );
    }
    progress.bar.finish_and_clear();
    Finished {
        cells,
        rounds: RoundsDone { planned: rounds, finished, made_up: finished.saturating_sub(rounds) },
        interrupted,
        notes,
        dir: dir.to_path_buf(),
    }
}

/// The untimed passes: the heap passes two at a time, then the trace passes one at a
/// time; true when interrupted.
fn run_passes<E: Experiment>(
    cells: &mut [CellRecord<E>],
    passes: &[(usize, bool)],
    shared: &Shared,
    dir: &Path,
    programs: &[PathBuf],
    heap_bin: Option<&Path>,
    progress: &Progress,
) -> bool {
    use rayon::prelude::*;
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(2).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lab: no thread pool for the passes ({e}); running them one by one");
            rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool of one")
        }
    };
    let jobs: Vec<PassJob> = passes
        .iter()
        .filter(|&&(i, _)| {
            // A cell that hung or crashed in its timed forks gets no untimed pass either.
            !cells[i].forks.iter().any(|f| matches!(f.fork.status, Status::Hung | Status::Crashed))
        })
        .map(|&(i, heap)| {
            let p = &cells[i].plan;
            let file = if heap {
                format!("{}.dhat-heap.json", p.file_stem)
            } else {
                format!("{}.trace.json", p.file_stem)
            };
            let path = dir.join(&file).display().to_string();
            let pass = if heap {
                Pass::Heap { file: path }
            } else {
                Pass::Trace { mode: shared.trace.name().into(), file: path }
            };
            let spec = ChildSpec {
                experiment: E::NAME.into(),
                pass,
                cell: serde_json::to_value(&p.cell).expect("cells serialise"),
            };
            let program =
                if heap { heap_bin.expect("heap passes need the binary") } else { &programs[i] };
            let what = format!("{} {} {}", if heap { "heap" } else { "trace" }, p.label, p.group);
            PassJob { cell: i, heap, spec, program: program.to_path_buf(), what, file }
        })
        .collect();
    let (heap_jobs, trace_jobs): (Vec<&PassJob>, Vec<&PassJob>) = jobs.iter().partition(|j| j.heap);
    let t0 = Instant::now();
    let mut results: Vec<(&PassJob, Option<PassRecord<E::Outcome>>)> = pool.install(|| {
        heap_jobs.par_iter().map(|&j| (j, run_pass::<E>(j, shared, dir, progress))).collect()
    });
    progress.passes_done("heap", heap_jobs.len(), t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    let n = trace_jobs.len();
    results.extend(trace_jobs.into_iter().map(|j| (j, run_pass::<E>(j, shared, dir, progress))));
    progress.passes_done("trace", n, t0.elapsed().as_secs_f64());
    let mut interrupted = false;
    for (j, rec) in results {
        match rec {
            None => interrupted = true,
            Some(r) if j.heap => cells[j.cell].heap = Some(r),
            Some(r) => cells[j.cell].trace = Some(r),
        }
    }
    interrupted || signal::interrupted()
}

/// One untimed pass of one cell.
struct PassJob {
    cell: usize,
    heap: bool,
    spec: ChildSpec,
    program: PathBuf,
    what: String,
    file: String,
}

/// Runs one pass; `None` when interrupted.
fn run_pass<E: Experiment>(
    j: &PassJob,
    shared: &Shared,
    dir: &Path,
    progress: &Progress,
) -> Option<PassRecord<E::Outcome>> {
    if signal::interrupted() {
        return None;
    }
    progress.start(&j.what);
    let args: Vec<String> = if j.heap { Vec::new() } else { vec!["__child".to_string()] };
    let end = child::run(&j.program, &args, Some(&j.spec), shared.timeout(), &|_| {});
    let written = dir.join(&j.file).is_file();
    let rec = match end {
        ChildEnd::Interrupted => return None,
        ChildEnd::Done { outcome, heap, note } => PassRecord {
            file: j.file.clone(),
            file_written: written,
            result: serde_json::from_value(outcome).map_err(|e| format!("unreadable outcome: {e}")),
            heap,
            note,
        },
        ChildEnd::Failed { status, error, stderr_tail } => {
            let last = stderr_tail.lines().last().unwrap_or("");
            let tail = if last.is_empty() { String::new() } else { format!(" (stderr: {last})") };
            PassRecord {
                file: j.file.clone(),
                file_written: written,
                result: Err(format!("{}: {error}{tail}", status.word())),
                heap: None,
                note: None,
            }
        }
    };
    let said = match (&rec.result, rec.file_written) {
        (Ok(_), true) => rec.note.clone().unwrap_or_else(|| format!("wrote {}", j.file)),
        (Ok(_), false) => format!("the child wrote no {}", j.file),
        (Err(e), _) => e.clone(),
    };
    progress.finish_one(&j.what, &said, rec.result.is_ok());
    Some(rec)
}

/// The program of each cell's timed forks and trace pass: the lab binary itself, or the
/// sibling binary the cell names (its allocator's), found or built once per name. A sibling
/// that cannot be had stays its expected path, so its forks fail with the reason.
fn cell_programs<C>(plan: &Plan<C>, exe: &Path, notes: &mut Vec<String>) -> Vec<PathBuf> {
    let mut found: Vec<(&str, PathBuf)> = Vec::new();
    plan.cells
        .iter()
        .map(|c| {
            let Some(name) = c.binary else { return exe.to_path_buf() };
            if let Some((_, p)) = found.iter().find(|(n, _)| *n == name) {
                return p.clone();
            }
            let p = sibling_binary(name, "the cells that run in it failed", notes)
                .unwrap_or_else(|| exe.with_file_name(name));
            found.push((name, p.clone()));
            p
        })
        .collect()
}

/// The heap binary, or `None` (with a note) when it cannot be had.
fn heap_binary(notes: &mut Vec<String>) -> Option<PathBuf> {
    sibling_binary("lab-heap", "the heap pass was skipped", notes)
}

/// Whether the binary at `p` says it was built from the same sources as this one.
fn same_build(p: &Path) -> bool {
    std::process::Command::new(p)
        .arg(crate::machine::BUILD_ID_ARG)
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| {
            o.status.success() && o.stdout.trim_ascii() == crate::machine::BUILD_ID.as_bytes()
        })
}

/// A binary of the lab crate next to the running executable, built on demand when missing
/// or built from other sources than the lab binary (`cargo run` builds only the binary it
/// runs). The binary itself says what it was built from: file times cannot, as cargo links
/// a binary it already had with its old time, and `cargo test`'s and `cargo build`'s
/// feature sets give two builds of the same sources. `otherwise` says in the note what
/// follows when it is missing.
fn sibling_binary(name: &str, otherwise: &str, notes: &mut Vec<String>) -> Option<PathBuf> {
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let candidate = dir.join(name);
    if same_build(&candidate) {
        return Some(candidate);
    }
    let target_dir = dir.parent()?;
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "-p", "lab", "--bin", name]);
    if env!("LAB_BUILD_PROFILE") == "release" {
        cmd.arg("--release");
    }
    cmd.arg("--target-dir").arg(target_dir).current_dir(crate::machine::workspace_root());
    let state = if candidate.is_file() { "from other sources than lab" } else { "missing" };
    eprintln!("lab: {} is {state}; building it ({:?})", candidate.display(), cmd);
    let ok = cmd.stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if ok && candidate.is_file() {
        if !same_build(&candidate) {
            notes.push(format!(
                "{} was rebuilt but from other sources than the running lab binary (edited since \
                 it was built?); run `cargo build --release -p lab --bins`.",
                candidate.display()
            ));
        }
        Some(candidate)
    } else if candidate.is_file() {
        notes.push(format!(
            "{} was built from other sources than the lab binary and could not be rebuilt; it \
             was used as it is.",
            candidate.display()
        ));
        Some(candidate)
    } else {
        notes.push(format!(
            "{} is missing and could not be built, so {otherwise}; run `cargo build --release \
             -p lab --bins`.",
            candidate.display()
        ));
        None
    }
}
