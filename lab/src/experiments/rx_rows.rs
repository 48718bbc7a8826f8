//! The options of seed 000's experiments that choose who runs each workload: the reactive
//! crate (`reactive`) and RxJava 3 on the JVM (`rx`, rows `rx-…`, [`crate::measure::rx`]),
//! and how the rx rows' JVMs are started (`--jvm-gc`, `--jvm-flags`).
//!
//! Asked for by name (`--impl rx`) where RxJava cannot run, the experiment refuses (one
//! line with the install command, exit 2); by default (or `--impl all`) the rx rows run
//! where RxJava is installed, and stderr and a note say when they were left out and why.

use super::choices::Choices;
use crate::measure::rx::{self, RxSettings};
use crate::units::parse_list;
use clap::builder::PossibleValue;
use clap::Args;
use serde::Serialize;

/// The names `--impl` takes (and `fault-rx` with `LAB_FAULTS=1`).
const IMPLS: &[(&str, &str)] = &[
    (
        "reactive",
        "the lab's Rust rows: the reactive crate (Flux, Mono, publish_on, \
         on_backpressure_buffer), and in publish-on-latency and heap-growth the locked queue, \
         the ring and the naive buffer beside it",
    ),
    ("rx", "RxJava 3 on the JVM, tools/jvm/rx (RxBench.java; needs a JDK and Maven)"),
];

/// `--impl`'s value: the names given, in order (a type of its own, so clap takes the
/// comma list as one value).
#[derive(Debug, Clone, Serialize)]
pub struct ImplList(pub Vec<String>);

/// The name that stands for the default set.
const ALL: &str = "all";

/// `--impl`'s parser: a comma list of [`IMPLS`] or `all` (and `fault-rx`, a planted fault,
/// with `LAB_FAULTS=1`).
fn impl_list(s: &str) -> Result<ImplList, String> {
    let faults = crate::measure::faults::enabled();
    let names = parse_list(s);
    for n in &names {
        let known = IMPLS.iter().any(|i| i.0 == n) || n == ALL || (faults && n == "fault-rx");
        if !known {
            let valid: Vec<&str> = IMPLS.iter().map(|i| i.0).collect();
            return Err(format!("--impl: unknown '{n}'; valid: {}, {ALL}", valid.join(", ")));
        }
    }
    if names.is_empty() {
        return Err("--impl: an empty list; valid: reactive, rx, all".into());
    }
    Ok(ImplList(names))
}

fn impl_values() -> Vec<PossibleValue> {
    let mut v: Vec<PossibleValue> =
        IMPLS.iter().map(|(n, h)| PossibleValue::new(*n).help(*h)).collect();
    v.push(
        PossibleValue::new(ALL).help(
            "the default: reactive, and rx where RxJava is installed (said on stderr when not)",
        ),
    );
    if crate::measure::faults::enabled() {
        v.push(
            PossibleValue::new("fault-rx").help(
                "planted fault, test only (LAB_FAULTS=1): the rx rows, every run one op short",
            ),
        );
    }
    v
}

/// The JVM collector names.
fn gc_name(s: &str) -> Result<String, String> {
    let valid: Vec<&str> = crate::measure::jvm::GCS.iter().map(|g| g.0).collect();
    if valid.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!("--jvm-gc: unknown collector '{s}'; valid: {}", valid.join(", ")))
    }
}

fn gc_values() -> Vec<PossibleValue> {
    crate::measure::jvm::GCS.iter().map(|(n, h)| PossibleValue::new(*n).help(*h)).collect()
}

/// The options (flattened into each experiment's own).
#[derive(Args, Debug, Clone, Serialize)]
pub struct ImplArgs {
    /// Who runs each workload, a comma list [default: all: reactive, and rx where RxJava
    /// is installed; stderr and a note say when rx was left out].
    #[arg(long = "impl", value_parser = Choices::new(impl_list, impl_values))]
    pub implementation: Option<ImplList>,
    /// The rx rows' garbage collector (JVM flags; for the sized ones a fixed heap: 1 GiB, as
    /// seed 000 ran -Xmx1g; 256 MiB in backpressure-buffer; in heap-growth room for 2N
    /// messages, at least 256 MiB).
    #[arg(long, default_value = "serial", value_parser = Choices::new(gc_name, gc_values))]
    pub jvm_gc: String,
    /// More JVM flags for the rx rows, after the collector's (a collector flag is refused:
    /// choose it with --jvm-gc).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub jvm_flags: String,
}

