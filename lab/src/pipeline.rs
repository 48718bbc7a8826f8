//! The one flow every experiment goes through: parse → plan → run (the runner) →
//! assemble the generic rows and ratios → the experiment's `analyse` → emit (the report
//! writer). [`Registered`] is an experiment behind its name, for the CLI and the registry.

use crate::error::Error;
use crate::experiment::{Experiment, Finished, Plan, Shared, Switch, TraceMode};
use crate::machine::Environment;
use crate::protocol::{ChildSpec, Ctx};
use crate::results::{self, Results, Row, Status};
use crate::runner;
use clap::builder::TypedValueParser as _;
use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// An experiment behind a name: what the CLI and the children call.
pub trait Registered: Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// Its line in `lab list`.
    fn about(&self) -> &'static str;
    /// Its clap command (its options and the shared ones, with its defaults).
    fn command(&self) -> clap::Command;
    /// Runs it from parsed options; returns the exit code.
    fn run(&self, m: &ArgMatches) -> Result<i32, Error>;
    /// Runs one cell in this process (a child); returns the outcome as JSON.
    fn child(&self, spec: &ChildSpec, ctx: &mut Ctx) -> Result<Value, String>;
    /// Reads every row's own fields of a results.json of this experiment as its detail
    /// type; the first that does not read, with the row and the field named.
    fn check_rows(&self, r: &Results) -> Result<(), String>;
}

/// The registration of `E`.
#[derive(Debug)]
pub struct Entry<E>(std::marker::PhantomData<fn() -> E>);

impl<E> Entry<E> {
    /// For the registry.
    pub const NEW: Entry<E> = Entry(std::marker::PhantomData);
}

impl<E: Experiment> Registered for Entry<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn about(&self) -> &'static str {
        E::ABOUT
    }

    fn command(&self) -> clap::Command {
        let d = E::DEFAULTS;
        let cmd = E::Args::augment_args(clap::Command::new(E::NAME));
        // After the args: deriving `Args` sets the command's `about` from the struct's docs.
        let cmd = Shared::augment_args(cmd).about(E::ABOUT);
        let traces: Vec<&'static str> = d.trace.iter().map(|t| t.name()).collect();
        let heaps: &[&'static str] = if d.heap.is_some() { &["on", "off"] } else { &["off"] };
        let heap_default = match d.heap {
            Some(Switch::On) => "on",
            _ => "off",
        };
        // clap keeps defaults as 'static strings; the command is built once per process.
        let text = |n: u64| -> &'static str { Box::leak(n.to_string().into_boxed_str()) };
        cmd.mut_arg("rounds", |a| a.default_value(text(d.rounds)).required(false))
            .mut_arg("runs", |a| a.default_value(text(d.runs)).required(false))
            .mut_arg("warmup", |a| a.default_value(text(d.warmup)).required(false))
            .mut_arg("trace", |a| {
                a.value_parser(
                    clap::builder::PossibleValuesParser::new(traces.clone()).map(|s: String| {
                        TraceMode::from_str(&s, true).expect("a listed trace mode")
                    }),
                )
                .default_value(traces[0])
                .required(false)
            })
            .mut_arg("heap", |a| {
                a.value_parser(
                    clap::builder::PossibleValuesParser::new(heaps.to_vec())
                        .map(|s: String| Switch::from_str(&s, true).expect("a listed switch")),
                )
                .default_value(heap_default)
                .required(false)
            })
    }

    fn run(&self, m: &ArgMatches) -> Result<i32, Error> {
        let usage = |e: clap::Error| Error::Usage(first_line(&e.to_string()));
        let shared = Shared::from_arg_matches(m).map_err(usage)?;
        let args = E::Args::from_arg_matches(m).map_err(usage)?;
        crate::units::at_least_one(&[(shared.rounds, "--rounds"), (shared.runs, "--runs")])
            .map_err(Error::Usage)?;
        // A plan rejects bad options and combinations of them: bad input.
        let plan = E::plan(&args, &shared).map_err(Error::Usage)?;
        let (dir, default_location) = choose_run_dir(shared.out.as_deref(), E::NAME);
        check_writable(&dir)?;
        // Children that write into the run folder from a timed fork find it here.
        crate::protocol::export_run_dir(&dir);
        let env = environment(&shared, &plan);
        let finished = runner::run::<E>(&plan, &shared, &dir);
        let mut out = assemble::<E>(&args, &shared, &plan, env, &finished);
        // A failure in the analysis (a row's fields that its own code cannot read back) is
        // not allowed to lose what was measured: the rows, forks and ratios are written
        // with the failure in the notes.
        let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            E::analyse(&args, &finished, &mut out);
        }));
        // What `lab report` and `lab compare` will read back must read as this experiment's
        // rows.
        let analysed = analysed
            .map_err(|p| {
                let s = p.downcast_ref::<String>().cloned();
                s.or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic without a message".into())
            })
            .and_then(|()| self.check_rows(&out));
        if let Err(why) = &analysed {
            out.status = "failed".into();
            out.notes.push(format!("The analysis failed after measuring: {why}"));
        }
        // Every JSON trace the run left gets its native Perfetto twin.
        out.notes.extend(crate::profile::twin::complete_dir(&dir));
        crate::report::emit(&out, &dir, default_location, shared.details).map_err(Error::Failed)?;
        if analysed.is_err() {
            return Err(Error::Failed(format!(
                "the analysis failed after measuring; the measured rows are in {}",
                dir.join("results.json").display()
            )));
        }
        outcome(&out, &finished)
    }

    fn check_rows(&self, r: &Results) -> Result<(), String> {
        r.results.iter().try_for_each(|x| {
            x.typed_key::<E::Key>()?;
            x.typed_detail::<E::Detail>().map(drop)
        })
    }

    fn child(&self, spec: &ChildSpec, ctx: &mut Ctx) -> Result<Value, String> {
        let cell: E::Cell =
            serde_json::from_value(spec.cell.clone()).map_err(|e| format!("bad cell: {e}"))?;
        let out = E::run_cell(&cell, ctx)?;
        serde_json::to_value(out).map_err(|e| format!("outcome does not serialise: {e}"))
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string()
}

