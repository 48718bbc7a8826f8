//! The options of seed 000's experiments that choose who runs each workload: the reactive
//! crate (`reactive`) and the JVM libraries ([`crate::measure::rx`]): RxJava 3 (`rx`, rows
//! `rx-…`) and Reactor, the seed's library (`reactor`, rows `reactor-…`); and how their JVMs
//! are started (`--jdk`, `--jvm-gc`, `--jvm-flags`).
//!
//! Asked for by name (`--impl reactor`) where the JVM side cannot be built, the experiment
//! refuses (one line with the install command, exit 2); by default (or `--impl all`) the
//! JVM rows run where it can be built, and stderr and a note say when they were left out
//! and why. The JDK is not left out: where `--jdk`'s JDK (25 by default, the seed's) is
//! missing, any JVM row refuses to run (one line naming the path looked in and what installs
//! it, exit 2), so no JVM row runs on a JDK other than the one the report names.

use super::choices::Choices;
use crate::measure::rx::{self, Jdk, Lib, LibSettings};
use crate::units::parse_list;
use clap::builder::PossibleValue;
use clap::Args;
use serde::Serialize;

/// The names `--impl` takes (and `fault-rx`, `fault-reactor` with `LAB_FAULTS=1`).
const IMPLS: &[(&str, &str)] = &[
    (
        "reactive",
        "the lab's Rust rows: the reactive crate (Flux, Mono, publish_on, \
         on_backpressure_buffer), and in publish-on-latency and heap-growth the locked queue, \
         the ring and the naive buffer beside it",
    ),
    ("rx", "RxJava 3 on the JVM, tools/jvm/rx (RxBench.java; needs a JDK and Maven)"),
    (
        "reactor",
        "Reactor 3.8.8 on the JVM, seed 000's library, tools/jvm/reactor (ReactorBench.java; \
         needs a JDK and Maven)",
    ),
];

/// `--impl`'s value: the names given, in order (a type of its own, so clap takes the
/// comma list as one value).
#[derive(Debug, Clone, Serialize)]
pub struct ImplList(pub Vec<String>);

/// The name that stands for the default set.
const ALL: &str = "all";

/// The planted-fault name of a library's rows.
fn fault_name(lib: Lib) -> String {
    format!("fault-{}", lib.name())
}

/// `--impl`'s parser: a comma list of [`IMPLS`] or `all` (and `fault-rx`, `fault-reactor`,
/// planted faults, with `LAB_FAULTS=1`).
fn impl_list(s: &str) -> Result<ImplList, String> {
    let faults = crate::measure::faults::enabled();
    let names = parse_list(s);
    let valid: Vec<&str> = IMPLS.iter().map(|i| i.0).chain([ALL]).collect();
    for n in &names {
        let fault = Lib::ALL.iter().any(|l| *n == fault_name(*l));
        if !(valid.contains(&n.as_str()) || faults && fault) {
            return Err(format!("--impl: unknown '{n}'; valid: {}", valid.join(", ")));
        }
    }
    if names.is_empty() {
        return Err(format!("--impl: an empty list; valid: {}", valid.join(", ")));
    }
    Ok(ImplList(names))
}

fn impl_values() -> Vec<PossibleValue> {
    let mut v: Vec<PossibleValue> =
        IMPLS.iter().map(|(n, h)| PossibleValue::new(*n).help(*h)).collect();
    v.push(PossibleValue::new(ALL).help(
        "the default: reactive, and rx and reactor where the JVM side can be built (said on \
         stderr when not)",
    ));
    if crate::measure::faults::enabled() {
        for (name, lib) in [("fault-rx", "rx"), ("fault-reactor", "reactor")] {
            v.push(PossibleValue::new(name).help(format!(
                "planted fault, test only (LAB_FAULTS=1): the {lib} rows, every run one op short"
            )));
        }
    }
    v
}

