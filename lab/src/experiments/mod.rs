//! The experiments: one file (or folder) each, registered by one line in [`ALL`].

mod alloc;
mod backpressure;
mod choices;
mod disruptor_vs_lbq;
mod echo_server;
mod handoff_latency;
mod heap_growth;
mod jvm_referee;
mod latency;
mod rx_rows;
mod schedulers;
mod subscribe;
pub mod trace_overhead;

use crate::pipeline::{Entry, Registered};

pub use alloc::AllocPooledVsUnpooled;
pub use backpressure::{seed_case, BackpressureBuffer, Outcome};
pub use disruptor_vs_lbq::DisruptorVsLbq;
pub use echo_server::jvm::SERVERS as ECHO_JVM_SERVERS;
pub use echo_server::EchoServer;
pub use handoff_latency::HandoffLatency;
pub use heap_growth::HeapGrowth;
pub use jvm_referee::JvmReferee;
pub use latency::PublishOnLatency;
pub use subscribe::SubscribeOverhead;
pub use trace_overhead::TraceOverhead;

/// Every experiment, in the order `lab list` shows them.
pub static ALL: &[&dyn Registered] = &[
    &Entry::<DisruptorVsLbq>::NEW,
    &Entry::<SubscribeOverhead>::NEW,
    &Entry::<PublishOnLatency>::NEW,
    &Entry::<HandoffLatency>::NEW,
    &Entry::<BackpressureBuffer>::NEW,
    &Entry::<HeapGrowth>::NEW,
    &Entry::<AllocPooledVsUnpooled>::NEW,
    &Entry::<JvmReferee>::NEW,
    &Entry::<EchoServer>::NEW,
    &Entry::<TraceOverhead>::NEW,
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static dyn Registered> {
    ALL.iter().copied().find(|e| e.name() == name)
}

/// One line naming the valid experiments.
pub fn unknown(name: &str) -> String {
    let all: Vec<&str> = ALL.iter().map(|e| e.name()).collect();
    format!("unknown experiment '{name}'; valid: {}", all.join(", "))
}
