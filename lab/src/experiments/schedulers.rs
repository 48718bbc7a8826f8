//! `--scheduler`, shared by `subscribe-overhead` and `publish-on-latency`: which
//! `reactive::Scheduler` a `publish_on` row runs on. Each chosen scheduler becomes its own
//! row, labelled `<row>[<scheduler>]`.

use serde::{Deserialize, Serialize};

/// A scheduler a `publish_on` row can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sched {
    /// `Scheduler::single()`: one worker thread of the reactive crate's own.
    Single,
    /// `Scheduler::parallel(workers)`: own worker threads, a subscription pinned to one.
    Parallel,
    /// `Scheduler::rayon(workers)`: a rayon pool; drains are jobs any thread may steal.
    Rayon,
}

/// Every scheduler, in the order `all` expands to.
pub const ALL: [Sched; 3] = [Sched::Single, Sched::Parallel, Sched::Rayon];

impl Sched {
    /// Its name on the command line and in row labels.
    pub fn name(self) -> &'static str {
        match self {
            Sched::Single => "single",
            Sched::Parallel => "parallel",
            Sched::Rayon => "rayon",
        }
    }

    /// A fresh scheduler of this kind; `workers` applies to parallel and rayon (single
    /// always has one thread).
    pub fn make(self, workers: usize) -> reactive::Scheduler {
        match self {
            Sched::Single => reactive::Scheduler::single(),
            Sched::Parallel => reactive::Scheduler::parallel(workers),
            Sched::Rayon => reactive::Scheduler::rayon(workers),
        }
    }

    /// How the method lines describe it.
    pub fn describe(self, workers: usize) -> String {
        match self {
            Sched::Single => "Scheduler::single()".into(),
            Sched::Parallel => format!("Scheduler::parallel({workers})"),
            Sched::Rayon => format!("Scheduler::rayon({workers})"),
        }
    }

    /// Threads it runs.
    pub fn threads(self, workers: usize) -> usize {
        match self {
            Sched::Single => 1,
            _ => workers,
        }
    }
}

/// The parsed `--scheduler`: distinct schedulers, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schedulers(pub Vec<Sched>);

/// What `--scheduler`'s help lists.
pub const HELP_VALUES: &str = "single, parallel, rayon, a comma list, or all";

/// `--scheduler`'s possible values: every scheduler with its description, then `all`.
pub fn values() -> Vec<clap::builder::PossibleValue> {
    use clap::builder::PossibleValue;
    let help = |s: Sched| match s {
        Sched::Single => "Scheduler::single(): one worker thread of the reactive crate's own",
        Sched::Parallel => {
            "Scheduler::parallel(--workers): own worker threads, a subscription pinned to one"
        }
        Sched::Rayon => {
            "Scheduler::rayon(--workers): a rayon pool; drains are jobs any thread may steal"
        }
    };
    ALL.iter()
        .map(|s| PossibleValue::new(s.name()).help(help(*s)))
        .chain([PossibleValue::new("all").help("every scheduler above, one row each")])
        .collect()
}

/// `--scheduler`'s value parser: [`parse`], listing [`values`] in the help.
pub const PARSER: super::choices::Choices<Schedulers> = super::choices::Choices::new(parse, values);

/// Parses `single`, `parallel`, `rayon`, a comma list of them, or `all`; a wrong name is
/// one line naming the valid ones.
pub fn parse(s: &str) -> Result<Schedulers, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let add: &[Sched] = match part {
            "all" => &ALL,
            "single" => &[Sched::Single],
            "parallel" => &[Sched::Parallel],
            "rayon" => &[Sched::Rayon],
            other => {
                return Err(format!("unknown scheduler '{other}'; valid: {HELP_VALUES}"));
            }
        };
        for x in add {
            if !out.contains(x) {
                out.push(*x);
            }
        }
    }
    if out.is_empty() {
        return Err(format!("no scheduler given; valid: {HELP_VALUES}"));
    }
    Ok(Schedulers(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_all_expand_in_order_without_repeats() {
        assert_eq!(parse("rayon,single,rayon").unwrap().0, vec![Sched::Rayon, Sched::Single]);
        assert_eq!(parse("all").unwrap().0, ALL.to_vec());
        let e = parse("single,fifo").unwrap_err();
        assert!(e.contains("'fifo'") && e.contains("single, parallel, rayon"), "{e}");
    }
}
