//! The variants the lab can drive, chosen by name at run time with one `match` (enum
//! dispatch, as crossbeam-channel's `SenderFlavor`); everything inside the chosen arm is
//! generic over `H: Handoff` and monomorphised.

use crate::measure::faults::{self, Fault, FaultHandoff};
use crate::measure::peers::{CrossbeamHandoff, DisruptorRsHandoff, StdMpscHandoff};
use handoff::Handoff;
use ring::{RingHandoff, WaitKind};

/// One variant the lab knows by name.
#[derive(Debug, Clone, Copy)]
pub struct VariantInfo {
    /// The name used on the command line and in results.
    pub name: &'static str,
    /// One line: what it is.
    pub description: &'static str,
    /// Whether it is one of the lab's own designs (false: a reference peer or a fault).
    pub ours: bool,
    /// Whether it runs on the JVM (a `tools/jvm` program) rather than through a Handoff.
    pub jvm: bool,
    /// Whether its wait strategy is chosen with `--wait`.
    pub takes_wait: bool,
    /// Whether its consumer has a batch receive of its own, which `--batch` drives
    /// (false: the consumer receives one message at a time, as the crate's own API does;
    /// the channel peers have no batch receive, and emulating one with `try_recv` after
    /// each message is the adapter's pattern, not theirs).
    pub batches: bool,
    /// Why it cannot run in this build, if it cannot.
    pub unavailable: Option<&'static str>,
    /// What the machine must have for it to run (`None`: nothing beyond the build).
    pub needs: Option<&'static str>,
}

impl VariantInfo {
    /// Its line in `--help` and `lab list`: the description and what it needs.
    pub fn help(&self) -> String {
        let needs = self.needs.map(|n| format!(" (needs {n})")).unwrap_or_default();
        format!("{}{needs}", self.description)
    }

    /// Whether it is a planted fault (test only, offered with `LAB_FAULTS=1`).
    pub fn is_fault(&self) -> bool {
        self.name.starts_with("fault-")
    }
}

const VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        name: "locked",
        jvm: false,
        description: "LinkedBlockingQueue port: linked nodes, put lock + take lock, two \
                      conditions (crates/locked-queue)",
        ours: true,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "ring",
        jvm: false,
        description: "LMAX Disruptor ring: preallocated slots, sequencers, a wait strategy \
                      (crates/ring)",
        ours: true,
        takes_wait: true,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "reactive",
        jvm: false,
        description: "Reactor-style publish_on: request(n), prefetch, 75% replenish \
                      (crates/reactive)",
        ours: true,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "naive",
        jvm: false,
        description: "Mutex<Vec<Box<_>>>: an allocation per message, no bound, no \
                      backpressure (crates/naive-buffer)",
        ours: true,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "crossbeam",
        jvm: false,
        description: "peer: crossbeam_channel::bounded(ring size)",
        ours: false,
        takes_wait: false,
        batches: false,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "std-mpsc",
        jvm: false,
        description: "peer: std::sync::mpsc::sync_channel(ring size)",
        ours: false,
        takes_wait: false,
        batches: false,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "disruptor-rs",
        jvm: false,
        description: "peer: the disruptor crate 4.x (event poller; spin, then yield)",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "jvm-lbq",
        jvm: true,
        description: "the JVM original: java.util.concurrent.LinkedBlockingQueue put/take, \
                      tools/jvm/bus/src/main/java/Bus.java",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
    VariantInfo {
        name: "jvm-disruptor",
        jvm: true,
        description: "the JVM original: LMAX Disruptor 4.0 (the current release), the wait \
                      strategy named as --wait (blocking: BlockingWaitStrategy, as seed 001), \
                      tools/jvm/bus (Bus.java)",
        ours: false,
        takes_wait: true,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
    VariantInfo {
        name: "jvm-disruptor-3.4",
        jvm: true,
        description: "the JVM original on seed 001's line: LMAX Disruptor 3.4, the same Bus \
                      and wait strategy as jvm-disruptor with the 3.4 jar in place of 4.0's",
        ours: false,
        takes_wait: true,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
    VariantInfo {
        name: "jvm-jctools",
        jvm: true,
        description: "the JVM's bounded MPSC queue: JCTools MpscArrayQueue (capacity \
                      --ring-size), offer retried and drain with the wait named as --wait, \
                      tools/jvm/jctools",
        ours: false,
        takes_wait: true,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
];

const FAULT_VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        name: "fault-lossy",
        jvm: false,
        description: "test only: loses every 1000th message (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "fault-hang",
        jvm: false,
        description: "test only: the consumer hangs (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "fault-jvm-lbq",
        jvm: true,
        description: "test only: jvm-lbq with one message dropped by producer 0 (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
    VariantInfo {
        name: "fault-jvm-jctools",
        jvm: true,
        description: "test only: jvm-jctools with one message dropped by producer 0 \
                      (LAB_FAULTS=1)",
        ours: false,
        takes_wait: true,
        batches: true,
        unavailable: None,
        needs: Some("a JDK and Maven"),
    },
    VariantInfo {
        name: "fault-slow-crossbeam",
        jvm: false,
        description: "test only: crossbeam with a consumer that spins 500 ns a message \
                      (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: false,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "fault-lossy-own-loop",
        jvm: false,
        description: "test only: crossbeam, whose own loop loses every 1000th message \
                      (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: false,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "fault-slow-own-loop",
        jvm: false,
        description: "test only: crossbeam, whose own loop spins 500 ns a message \
                      (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: false,
        unavailable: None,
        needs: None,
    },
    VariantInfo {
        name: "fault-crash",
        jvm: false,
        description: "test only: the process aborts (LAB_FAULTS=1)",
        ours: false,
        takes_wait: false,
        batches: true,
        unavailable: None,
        needs: None,
    },
];

/// Every variant this process offers (fault variants only with `LAB_FAULTS=1`).
pub fn all() -> Vec<VariantInfo> {
    let mut v = VARIANTS.to_vec();
    if faults::enabled() {
        v.extend_from_slice(FAULT_VARIANTS);
    }
    v
}

/// Every variant the lab knows, the fault variants included whether or not this process
/// offers them: what the help of `--variants` is checked against.
pub fn registry() -> Vec<VariantInfo> {
    VARIANTS.iter().chain(FAULT_VARIANTS).copied().collect()
}

/// The variants that run through a [`Handoff`] in this process: [`all`] less the JVM
/// originals (what a harness other than disruptor-vs-lbq's can drive).
pub fn handoffs() -> Vec<VariantInfo> {
    all().into_iter().filter(|v| !is_jvm(v.name)).collect()
}

/// What `all` stands for in a `--variants` list: every variant but the planted faults
/// and those unavailable in this build (JVM ones are then left out where no JDK is found).
pub const ALL_HELP: &str = "every variant above but the planted faults (jvm-* only where a JDK \
                            and Maven are found)";

/// The help line of a `--variants` option taking the names of `variants`: what it is,
/// then what the variants that need something more need, built from the registry.
pub fn list_help(what: &str, variants: &[VariantInfo]) -> String {
    let needs: Vec<String> =
        variants.iter().filter_map(|v| v.needs.map(|n| format!("{} needs {n}", v.name))).collect();
    let faults = variants.iter().any(VariantInfo::is_fault);
    let mut s = what.to_string();
    if !needs.is_empty() {
        s.push_str(&format!("; {}", needs.join(", ")));
    }
    if faults {
        s.push_str("; fault-* are planted faults for tests (LAB_FAULTS=1)");
    }
    s
}

/// True for the variants that run on the JVM (tools/jvm/bus/src/main/java/Bus.java) rather than a Handoff,
/// planted faults included; false for a name the lab does not know.
pub fn is_jvm(name: &str) -> bool {
    registry().iter().any(|v| v.name == name && v.jvm)
}

/// Looks a variant up by name.
pub fn find(name: &str) -> Option<VariantInfo> {
    all().into_iter().find(|v| v.name == name)
}

/// The wait strategies of the ring (`--wait`), in the order the ring crate lists them.
pub const WAITS: &[(&str, &str)] = &[
    (
        "blocking",
        "a lock and a condition variable, after a brief spin, signalled only when a waiter \
         asked (the ring's rework of the seed's BlockingWaitStrategy; the JVM pairing: \
         BlockingWaitStrategy, as seed 001 ran, or --jvm-wait lite-blocking)",
    ),
    ("sleeping", "spin, then yield, then sleep (SleepingWaitStrategy)"),
    ("yielding", "spin, then yield (YieldingWaitStrategy)"),
    ("busy-spin", "spin on the sequence (BusySpinWaitStrategy)"),
    (
        "java-blocking",
        "Java's BlockingWaitStrategy ported as it is: lock and signal on every publish, no \
         spin, asleep only until the claim cursor passes (then awake until the claimed slot is \
         published); producers park 1 ns at a time for room (the JVM pairing: \
         BlockingWaitStrategy)",
    ),
];

/// Checks a wait strategy name against the ring crate's own list.
pub fn check_wait(name: &str) -> Result<(), String> {
    match name.parse::<WaitKind>() {
        Ok(_) => Ok(()),
        Err(_) => Err(format!(
            "unknown wait strategy '{name}'; valid: {}",
            WaitKind::ALL.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The settings a variant is built with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The variant's name.
    pub variant: String,
    /// Wait strategy (ring only).
    pub wait: Option<String>,
    /// Ring size: the ring's and disruptor-rs's slots, the bound of the channel peers.
    pub ring_size: usize,
    /// The locked queue's bound (`None`: unbounded, as the seed).
    pub capacity: Option<usize>,
    /// The reactive pipeline's prefetch.
    pub prefetch: usize,
}

/// Something to do with a handoff, whatever its type: the generic half of enum dispatch.
pub trait WithHandoff {
    /// What it returns.
    type Out;
    /// Runs with the chosen handoff.
    fn run<H: Handoff + 'static>(self, handoff: H) -> Self::Out;
}

/// Builds the named variant and hands it to `job`: the one `match` of the lab.
pub fn dispatch<J: WithHandoff>(s: &Settings, job: J) -> Result<J::Out, String> {
    let info = find(&s.variant).ok_or_else(|| unknown_variant(&s.variant))?;
    if let Some(why) = info.unavailable {
        return Err(format!("variant '{}' is unavailable: {why}", s.variant));
    }
    Ok(match s.variant.as_str() {
        "locked" => job.run(locked_queue::LockedHandoff::new(s.capacity)),
        "ring" => {
            let wait: WaitKind = s
                .wait
                .as_deref()
                .unwrap_or("blocking")
                .parse()
                .map_err(|e: ring::UnknownWaitKind| e.to_string())?;
            match wait {
                WaitKind::Blocking => job.run(RingHandoff::<ring::Blocking>::new(s.ring_size)),
                WaitKind::Sleeping => job.run(RingHandoff::<ring::Sleeping>::new(s.ring_size)),
                WaitKind::Yielding => job.run(RingHandoff::<ring::Yielding>::new(s.ring_size)),
                WaitKind::BusySpin => job.run(RingHandoff::<ring::BusySpin>::new(s.ring_size)),
                WaitKind::JavaBlocking => {
                    job.run(RingHandoff::<ring::JavaBlocking>::new(s.ring_size))
                }
            }
        }
        "reactive" => job.run(reactive::ReactiveHandoff::new(s.prefetch)),
        "naive" => job.run(naive_buffer::NaiveHandoff::new()),
        "crossbeam" => job.run(CrossbeamHandoff::new(Some(s.ring_size))),
        "std-mpsc" => job.run(StdMpscHandoff::new(Some(s.ring_size))),
        "disruptor-rs" => job.run(DisruptorRsHandoff::new(Some(s.ring_size))),
        "fault-lossy" => job.run(FaultHandoff::new(Fault::Lossy, Some(s.ring_size))),
        "fault-hang" => job.run(FaultHandoff::new(Fault::Hang, Some(s.ring_size))),
        "fault-crash" => job.run(FaultHandoff::new(Fault::Crash, Some(s.ring_size))),
        "fault-slow-crossbeam" => job.run(FaultHandoff::new(Fault::Slow, Some(s.ring_size))),
        // Their fault is in their own loop (`faults::OwnLoopFault`); the row is crossbeam.
        "fault-lossy-own-loop" | "fault-slow-own-loop" => {
            job.run(CrossbeamHandoff::new(Some(s.ring_size)))
        }
        jvm if jvm.contains("jvm-") => {
            return Err(format!("variant '{jvm}' runs on the JVM, not through a Handoff"))
        }
        other => return Err(format!("variant '{other}' is listed but not wired in")),
    })
}

/// The error for a name the lab does not know.
pub fn unknown_variant(name: &str) -> String {
    format!(
        "unknown variant '{name}'; valid: {}",
        all().iter().map(|v| v.name).collect::<Vec<_>>().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_list_matches_the_ring_crate() {
        let ours: Vec<&str> = WAITS.iter().map(|w| w.0).collect();
        let ring: Vec<&str> = WaitKind::ALL.iter().map(|w| w.name()).collect();
        assert_eq!(ours, ring);
        assert!(check_wait("busy-spin").is_ok());
        assert!(check_wait("java-blocking").is_ok());
        assert!(check_wait("lazy").unwrap_err().contains("valid: blocking, sleeping"));
    }

    #[test]
    fn every_listed_variant_dispatches() {
        struct Name;
        impl WithHandoff for Name {
            type Out = String;
            fn run<H: Handoff + 'static>(self, h: H) -> String {
                h.name()
            }
        }
        for v in all().into_iter().filter(|v| v.unavailable.is_none()) {
            if is_jvm(v.name) {
                let s = Settings {
                    variant: v.name.to_string(),
                    wait: None,
                    ring_size: 1024,
                    capacity: None,
                    prefetch: 256,
                };
                assert!(dispatch(&s, Name).unwrap_err().contains("runs on the JVM"));
                continue;
            }
            let s = Settings {
                variant: v.name.to_string(),
                wait: v.takes_wait.then(|| "blocking".to_string()),
                ring_size: 1024,
                capacity: None,
                prefetch: 256,
            };
            let name = dispatch(&s, Name).unwrap_or_else(|e| panic!("{}: {e}", v.name));
            assert!(!name.is_empty(), "{}", v.name);
        }
        let bad = Settings {
            variant: "nope".into(),
            wait: None,
            ring_size: 1024,
            capacity: None,
            prefetch: 1,
        };
        assert!(dispatch(&bad, Name).unwrap_err().contains("unknown variant 'nope'"));
    }
}
