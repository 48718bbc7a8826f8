//! The lab's shared conformance suite, once per wait strategy.

/// Ring size when the suite asks for the default: the lab's 64Ki, shrunk under Miri.
#[allow(dead_code)]
const DEFAULT_SIZE: usize = if cfg!(miri) { 64 } else { 65536 };

mod blocking {
    use super::DEFAULT_SIZE;
    use ring::{Blocking, RingHandoff};
    handoff::conformance_tests!(|cap: Option<usize>| RingHandoff::<Blocking>::new(
        cap.unwrap_or(DEFAULT_SIZE)
    ));
}

mod sleeping {
    use super::DEFAULT_SIZE;
    use ring::{RingHandoff, Sleeping};
    handoff::conformance_tests!(|cap: Option<usize>| RingHandoff::<Sleeping>::new(
        cap.unwrap_or(DEFAULT_SIZE)
    ));
}

mod yielding {
    use super::DEFAULT_SIZE;
    use ring::{RingHandoff, Yielding};
    handoff::conformance_tests!(|cap: Option<usize>| RingHandoff::<Yielding>::new(
        cap.unwrap_or(DEFAULT_SIZE)
    ));
}

mod busy_spin {
    use super::DEFAULT_SIZE;
    use ring::{BusySpin, RingHandoff};
    handoff::conformance_tests!(|cap: Option<usize>| RingHandoff::<BusySpin>::new(
        cap.unwrap_or(DEFAULT_SIZE)
    ));
}

mod java_blocking {
    use super::DEFAULT_SIZE;
    use ring::{JavaBlocking, RingHandoff};
    handoff::conformance_tests!(|cap: Option<usize>| RingHandoff::<JavaBlocking>::new(
        cap.unwrap_or(DEFAULT_SIZE)
    ));
}
