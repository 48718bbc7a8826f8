//! No heap allocation per published message after construction, checked with dhat's
//! testing mode. This file is its own test binary, so `dhat::Alloc` is the global
//! allocator here only. One check per process: dhat allows one profiler at a time. It runs
//! without libtest's harness (`harness = false`): libtest's main thread allocates while a
//! test runs, later the busier the machine is, and dhat would count it. A failed check
//! panics, which exits with 101 like a failed test.

use handoff::{Consumer, Handoff, Message, Producer};
use ring::{Blocking, Builder, BusySpin, RingHandoff, Sleeping, WaitStrategy, Yielding};
use std::sync::{Arc, Barrier};
use std::thread;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const SIZE: usize = 64;
const WARM: u64 = 1_000;
const MEASURED: u64 = 20_000;

/// Counts allocations made while `producers` threads send `MEASURED` messages each through
/// the adapter (after a warm-up that exercises every path, waits included) and the
/// consumer receives them in batches and singly.
fn adapter_allocations<W: WaitStrategy>(producers: usize) -> u64 {
    let (txs, mut rx) = RingHandoff::<W>::new(SIZE).open::<Message<16>>(producers).unwrap();
    let start = Arc::new(Barrier::new(producers + 1));
    let end = Arc::new(Barrier::new(producers + 1));
    let hs: Vec<_> = txs
        .into_iter()
        .enumerate()
        .map(|(p, mut tx)| {
            let (start, end) = (start.clone(), end.clone());
            thread::spawn(move || {
                for s in 0..WARM {
                    tx.send(Message::new(p as u32, s)).unwrap();
                }
                start.wait();
                for s in WARM..WARM + MEASURED {
                    tx.send(Message::new(p as u32, s)).unwrap();
                }
                end.wait();
            })
        })
        .collect();
    let mut got = 0u64;
    while got < WARM * producers as u64 {
        got += rx.recv_batch(16, |_| {}) as u64;
    }
    start.wait();
    let before = dhat::HeapStats::get();
    let total = (WARM + MEASURED) * producers as u64;
    while got < total {
        if got % 2 == 0 {
            got += rx.recv_batch(16, |_| {}) as u64;
        } else if rx.recv().is_some() {
            got += 1;
        }
    }
    end.wait();
    let after = dhat::HeapStats::get();
    for h in hs {
        h.join().unwrap();
    }
    after.total_blocks - before.total_blocks
}

/// The same through the Disruptor API: one producer publishing in place, one handler.
fn disruptor_allocations<W: WaitStrategy>() -> u64 {
    let (mut p, procs) = Builder::<Message<16>, W>::new(SIZE, Message::default)
        .handler(|e: &Message<16>, _seq, _eob| {
            std::hint::black_box(e.seq);
        })
        .build_single()
        .unwrap();
    for s in 0..WARM {
        p.publish(|e| *e = Message::new(0, s)).unwrap();
    }
    let before = dhat::HeapStats::get();
    for s in WARM..WARM + MEASURED {
        p.publish(|e| *e = Message::new(0, s)).unwrap();
    }
    let after = dhat::HeapStats::get();
    drop(p);
    assert_eq!(procs.join().unwrap().processed, vec![WARM + MEASURED]);
    after.total_blocks - before.total_blocks
}

fn main() {
    if cfg!(miri) {
        println!("no_allocation_per_message ... ignored: dhat's allocator captures backtraces, which Miri cannot run");
        return;
    }
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut results = Vec::new();
    for p in [1, 3] {
        results.push((format!("adapter blocking P={p}"), adapter_allocations::<Blocking>(p)));
        results.push((format!("adapter sleeping P={p}"), adapter_allocations::<Sleeping>(p)));
        results.push((format!("adapter yielding P={p}"), adapter_allocations::<Yielding>(p)));
        results.push((format!("adapter busy-spin P={p}"), adapter_allocations::<BusySpin>(p)));
    }
    results.push(("disruptor blocking".into(), disruptor_allocations::<Blocking>()));
    results.push(("disruptor busy-spin".into(), disruptor_allocations::<BusySpin>()));
    let bad: Vec<_> = results.iter().filter(|(_, n)| *n != 0).collect();
    assert!(bad.is_empty(), "allocations while sending {MEASURED} messages: {bad:?}");
    // The check can fail: the same window does see an allocation when there is one.
    let before = dhat::HeapStats::get();
    std::hint::black_box(vec![0u8; 10]);
    assert_eq!(dhat::HeapStats::get().total_blocks - before.total_blocks, 1);
    println!("no_allocation_per_message ... ok ({} windows)", results.len());
}
