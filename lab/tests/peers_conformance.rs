//! The shared conformance suite, run against each reference peer adapter.

mod crossbeam {
    handoff::conformance_tests!(|cap: Option<usize>| lab::measure::peers::CrossbeamHandoff::new(
        cap
    ));
}

mod std_mpsc {
    handoff::conformance_tests!(|cap: Option<usize>| lab::measure::peers::StdMpscHandoff::new(cap));
}

mod disruptor_rs {
    use lab::measure::peers::{DisruptorRsHandoff, DISRUPTOR_RS_MULTI_MIN};
    // The crate's multi-producer sequencer refuses rings under 64 slots, so smaller bounds
    // asked for by the suite are raised to that minimum; the suite reads the real bound
    // back through `capacity()`.
    handoff::conformance_tests!(|cap: Option<usize>| DisruptorRsHandoff::new(
        cap.map(|c| c.max(DISRUPTOR_RS_MULTI_MIN))
    ));

    #[test]
    fn small_multi_producer_ring_is_a_config_error() {
        use handoff::Handoff;
        let err =
            DisruptorRsHandoff::new(Some(8)).open::<u64>(2).map(|_| ()).expect_err("an error");
        assert!(err.to_string().contains("minimum of 64"), "{err}");
        assert!(DisruptorRsHandoff::new(Some(8)).open::<u64>(1).is_ok());
        let err =
            DisruptorRsHandoff::new(Some(100)).open::<u64>(1).map(|_| ()).expect_err("an error");
        assert!(err.to_string().contains("power of two"), "{err}");
    }
}