/// The JVM collector names (the lab's and the seed's flags).
fn gc_name(s: &str) -> Result<String, String> {
    let valid = rx::gc_names();
    if valid.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!("--jvm-gc: unknown collector '{s}'; valid: {}", valid.join(", ")))
    }
}

fn gc_values() -> Vec<PossibleValue> {
    crate::measure::jvm::GCS
        .iter()
        .map(|(n, h)| PossibleValue::new(*n).help(*h))
        .chain([PossibleValue::new(rx::SEED_GC).help(
            "seed 000's flags: -Xms512m -Xmx1g -XX:+UseG1GC (the Reactor rows' default; -Xmx \
             raised where an experiment's runs need more)",
        )])
        .collect()
}

pub(super) fn jdk_values() -> Vec<PossibleValue> {
    vec![
        PossibleValue::new("17").help("OpenJDK 17 (Debian's; LAB_JDK17 overrides the path)"),
        PossibleValue::new("25").help(
            "the default: Temurin 25, seed 000's JDK, /usr/lib/jvm/temurin-25-jdk-amd64 \
             (LAB_JDK25 overrides the path)",
        ),
    ]
}

/// The options (flattened into each experiment's own).
#[derive(Args, Debug, Clone, Serialize)]
pub struct ImplArgs {
    /// Who runs each workload, a comma list [default: all: reactive, and rx and reactor
    /// where the JVM side can be built; stderr and a note say when they were left out].
    #[arg(long = "impl", value_parser = Choices::new(impl_list, impl_values))]
    pub implementation: Option<ImplList>,
    /// The JDK every JVM row runs on (named in each row); a JDK that is not there is an
    /// error naming what installs it, never a skip.
    #[arg(long, default_value = "25", value_parser = Choices::new(Jdk::parse, jdk_values))]
    pub jdk: Jdk,
    /// The JVM rows' garbage collector [default: serial for rx (a fixed heap: 1 GiB, as seed
    /// 000 ran -Xmx1g; 256 MiB in backpressure-buffer; in heap-growth room for 2N messages,
    /// at least 256 MiB), seed for reactor (the seed's own flags)]. Given, it applies to both.
    #[arg(long, value_parser = Choices::new(gc_name, gc_values))]
    pub jvm_gc: Option<String>,
    /// More JVM flags for the JVM rows, after the collector's (a collector flag is refused:
    /// choose it with --jvm-gc).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub jvm_flags: String,
}

/// What runs: the reactive rows, each JVM library's settings, and a note.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// Whether the reactive crate's rows run.
    pub reactive: bool,
    /// The JVM libraries whose rows run (RxJava first, then Reactor), with their settings.
    pub jvm: Vec<LibSettings>,
    /// Why the JVM rows were left out of a default run.
    pub note: Option<String>,
}

/// What [`decide`] decides: whether the reactive rows run, the libraries whose rows run
/// (each with whether it is the planted fault), and the note of a default run.
pub type Decision = (bool, Vec<(Lib, bool)>, Option<String>);

/// What runs, from the names given and why each library cannot run here (`unavailable`):
/// whether the reactive rows run, and the libraries whose rows run with whether they are
/// planted-faulty. A library asked for by name where it cannot run is an error (one line,
/// the install command); by default each runs only where it can, and the note says so.
pub fn decide(
    given: Option<&[String]>,
    unavailable: impl Fn(Lib) -> Option<String>,
) -> Result<Decision, String> {
    let given = given.filter(|names| !names.iter().any(|n| n == ALL));
    let Some(names) = given else {
        let (ok, out): (Vec<Lib>, Vec<Lib>) =
            Lib::ALL.iter().partition(|l| unavailable(**l).is_none());
        let note = out.first().map(|l| {
            let names: Vec<&str> = out.iter().map(|l| l.name()).collect();
            format!(
                "The {} rows (beside the reactive crate) were left out: {}; install with `{}`.",
                names.join(" and "),
                unavailable(*l).unwrap_or_default(),
                rx::INSTALL
            )
        });
        return Ok((true, ok.into_iter().map(|l| (l, false)).collect(), note));
    };
    let has = |n: &str| names.iter().any(|x| x == n);
    let mut libs = Vec::new();
    for l in Lib::ALL {
        let fault = has(&fault_name(l));
        if !has(l.name()) && !fault {
            continue;
        }
        if let Some(why) = unavailable(l) {
            return Err(format!("--impl {}: {why} (install: {})", l.name(), rx::INSTALL));
        }
        libs.push((l, fault));
    }
    Ok((has("reactive"), libs, None))
}

