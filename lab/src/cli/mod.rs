//! The `lab` command line: one clap tree. `lab list`, `lab env`, `lab compare A B`,
//! `lab report DIR`, `lab view`, `lab run <experiment> [its options]` and its short form
//! `lab <experiment> [its options]`, and the hidden `__child` every child process runs.
//! Each experiment's subcommand is built from its own `Args` and the shared options, so
//! `lab <experiment> --help` shows that experiment's options only. Bad input is one line
//! on stderr and exit 2.

pub mod child;

use crate::error::Error;
use crate::experiments;
use crate::machine::Environment;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use std::path::PathBuf;

/// `lab compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The older results.json (or its folder).
    pub a: PathBuf,
    /// The newer results.json (or its folder).
    pub b: PathBuf,
}

/// `lab report DIR`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run folder (or its results.json).
    pub dir: PathBuf,
    /// Print every table, the targets, the Why sentences and the notes too.
    #[arg(long, short = 'v')]
    pub details: bool,
}

fn experiment_commands() -> impl Iterator<Item = Command> {
    experiments::ALL.iter().map(|e| e.command())
}

/// The whole tree.
pub fn command() -> Command {
    let cmd = Command::new("lab")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Runs the lab's handoff experiments and writes their reports")
        .after_help("`lab <experiment> [options]` is short for `lab run <experiment> [options]`.")
        .subcommand_required(true)
        .subcommand(Command::new("list").about("Lists experiments, variants and wait strategies"))
        .subcommand(Command::new("env").about("Prints the environment record"))
        .subcommand(CompareArgs::augment_args(Command::new("compare").about(
            "Compares two runs of one experiment row by row; exit 1 when a change lies \
             beyond both runs' intervals",
        )))
        .subcommand(ReportArgs::augment_args(
            Command::new("report").about("Renders a run's tables, report.md and report.html again"),
        ))
        .subcommand(crate::view::ViewArgs::augment_args(Command::new("view").about(
            "Serves a run folder to Perfetto's UI (127.0.0.1:9001) and prints how to open its files",
        )))
        .subcommand(
            Command::new("run")
                .about("Runs an experiment")
                .subcommand_required(true)
                .subcommands(experiment_commands()),
        )
        .subcommand(
            Command::new("__child")
                .hide(true)
                .about("Runs one cell and speaks the child protocol (used by the runner)")
                .arg(Arg::new("spec").required(true)),
        );
    cmd.subcommands(experiment_commands())
}

/// The entry point of the `lab` binary; returns the exit code. The one place an
/// [`Error`] becomes its line on stderr and its exit code.
pub fn main() -> i32 {
    let result = match command().try_get_matches() {
        Ok(m) => dispatch(&m),
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    Ok(crate::error::SUCCESS)
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    // The help is the message (on stderr); the code is bad input's.
                    let _ = e.print();
                    return Error::Usage(String::new()).exit_code();
                }
                ErrorKind::InvalidSubcommand => {
                    use clap::error::{ContextKind, ContextValue};
                    let name = match e.get(ContextKind::InvalidSubcommand) {
                        Some(ContextValue::String(s)) => s.clone(),
                        _ => String::new(),
                    };
                    Err(Error::Usage(format!(
                        "{} (commands: list, env, compare, report, view, run)",
                        experiments::unknown(&name)
                    )))
                }
                _ => Err(Error::Usage(one_line(&e.to_string()))),
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lab: {e}");
            e.exit_code()
        }
    }
}

/// clap's error as one line: the error and its possible values or tip, no usage.
fn one_line(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let s = parts.join(" ");
    let s = s.trim_start_matches("error: ");
    if s.is_empty() {
        "invalid arguments".into()
    } else {
        s.to_string()
    }
}

fn dispatch(m: &ArgMatches) -> Result<i32, Error> {
    let (name, sub) = m.subcommand().expect("a subcommand is required");
    let parse = |e: clap::Error| Error::Usage(e.to_string());
    match name {
        "list" => {
            list();
            Ok(0)
        }
        "env" => {
            env_cmd();
            Ok(0)
        }
        "compare" => {
            let a = CompareArgs::from_arg_matches(sub).map_err(parse)?;
            crate::compare::compare(&a.a, &a.b)
        }
        "report" => {
            let a = ReportArgs::from_arg_matches(sub).map_err(parse)?;
            crate::compare::report_again(&a.dir, a.details)
        }
        "view" => {
            let v = crate::view::ViewArgs::from_arg_matches(sub).map_err(parse)?;
            crate::view::run(v)
        }
        "__child" => {
            let spec = sub.get_one::<String>("spec").expect("required");
            Ok(crate::cli::child::child_main(spec, None, "system"))
        }
        "run" => {
            let (exp, em) = sub.subcommand().expect("an experiment is required");
            run_experiment(exp, em)
        }
        exp => run_experiment(exp, sub),
    }
}

fn run_experiment(name: &str, m: &ArgMatches) -> Result<i32, Error> {
    let e = experiments::find(name).ok_or_else(|| Error::Usage(experiments::unknown(name)))?;
    e.run(m)
}

fn list() {
    println!("Experiments (`lab <experiment> --help` for its options):");
    for e in experiments::ALL {
        println!("  {:<26} {}", e.name(), e.about());
    }
    println!("\nVariants of disruptor-vs-lbq (--variants):");
    for v in crate::measure::variants::all() {
        let note = v.unavailable.map(|w| format!(" [unavailable: {w}]")).unwrap_or_default();
        println!("  {:<18} {}{note}", v.name, v.help());
    }
    println!("\nRing wait strategies (--wait):");
    for (w, d) in crate::measure::variants::WAITS {
        println!("  {w:<18} {d}");
    }
}

fn env_cmd() {
    let e = Environment::capture();
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec!["field", "value"]);
    for (k, v) in e.rows() {
        if matches!(
            k,
            "warm-up runs"
                | "measured runs"
                | "rounds"
                | "input size"
                | "tracing"
                | "heap profiling"
        ) {
            continue;
        }
        t.add_row(vec![k.to_string(), v]);
    }
    println!("{t}");
}
