//! Seed 000's corrected on_backpressure_buffer cases, run through the lab's experiment code
//! (`lab::experiments::seed_case`), with the exact counts the reactive crate's own test
//! (crates/reactive/tests/backpressure.rs) establishes for 1000 elements and capacity 10.

use lab::experiments::seed_case;

#[test]
fn synchronous_request_one_never_overflows() {
    for policy in ["drop-latest", "drop-oldest", "error"] {
        let o = seed_case("sync-request-1", policy).unwrap();
        assert_eq!(o.overflows, 0, "{policy}");
        assert_eq!(o.delivered, 1000, "{policy}");
        assert_eq!(o.terminal, "complete", "{policy}");
    }
}

#[test]
fn publish_on_one_behind_the_buffer_overflows_at_once() {
    for policy in ["drop-latest", "drop-oldest"] {
        let o = seed_case("publish-on-1", policy).unwrap();
        // Element 0 waits in publish_on's queue, 1..=10 fill the buffer, 989 overflow.
        assert_eq!(o.overflows, 989, "{policy}");
        assert_eq!(o.delivered, 11, "{policy}");
        assert_eq!(o.terminal, "complete", "{policy}");
    }
    let o = seed_case("publish-on-1", "error").unwrap();
    assert_eq!(o.overflows, 1, "the first overflow ends the stream");
    assert_eq!(o.delivered, 1);
    assert!(o.terminal.starts_with("error"), "{}", o.terminal);
}

#[test]
fn bad_case_names_are_errors_naming_the_choices() {
    let e = seed_case("nope", "error").unwrap_err();
    assert!(e.contains("valid: sync-request-1, publish-on-1"), "{e}");
    let e = seed_case("publish-on-1", "drop-all").unwrap_err();
    assert!(e.contains("valid: drop-latest, drop-oldest, error"), "{e}");
}
