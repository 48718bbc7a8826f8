//! A two-thread workload that emits every convention of `handoff::trace`: counters, wait
//! spans, batch spans, instants, and sampled publish/consume spans linked by flow ids.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, TryRecvError, TrySendError};
use std::sync::Arc;

use handoff::trace::{flow_id, WAIT_EMPTY, WAIT_FULL};
use handoff::{batch_span, consume_span, counter, instant, publish_span, wait_span};

/// Every `SAMPLE`-th message carries a flow from its publish span to its consume span.
pub const SAMPLE: u64 = 64;

/// Sends `messages` from thread "producer-0" to thread "consumer" through a 64-slot
/// channel; calls `on_consumed(seq)` on the consumer for each message.
pub fn workload(messages: u64, on_consumed: impl Fn(u64) + Send) {
    let (tx, rx) = sync_channel::<u64>(64);
    let depth = Arc::new(AtomicU64::new(0));
    let d2 = Arc::clone(&depth);
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("producer-0".into())
            .spawn_scoped(s, move || {
                for seq in 0..messages {
                    let _p = (seq % SAMPLE == 0).then(|| publish_span!(flow_id(0, seq)));
                    let n = d2.fetch_add(1, Ordering::Relaxed) + 1;
                    match tx.try_send(seq) {
                        Ok(()) => {}
                        Err(TrySendError::Full(m)) => {
                            let _w = wait_span!(WAIT_FULL);
                            tx.send(m).expect("consumer alive");
                        }
                        Err(TrySendError::Disconnected(_)) => panic!("consumer gone"),
                    }
                    if seq % 16 == 0 {
                        counter!("queue_depth", n);
                    }
                }
                instant!("producer_done", sent = messages);
            })
            .expect("spawn producer");
        std::thread::Builder::new()
            .name("consumer".into())
            .spawn_scoped(s, move || {
                let mut got = 0u64;
                let mut batch = Vec::with_capacity(32);
                while got < messages {
                    let first = match rx.try_recv() {
                        Ok(m) => m,
                        Err(TryRecvError::Empty) => {
                            let _w = wait_span!(WAIT_EMPTY);
                            rx.recv().expect("producer alive")
                        }
                        Err(TryRecvError::Disconnected) => break,
                    };
                    batch.clear();
                    batch.push(first);
                    while batch.len() < 32 {
                        match rx.try_recv() {
                            Ok(m) => batch.push(m),
                            Err(_) => break,
                        }
                    }
                    let _b = batch_span!(batch.len());
                    for &seq in &batch {
                        let _c = (seq % SAMPLE == 0).then(|| consume_span!(flow_id(0, seq)));
                        on_consumed(seq);
                    }
                    got += batch.len() as u64;
                    let n = depth.fetch_sub(batch.len() as u64, Ordering::Relaxed);
                    counter!("consumed", got);
                    if n > 48 {
                        instant!("backlog", depth = n);
                    }
                }
                tracing::info!(got, "consumer done");
            })
            .expect("spawn consumer");
    });
}
