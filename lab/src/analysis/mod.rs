//! The analysis stage, between measuring and reporting: what every experiment's `analyse`
//! draws on to turn rows into conclusions. It reads the results schema and the statistics
//! and writes results; it knows no experiment.
//!
//! * [`pairing`]: rows summarised over their forks, and paired within rounds into ratios,
//!   with the machine's phases set apart.
//! * [`verdict`]: the verdict's lines from the ratios and their intervals.
//! * [`why`]: the Why engine: rules over measured figures, the sentences and the reasons
//!   table.
//! * [`charts`]: the charts' common shapes (scores by category with their intervals).
//! * [`failure_table`]: the rows that did not finish OK.

pub mod charts;
pub mod pairing;
pub mod verdict;
pub mod why;

use crate::results::{Results, Row, Status, Table};

/// The table of rows that did not finish OK (left out of every statistic), or `None` when
/// every row did: the row's key columns (`keys` names them, `key_of` fills them), then its
/// status, what went wrong and the tail of its stderr.
pub fn failure_table(
    r: &Results,
    keys: &[&str],
    key_of: impl Fn(&Row) -> Vec<String>,
) -> Option<Table> {
    let headers: Vec<&str> =
        keys.iter().copied().chain(["status", "what", "stderr (tail)"]).collect();
    let mut t = Table::new("Failures (left out of every statistic)", &headers);
    for x in r.results.iter().filter(|x| x.status != Status::Ok) {
        let mut line = key_of(x);
        line.push(x.status.word().to_string());
        line.push(x.error.clone().unwrap_or_default());
        line.push(x.stderr_tail.clone().unwrap_or_default());
        t.rows.push(line);
    }
    t.headline = true;
    (!t.rows.is_empty()).then_some(t)
}
