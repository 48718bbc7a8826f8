//! `backpressure-buffer`'s JVM rows: a library's program (RxBackpressure.java,
//! ReactorBackpressure.java) runs a case in one JVM, and the lab checks each run again
//! against its own N and the seed's counts.

use super::{
    seed_expectation, BpOutcome, BpRun, Case, Cell, Outcome, SEED_CAP, SEED_N, SERVICE_NS,
};
use crate::measure::rx::{LibSettings, RxBpRun};
use crate::protocol::Ctx;

/// The lab's check of one JVM run of `case`: the JVM's own check, then the counts against
/// the lab's N and the seed's expectations (the same as the reactive rows' where they
/// apply; under ERROR the element that overflowed must be capacity + 1: element 0 waits in
/// observeOn's 1-slot queue, 1..=capacity fill the buffer).
fn rx_check(case: &Case, r: &RxBpRun) -> Result<(), String> {
    if r.check != "ok" {
        return Err(format!("the JVM's check: {}", r.check));
    }
    if !r.in_order {
        return Err("elements arrived out of order".into());
    }
    let (n, error) = match case {
        Case::Seed { case, policy } => {
            let (want, terminal) = seed_expectation(case, policy);
            if r.overflows != want || !r.terminal.starts_with(terminal) {
                return Err(format!(
                    "{} overflows ending {:?}, expected {want} ending {terminal}",
                    r.overflows, r.terminal
                ));
            }
            if r.overflows_at_once.is_some_and(|a| a != r.overflows) {
                return Err(format!(
                    "{} overflows after the range had finished",
                    r.overflows - r.overflows_at_once.unwrap_or(0)
                ));
            }
            (SEED_N, terminal == "error")
        }
        Case::Grid { n, .. } => (*n, false),
    };
    if error {
        let at = SEED_CAP as i64 + 1;
        if r.last_emitted != at {
            return Err(format!("element {} overflowed, expected element {at}", r.last_emitted));
        }
    } else if r.delivered + r.overflows != n || r.terminal != "complete" {
        return Err(format!(
            "delivered {} + overflowed {} != {n} (terminal: {})",
            r.delivered, r.overflows, r.terminal
        ));
    }
    Ok(())
}

/// A JVM cell: the library's program runs the case in one JVM (warm-up and measured runs);
/// each run is checked here again.
pub(super) fn run_rx(cell: &Cell, rx: &LibSettings, ctx: &mut Ctx) -> Result<BpOutcome, String> {
    let mut extra: Vec<String> = Vec::new();
    let n = match &cell.case {
        Case::Seed { case, policy } => {
            extra.extend(["--case", case, "--policy", policy].map(String::from));
            extra.extend(["--capacity".to_string(), SEED_CAP.to_string()]);
            SEED_N
        }
        Case::Grid { n, capacity, rate } => {
            extra.extend(["--case", "grid", "--policy", "drop-latest"].map(String::from));
            extra.extend(["--capacity".to_string(), capacity.to_string()]);
            extra.extend(["--rate".to_string(), rate.to_string()]);
            extra.extend(["--service-ns".to_string(), SERVICE_NS.to_string()]);
            *n
        }
    };
    let (o, _) =
        crate::measure::rx::run(rx, "backpressure", n, (cell.warmup, cell.runs), &extra, ctx)?;
    let run = |r: &crate::measure::rx::RxRun| -> BpRun {
        let Some(b) = &r.bp else {
            return BpRun {
                outcome: None,
                elapsed_ms: None,
                valid: false,
                verdict: format!("the {} program returned no counts", rx.lib.library()),
            };
        };
        let verdict = rx_check(&cell.case, b);
        BpRun {
            outcome: Some(Outcome {
                delivered: b.delivered,
                overflows: b.overflows,
                terminal: b.terminal.clone(),
            }),
            elapsed_ms: b.elapsed_ms,
            valid: verdict.is_ok(),
            verdict: verdict.err().unwrap_or_else(|| "ok".into()),
        }
    };
    Ok(BpOutcome {
        warmup: o.warmup.iter().map(run).collect(),
        runs: o.runs.iter().map(run).collect(),
        rxjava_version: Some(rx.library_text(&o)),
        jvm: Some(o.jvm),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx_run(delivered: u64, overflows: u64, last: i64, terminal: &str) -> RxBpRun {
        RxBpRun {
            emitted: delivered + overflows,
            last_emitted: last,
            delivered,
            overflows,
            overflows_at_once: None,
            in_order: true,
            terminal: terminal.into(),
            elapsed_ms: None,
            check: "ok".into(),
        }
    }

    #[test]
    fn an_rx_run_is_checked_against_the_labs_own_counts() {
        let seed = |policy: &str| Case::Seed { case: "publish-on-1".into(), policy: policy.into() };
        assert!(rx_check(&seed("drop-latest"), &rx_run(11, 989, 999, "complete")).is_ok());
        // One element lost on the way: 11 + 988 is not the seed's 1000.
        let e = rx_check(&seed("drop-latest"), &rx_run(11, 988, 999, "complete")).unwrap_err();
        assert!(e.contains("989"), "{e}");
        let mbe = "error: io.reactivex.rxjava3.exceptions.MissingBackpressureException";
        assert!(rx_check(&seed("error"), &rx_run(0, 1, 11, mbe)).is_ok());
        let e = rx_check(&seed("error"), &rx_run(0, 1, 12, mbe)).unwrap_err();
        assert!(e.contains("element 12 overflowed, expected element 11"), "{e}");
        let grid = Case::Grid { n: 500, capacity: 10, rate: 2.0 };
        assert!(rx_check(&grid, &rx_run(23, 477, 499, "complete")).is_ok());
        assert!(rx_check(&grid, &rx_run(23, 476, 499, "complete")).is_err());
        let mut own = rx_run(23, 477, 499, "complete");
        own.check = "elements arrived out of order".into();
        assert!(rx_check(&grid, &own).unwrap_err().starts_with("the JVM's check"));
    }

    #[test]
    fn a_reactor_error_overflow_is_its_overflow_exception() {
        let seed = Case::Seed { case: "publish-on-1".into(), policy: "error".into() };
        let oe = "error: reactor.core.Exceptions$OverflowException: The receiver is overrun";
        let mut r = rx_run(10, 1, 11, oe);
        assert!(rx_check(&seed, &r).is_ok(), "Reactor delivers the buffered 10 first");
        r.last_emitted = 12;
        assert!(rx_check(&seed, &r).is_err());
    }
}
