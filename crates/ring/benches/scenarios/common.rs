//! Runners: each moves `total` messages from `producers` threads to one consumer and
//! returns the time from the start barrier until the consumer has seen the last one.
//! Setup (ring allocation, thread spawn) is outside the timed region.

use ring::{Builder, WaitStrategy};
use std::hint::black_box;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// The lab's message size: 16 bytes, `Copy`.
#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
pub struct Msg {
    pub seq: u64,
    pub producer: u64,
}

/// Ring / channel capacity: 64Ki, the lab's default.
pub const CAP: usize = 1 << 16;

/// Messages each producer sends: `total` spread evenly.
pub fn share(total: u64, producers: usize, p: usize) -> u64 {
    let n = producers as u64;
    total / n + u64::from((p as u64) < total % n)
}

/// The consumer's work, the same for every competitor: sum a field, count, and report
/// once the last message is in.
pub struct Sink {
    sum: u64,
    count: u64,
    target: u64,
    done: std_mpsc::Sender<u64>,
}

impl Sink {
    pub fn new(target: u64, done: std_mpsc::Sender<u64>) -> Self {
        Sink { sum: 0, count: 0, target, done }
    }

    #[inline(always)]
    pub fn take(&mut self, m: &Msg) {
        self.sum = self.sum.wrapping_add(m.seq);
        self.count += 1;
        if self.count == self.target {
            let _ = self.done.send(black_box(self.sum));
        }
    }
}

/// Starts `producers` threads running `body(p, n)` after a common barrier; times from the
/// barrier until `done` reports. `total == 0` is timed as zero.
fn timed(
    total: u64,
    producers: usize,
    done: std_mpsc::Receiver<u64>,
    mut make: impl FnMut(usize) -> Box<dyn FnOnce(u64) + Send>,
) -> Duration {
    let barrier = Arc::new(Barrier::new(producers + 1));
    let hs: Vec<_> = (0..producers)
        .map(|p| {
            let body = make(p);
            let barrier = barrier.clone();
            let n = share(total, producers, p);
            thread::spawn(move || {
                barrier.wait();
                body(n);
            })
        })
        .collect();
    barrier.wait();
    let t0 = Instant::now();
    if total > 0 {
        done.recv().expect("consumer reports");
    }
    let elapsed = t0.elapsed();
    for h in hs {
        h.join().expect("producer");
    }
    elapsed
}

/// This crate's Disruptor API with wait strategy `W`; single-producer sequencer for one
/// producer, multi-producer for more.
pub fn ring<W: WaitStrategy>(total: u64, producers: usize) -> Duration {
    let (tx, rx) = std_mpsc::channel();
    let mut sink = Sink::new(total, tx);
    let b = Builder::<Msg, W>::new(CAP, Msg::default).handler(move |m: &Msg, _s, _eob| {
        sink.take(m);
    });
    if producers == 1 {
        let (p, procs) = b.build_single().expect("ring");
        let mut p = Some(p);
        let t = timed(total, 1, rx, |_| {
            let mut p = p.take().expect("one producer");
            Box::new(move |n| {
                for i in 0..n {
                    p.publish(|e| *e = Msg { seq: i, producer: 0 }).expect("publish");
                }
            })
        });
        procs.join().expect("join");
        t
    } else {
        let (p0, procs) = b.build_multi().expect("ring");
        let t = timed(total, producers, rx, |id| {
            let mut p = p0.clone();
            Box::new(move |n| {
                for i in 0..n {
                    p.publish(|e| *e = Msg { seq: i, producer: id as u64 }).expect("publish");
                }
            })
        });
        drop(p0);
        procs.join().expect("join");
        t
    }
}

/// The `disruptor` crate 4.x with its `BusySpin` strategy.
pub fn disruptor_crate(total: u64, producers: usize) -> Duration {
    use disruptor::{build_multi_producer, build_single_producer, BusySpin, Producer};
    let (tx, rx) = std_mpsc::channel();
    let mut sink = Sink::new(total, tx);
    let handler = move |m: &Msg, _s: i64, _eob: bool| sink.take(m);
    if producers == 1 {
        let p =
            build_single_producer(CAP, Msg::default, BusySpin).handle_events_with(handler).build();
        let mut p = Some(p);
        timed(total, 1, rx, |_| {
            let mut p = p.take().expect("one producer");
            Box::new(move |n| {
                for i in 0..n {
                    p.publish(|e| *e = Msg { seq: i, producer: 0 });
                }
                // Dropping the producer joins the processor, after the timed region.
            })
        })
    } else {
        let p0 =
            build_multi_producer(CAP, Msg::default, BusySpin).handle_events_with(handler).build();
        timed(total, producers, rx, |id| {
            let mut p = p0.clone();
            Box::new(move |n| {
                for i in 0..n {
                    p.publish(|e| *e = Msg { seq: i, producer: id as u64 });
                }
            })
        })
    }
}

/// crossbeam-channel `bounded(CAP)`.
pub fn crossbeam(total: u64, producers: usize) -> Duration {
    let (tx, rx) = crossbeam_channel::bounded::<Msg>(CAP);
    let (dtx, drx) = std_mpsc::channel();
    let mut sink = Sink::new(total, dtx);
    let consumer = thread::spawn(move || {
        while let Ok(m) = rx.recv() {
            sink.take(&m);
        }
    });
    let t = timed(total, producers, drx, |id| {
        let tx = tx.clone();
        Box::new(move |n| {
            for i in 0..n {
                tx.send(Msg { seq: i, producer: id as u64 }).expect("send");
            }
        })
    });
    drop(tx);
    consumer.join().expect("consumer");
    t
}
