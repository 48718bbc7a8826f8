//! Planted faults, so the lab's own tests can show that its checks and its watchdog work:
//! a channel that loses messages (the run must come out INVALID), one whose consumer hangs
//! (the cell must be killed and reported HUNG) and one that aborts the process (CRASHED,
//! with its stderr), and one whose consumer spins a while per message (a slow adapter: the
//! calibration against crossbeam's own loop must flag it). They wrap the crossbeam peer and are offered only when the
//! environment variable `LAB_FAULTS=1` is set.
//!
//! Two more plant their fault in the *own loop* (the calibration row) and leave the lab's
//! row plain crossbeam ([`OwnLoopFault`]): one whose consumer loses every 1000th message
//! before its check (the `…/own-loop` row must come out INVALID), and one whose consumer
//! dawdles [`SLOW_SPIN`] per message, an own loop that is not the crate's best plain use
//! (the lab's row must be flagged *above* it).

use crate::measure::peers::{CrossbeamConsumer, CrossbeamHandoff, CrossbeamProducer};
use handoff::{ConfigError, Consumer, Handoff, TryRecvError};

/// The environment variable that unlocks the fault variants.
pub const FAULTS_ENV: &str = "LAB_FAULTS";

/// Whether fault variants are offered in this process.
pub fn enabled() -> bool {
    std::env::var(FAULTS_ENV).is_ok_and(|v| v == "1")
}

/// Which fault to plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The consumer silently drops every 1000th message.
    Lossy,
    /// The consumer blocks forever after its first message.
    Hang,
    /// The process aborts after the consumer's first message.
    Crash,
    /// The consumer spins [`SLOW_SPIN`] per message: a slow adapter.
    Slow,
}

/// What the slow adapter adds per message, far more than crossbeam's own handoff takes.
pub const SLOW_SPIN: std::time::Duration = std::time::Duration::from_nanos(500);

/// A crossbeam channel with a planted fault.
#[derive(Debug, Clone)]
pub struct FaultHandoff {
    fault: Fault,
    inner: CrossbeamHandoff,
}

impl FaultHandoff {
    /// A faulty channel bounded at `capacity`.
    pub fn new(fault: Fault, capacity: Option<usize>) -> Self {
        FaultHandoff { fault, inner: CrossbeamHandoff::new(capacity) }
    }
}

/// Consumer of a [`FaultHandoff`].
#[derive(Debug)]
pub struct FaultConsumer<T: Send + 'static> {
    fault: Fault,
    inner: CrossbeamConsumer<T>,
    seen: u64,
}

impl<T: Send + 'static> FaultConsumer<T> {
    fn strike(&mut self) -> bool {
        self.seen += 1;
        match self.fault {
            Fault::Lossy => self.seen % 1000 == 0,
            Fault::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Fault::Slow => {
                spin_slow();
                false
            }
            Fault::Crash => {
                eprintln!("fault-crash: aborting on purpose after the first message");
                std::process::abort();
            }
        }
    }
}

impl<T: Send + 'static> Consumer<T> for FaultConsumer<T> {
    fn recv(&mut self) -> Option<T> {
        loop {
            let m = self.inner.recv()?;
            if !self.strike() {
                return Some(m);
            }
        }
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        loop {
            let m = self.inner.try_recv()?;
            if !self.strike() {
                return Ok(m);
            }
        }
    }

    fn depth(&self) -> usize {
        self.inner.depth()
    }
}

impl Handoff for FaultHandoff {
    type Producer<T: Send + 'static> = CrossbeamProducer<T>;
    type Consumer<T: Send + 'static> = FaultConsumer<T>;

    fn name(&self) -> String {
        match self.fault {
            Fault::Lossy => "fault-lossy",
            Fault::Hang => "fault-hang",
            Fault::Crash => "fault-crash",
            Fault::Slow => "fault-slow-crossbeam",
        }
        .to_string()
    }

    fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Self::Producer<T>>, Self::Consumer<T>), ConfigError> {
        let (txs, rx) = self.inner.open(producers)?;
        Ok((txs, FaultConsumer { fault: self.fault, inner: rx, seen: 0 }))
    }
}

/// A fault planted in an own loop: crossbeam's, as the calibration of a lab row that is
/// plain crossbeam.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnLoopFault {
    /// The own loop's consumer loses every 1000th message before its check.
    Lossy,
    /// The own loop's consumer spins [`SLOW_SPIN`] per message.
    Slow,
}

/// The variants whose own loop carries a planted fault, with it.
pub const OWN_LOOP_FAULTS: &[(&str, OwnLoopFault)] =
    &[("fault-lossy-own-loop", OwnLoopFault::Lossy), ("fault-slow-own-loop", OwnLoopFault::Slow)];

/// The fault planted in `variant`'s own loop, if any.
pub fn own_loop_fault(variant: &str) -> Option<OwnLoopFault> {
    OWN_LOOP_FAULTS.iter().find(|(v, _)| *v == variant).map(|(_, f)| *f)
}

/// Spins [`SLOW_SPIN`]: the slow fault's work per message.
pub fn spin_slow() {
    let t = std::time::Instant::now();
    while t.elapsed() < SLOW_SPIN {
        std::hint::spin_loop();
    }
}