/// What runs: the reactive rows, the rx rows' JVM settings, and a note.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// Whether the reactive crate's rows run.
    pub reactive: bool,
    /// The rx rows' settings, when they run.
    pub rx: Option<RxSettings>,
    /// Why the rx rows were left out of a default run.
    pub note: Option<String>,
}

/// Whether rx rows run and planted-faulty (`(asked, fault)`), from the names given and
/// why RxJava cannot run here: asked for by name where it cannot is an error (one line,
/// the install command); by default it runs only where it can, and the note says so.
pub fn decide(
    given: Option<&[String]>,
    unavailable: Option<String>,
) -> Result<(bool, Option<bool>, Option<String>), String> {
    let given = given.filter(|names| !names.iter().any(|n| n == ALL));
    let Some(names) = given else {
        return Ok(match unavailable {
            None => (true, Some(false), None),
            Some(why) => (
                true,
                None,
                Some(format!(
                    "The rx rows (RxJava 3 beside the reactive crate) were left out: {why}; \
                     install with `{}`.",
                    rx::INSTALL
                )),
            ),
        });
    };
    let has = |n: &str| names.iter().any(|x| x == n);
    let rx = (has("rx") || has("fault-rx")).then_some(has("fault-rx"));
    if let (Some(_), Some(why)) = (rx, &unavailable) {
        return Err(format!("--impl rx: {why} (install: {})", rx::INSTALL));
    }
    Ok((has("reactive"), rx, None))
}

impl ImplArgs {
    /// Resolves the options: builds RxBench when rx rows run (a one-line error on bad
    /// input or when rx was asked for and cannot run).
    pub fn choose(&self) -> Result<Chosen, String> {
        self.choose_sized(rx::HEAP)
    }

    /// As [`ImplArgs::choose`], the rx rows' JVMs with a heap of `heap` bytes (the sized
    /// collectors').
    pub fn choose_sized(&self, heap: u64) -> Result<Chosen, String> {
        let (reactive, rx, note) =
            decide(self.implementation.as_ref().map(|l| l.0.as_slice()), rx::unavailable())?;
        if let Some(n) = &note {
            eprintln!("lab: {n}");
        }
        let rx = match rx {
            Some(fault) => {
                Some(RxSettings::prepare_sized(&self.jvm_gc, &self.jvm_flags, fault, heap)?)
            }
            None => None,
        };
        Ok(Chosen { reactive, rx, note })
    }
}

/// An rx row's label: `rx-` (or `fault-rx-` for the planted fault) and the workload.
pub fn label(s: &RxSettings, workload: &str) -> String {
    format!("{}rx-{workload}", if s.fault { "fault-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_asked_for_without_its_jars_is_one_line_with_the_install_command() {
        let why = Some("RxJava cannot run here: no Maven".to_string());
        let names = vec!["reactive".to_string(), "rx".to_string()];
        let e = decide(Some(&names), why.clone()).unwrap_err();
        assert!(e.contains(rx::INSTALL), "{e}");
        assert!(e.starts_with("--impl rx:") && !e.contains('\n'), "{e}");
        // By default: the reactive rows alone, and a note saying why.
        let (reactive, rx, note) = decide(None, why).unwrap();
        assert!(reactive && rx.is_none());
        assert!(note.unwrap().contains(rx::INSTALL));
        assert_eq!(decide(None, None).unwrap(), (true, Some(false), None));
        // `all` is the default set, with or without the jars.
        let all = vec!["all".to_string()];
        assert_eq!(decide(Some(&all), None).unwrap(), (true, Some(false), None));
        let why = Some("RxJava cannot run here: no Maven".to_string());
        let (reactive, rx, note) = decide(Some(&all), why).unwrap();
        assert!(reactive && rx.is_none() && note.is_some());
        let faulty = vec!["fault-rx".to_string()];
        assert_eq!(decide(Some(&faulty), None).unwrap(), (false, Some(true), None));
    }

    #[test]
    fn impl_names_are_checked() {
        assert_eq!(impl_list("reactive,rx").unwrap().0, ["reactive", "rx"]);
        let e = impl_list("reactor").unwrap_err();
        assert!(e.contains("valid: reactive, rx, all"), "{e}");
        assert_eq!(impl_list("all").unwrap().0, ["all"]);
    }
}
