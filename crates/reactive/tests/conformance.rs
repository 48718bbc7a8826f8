//! The shared handoff suite, run against the `reactive` variant (sink → publish_on → consumer).

handoff::conformance_tests!(|cap: Option<usize>| reactive::ReactiveHandoff::new(
    cap.unwrap_or(256)
));