impl ImplArgs {
    /// Resolves the options: builds the JVM programs when their rows run (a one-line error
    /// on bad input, when a library was asked for and cannot run, or when the JDK is
    /// missing).
    pub fn choose(&self) -> Result<Chosen, String> {
        self.choose_sized(rx::HEAP)
    }

    /// As [`ImplArgs::choose`], the JVM rows with a heap of `heap` bytes (the sized
    /// collectors').
    pub fn choose_sized(&self, heap: u64) -> Result<Chosen, String> {
        let given = self.implementation.as_ref().map(|l| l.0.as_slice());
        let (reactive, libs, note) = decide(given, rx::unavailable)?;
        if let Some(n) = &note {
            eprintln!("lab: {n}");
        }
        let flags = (self.jvm_gc.as_deref(), self.jvm_flags.as_str());
        let jvm = libs
            .into_iter()
            .map(|(lib, fault)| LibSettings::prepare(lib, self.jdk, flags, fault, heap))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Chosen { reactive, jvm, note })
    }
}

/// A JVM row's label: `rx-`/`reactor-` (`fault-` first for the planted fault) and the
/// workload in the library's words (`None`: the library has no such workload).
pub fn label(s: &LibSettings, rx_word: &str) -> Option<String> {
    s.label(rx_word)
}

/// The JVM library named `name` in a row's key, or `None` (the reactive crate's name, or
/// one of its variants').
pub fn lib_named(name: &str) -> Option<Lib> {
    Lib::ALL.into_iter().find(|lib| lib.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_asked_for_without_the_jvm_side_is_one_line_with_the_install_command() {
        let none = |_: Lib| Some("no Maven".to_string());
        let names = vec!["reactive".to_string(), "reactor".to_string()];
        let e = decide(Some(&names), none).unwrap_err();
        assert!(e.contains(rx::INSTALL), "{e}");
        assert!(e.starts_with("--impl reactor:") && !e.contains('\n'), "{e}");
        // By default: the reactive rows alone, and a note saying why.
        let (reactive, libs, note) = decide(None, none).unwrap();
        assert!(reactive && libs.is_empty());
        let note = note.unwrap();
        assert!(note.contains(rx::INSTALL) && note.contains("rx and reactor"), "{note}");
        let both = vec![(Lib::Rx, false), (Lib::Reactor, false)];
        assert_eq!(decide(None, |_| None).unwrap(), (true, both.clone(), None));
        // `all` is the default set, with or without the JVM side.
        let all = vec!["all".to_string()];
        assert_eq!(decide(Some(&all), |_| None).unwrap(), (true, both, None));
        let (reactive, libs, note) = decide(Some(&all), none).unwrap();
        assert!(reactive && libs.is_empty() && note.is_some());
        let faulty = vec!["fault-reactor".to_string()];
        assert_eq!(
            decide(Some(&faulty), |_| None).unwrap(),
            (false, vec![(Lib::Reactor, true)], None)
        );
    }

    #[test]
    fn impl_names_are_checked() {
        assert_eq!(impl_list("reactive,rx,reactor").unwrap().0, ["reactive", "rx", "reactor"]);
        let e = impl_list("akka").unwrap_err();
        assert!(e.contains("valid: reactive, rx, reactor, all"), "{e}");
        assert_eq!(impl_list("all").unwrap().0, ["all"]);
        assert_eq!(lib_named("reactor"), Some(Lib::Reactor));
        assert_eq!(lib_named("reactive"), None);
    }
}