/// How a run that wrote its files ends: interrupted, a row that did not pass, or success.
fn outcome<E: Experiment>(out: &Results, run: &Finished<E>) -> Result<i32, Error> {
    if run.interrupted {
        return Err(Error::Interrupted);
    }
    let bad = out.results.iter().filter(|r| r.status != Status::Ok).count();
    if bad > 0 {
        return Err(Error::Failed(format!("{bad} row(s) did not pass (see the tables)")));
    }
    Ok(crate::error::SUCCESS)
}

fn environment<C>(shared: &Shared, plan: &Plan<C>) -> Environment {
    let mut env = Environment::capture();
    env.warmup_runs = shared.warmup as usize;
    env.measured_runs = shared.runs as usize;
    env.rounds = shared.rounds as usize;
    env.messages = plan.input_size;
    env.scheduling = "timed forks run one at a time, nothing else of the lab running; after \
                      the rounds the untimed heap children run side by side (a rayon pool of \
                      2), then the trace children one at a time"
        .into();
    env.tracing = match shared.trace {
        TraceMode::Off => "off".into(),
        m => format!("{}: a separate untimed child per cell", m.name()),
    };
    env.heap_profiling = match shared.heap {
        Switch::Off => "off".into(),
        Switch::On => "on: a separate untimed child per cell under dhat::Profiler".into(),
    };
    env
}

