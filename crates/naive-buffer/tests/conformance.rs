//! The shared handoff suite. The naive buffer ignores the requested capacity.

handoff::conformance_tests!(|_cap: Option<usize>| naive_buffer::NaiveHandoff::new());