/// The generic rows (envelope and forks) and ratios of a finished run.
fn assemble<E: Experiment>(
    args: &E::Args,
    shared: &Shared,
    plan: &Plan<E::Cell>,
    environment: Environment,
    run: &Finished<E>,
) -> Results {
    let mut rows: Vec<Row> = run.cells.iter().map(crate::experiment::CellRecord::row).collect();
    rows.iter_mut().for_each(crate::analysis::pairing::summarise_forks);
    let mut ratios = plan
        .baseline
        .as_deref()
        .map(|b| crate::analysis::pairing::paired_ratios(&rows, b))
        .unwrap_or_default();
    for (row, base) in &plan.pairs {
        ratios.extend(crate::analysis::pairing::pair_ratios(&rows, row, base));
    }
    let failed = rows.iter().any(|r| r.status != Status::Ok);
    let mut notes = plan.notes.clone();
    notes.extend(run.notes.iter().cloned());
    if run.interrupted {
        notes.push(format!(
            "Interrupted: {} of {} rounds finished; the forks that finished are kept.",
            run.rounds.finished, run.rounds.planned
        ));
    }
    if run.rounds.made_up > 0 {
        notes.push(format!(
            "{} rounds were run past the {} planned, to make up for rounds in which a fork ran \
             in another phase of the machine (its cross-core round trip more than {}× from \
             the usual one; such rounds are set apart from the ratios). Each ran only the \
             rows of the ratios still short of rounds.",
            run.rounds.made_up,
            run.rounds.planned,
            crate::analysis::pairing::PHASE_FACTOR
        ));
    }
    Results {
        schema_version: results::SCHEMA_VERSION,
        experiment: E::NAME.to_string(),
        status: if run.interrupted {
            "interrupted".into()
        } else if failed {
            "failed".into()
        } else {
            "complete".into()
        },
        environment,
        config: serde_json::json!({"shared": shared, "experiment": args, "plan": plan.config}),
        rounds: run.rounds.clone(),
        results: rows,
        ratios,
        tables: Vec::new(),
        targets: Vec::new(),
        charts: Vec::new(),
        files: Vec::new(),
        method: method(shared),
        notes,
        why: Vec::new(),
        verdict: Vec::new(),
        reasons: None,
    }
}

fn method(s: &Shared) -> Vec<String> {
    vec![
        format!(
            "Each cell ran in {} rounds; a round runs every cell once, each as a fresh child \
             process (a fork, as JMH forks JVMs); the cells of a group (the rows a ratio \
             pairs) run side by side, and both the groups' order and the order within each \
             group rotate by one each round, so every cell meets the same phases of the \
             machine. Timed forks run one at a time.",
            s.rounds
        ),
        format!(
            "A fork makes {} warm-up run(s), discarded, then {} measured run(s); its score is \
             their median. A row's score is the median of its forks' scores, with a \
             distribution-free interval from order statistics (exact binomial coverage ≥ 99%, \
             printed when there are 8 forks or more: 95% intervals from one run did not \
             cover the few-percent shifts between whole runs seen on these VMs).",
            s.warmup, s.runs
        ),
        "Ratios are taken within each round (row against the baseline row of the same round) \
         and summarised as the median over rounds with its repeat interval: the order \
         statistics [x(k), x(n+1−k)] between which the median of a repeat run of as many \
         rounds falls with probability ≥ 99%, if rounds are independent and the machine stays \
         as it was (distribution-free; exact for an odd number of rounds; 13 rounds or more). \
         It is wider than a confidence interval of this run's median, because the next run's \
         median varies too. One wider than ±10% of its median is marked unstable, with the \
         rounds that would narrow it (assuming it narrows as 1/√rounds). The speed probe \
         (ns per dependent multiply-add on each CPU, before every fork) shows whether the \
         machine itself changed speed during the run."
            .into(),
        format!(
            "Forks whose scores split into two clusters (sorted scores with a gap of at least \
             {}× and each side at least {:.0}% of the forks) are reported as bimodal, with both \
             modes and their shares.",
            crate::stats::MODE_GAP,
            crate::stats::MODE_MIN_SHARE * 100.0
        ),
        "Every run checks itself before its time is used; a failed check makes the row \
         INVALID and keeps it out of every statistic. A child that finishes no run within \
         the watchdog's limit is killed with its process group (HUNG); one that dies is \
         CRASHED."
            .into(),
    ]
}

/// The run folder: `out` if given (false: not the default location), else a new
/// `traces/<experiment>/<UTC stamp>[-n]` in the workspace (true). Creates nothing.
pub fn choose_run_dir(out: Option<&Path>, experiment: &str) -> (PathBuf, bool) {
    match out {
        Some(d) => (d.to_path_buf(), false),
        None => {
            let base = crate::machine::workspace_root().join("traces").join(experiment);
            let stamp = crate::machine::utc_now().1;
            let mut dir = base.join(&stamp);
            let mut n = 2;
            while dir.exists() {
                dir = base.join(format!("{stamp}-{n}"));
                n += 1;
            }
            (dir, true)
        }
    }
}

/// The `--out` folder, before measuring starts: one that cannot be written is bad input.
fn check_writable(dir: &Path) -> Result<(), Error> {
    let fail = |e: std::io::Error| {
        Error::Usage(format!("cannot write to output folder {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(".lab-write-probe");
    std::fs::write(&probe, b"").map_err(fail)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}
