//! The shared handoff suite, plus the behaviours of Java's `LinkedBlockingQueue` this port
//! keeps (capacity, fast failures, timeouts, `drainTo`, the signal cascade).

handoff::conformance_tests!(|cap: Option<usize>| locked_queue::LockedHandoff::new(cap));

mod java_behaviour {
    use handoff::conformance::{watchdog_limit, within};
    use handoff::{Handoff, Producer};
    use locked_queue::{LinkedBlockingQueue, LockedHandoff, OfferError};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};
    use std::thread;
    use std::time::{Duration, Instant};

    #[test]
    fn capacity_zero_is_refused_with_an_error() {
        let e = LinkedBlockingQueue::<u32>::with_capacity(0).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("invalid capacity 0") && msg.contains("at least 1"), "{msg}");
        let e = LockedHandoff::new(Some(0)).open::<u32>(1).unwrap_err();
        assert!(e.0.contains("capacity") && e.0.contains("None (unbounded)"), "{e}");
        let e = LockedHandoff::new(None).open::<u32>(0).unwrap_err();
        assert!(e.0.contains("producers must be at least 1"), "{e}");
    }

    #[test]
    fn capacity_bounds_put_and_remaining_capacity() {
        let q = LinkedBlockingQueue::with_capacity(3).unwrap();
        assert_eq!(q.capacity(), Some(3));
        for i in 0..3 {
            assert_eq!(q.remaining_capacity(), 3 - i);
            q.put(i).unwrap();
        }
        assert_eq!(q.remaining_capacity(), 0);
        assert_eq!(q.len(), 3);
        // A fourth put blocks until a take makes room.
        let q = Arc::new(q);
        let putter = {
            let q = q.clone();
            thread::spawn(move || {
                q.put(3).unwrap();
            })
        };
        thread::sleep(Duration::from_millis(if cfg!(miri) { 5 } else { 20 }));
        assert!(!putter.is_finished(), "put on a full queue must block");
        assert_eq!(q.len(), 3);
        assert_eq!(q.take(), Some(0));
        putter.join().unwrap();
        assert_eq!(q.len(), 3);
        let rest: Vec<_> = std::iter::from_fn(|| q.poll()).collect();
        assert_eq!(rest, [1, 2, 3]);
        assert_eq!(LinkedBlockingQueue::<u8>::new().capacity(), None);
        assert_eq!(LinkedBlockingQueue::<u8>::new().remaining_capacity(), usize::MAX);
    }

    #[test]
    fn offer_fails_fast_when_full_and_returns_the_element() {
        let q = LinkedBlockingQueue::with_capacity(1).unwrap();
        assert_eq!(q.offer(String::from("a")), Ok(()));
        let t = Instant::now();
        match q.offer(String::from("b")) {
            Err(OfferError::Full(s)) => assert_eq!(s, "b"),
            other => panic!("expected Full, got {other:?}"),
        }
        // Fails fast: no waiting (generous bound, this is not a speed check).
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(q.len(), 1);
        q.close();
        assert_eq!(q.offer(String::from("c")).unwrap_err().into_inner(), "c");
        assert!(matches!(q.offer(String::from("d")), Err(OfferError::Closed(_))));
    }

    #[test]
    fn offer_timeout_times_out_then_succeeds_when_room_appears() {
        let q = Arc::new(LinkedBlockingQueue::with_capacity(1).unwrap());
        q.put(0u32).unwrap();
        let d = Duration::from_millis(30);
        let t = Instant::now();
        assert_eq!(q.offer_timeout(1, d), Err(OfferError::Full(1)));
        assert!(t.elapsed() >= d, "returned after {:?}, before its timeout {d:?}", t.elapsed());
        let taker = {
            let q = q.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(10));
                q.take()
            })
        };
        assert_eq!(q.offer_timeout(2, Duration::from_secs(60)), Ok(()));
        assert_eq!(taker.join().unwrap(), Some(0));
        assert_eq!(q.poll(), Some(2));
    }

    #[test]
    fn poll_timeout_times_out_on_empty_and_returns_an_arrival() {
        let q = Arc::new(LinkedBlockingQueue::<u32>::new());
        let d = Duration::from_millis(30);
        let t = Instant::now();
        assert_eq!(q.poll_timeout(d), None);
        let waited = t.elapsed();
        assert!(waited >= d, "poll_timeout returned after {waited:?}, before {d:?}");
        assert_eq!(q.poll(), None, "poll on empty returns at once");
        let putter = {
            let q = q.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(10));
                q.put(7).unwrap();
            })
        };
        assert_eq!(q.poll_timeout(Duration::from_secs(60)), Some(7));
        putter.join().unwrap();
        // A huge timeout is an untimed wait (no overflow panic); close ends it.
        q.close();
        assert_eq!(q.poll_timeout(Duration::MAX), None);
    }

    #[test]
    fn drain_to_respects_max_and_order() {
        let q = LinkedBlockingQueue::new();
        for i in 0..10 {
            q.put(i).unwrap();
        }
        let mut out = Vec::new();
        assert_eq!(q.drain_to(&mut out, 0), 0, "max 0 drains nothing (Java)");
        assert_eq!(q.drain_to(&mut out, 4), 4);
        assert_eq!(out, [0, 1, 2, 3]);
        assert_eq!(q.len(), 6);
        assert_eq!(q.drain_to(&mut out, 100), 6, "drains what is there, no more");
        assert_eq!(out, (0..10).collect::<Vec<_>>());
        assert_eq!(q.drain_to(&mut out, 5), 0, "empty: nothing, no wait");
        let mut seen = Vec::new();
        q.put(42).unwrap();
        assert_eq!(q.take_batch(8, |x| seen.push(x)), 1);
        assert_eq!(seen, [42]);
    }

    #[test]
    fn drain_from_full_wakes_blocked_producers() {
        // Java signals notFull once when a drain leaves the full state; the woken producer
        // cascades to the next. Every blocked producer must get in.
        let cap = 4;
        let producers = 4;
        let q = Arc::new(LinkedBlockingQueue::with_capacity(cap).unwrap());
        for i in 0..cap {
            q.put(i).unwrap();
        }
        let start = Arc::new(Barrier::new(producers + 1));
        let hs: Vec<_> = (0..producers)
            .map(|p| {
                let (q, start) = (q.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    q.put(100 + p).unwrap();
                })
            })
            .collect();
        start.wait();
        while q.len() < cap {
            thread::yield_now();
        }
        let q2 = q.clone();
        within("drain wakes producers", watchdog_limit(), move || {
            let mut got = Vec::new();
            q2.drain_to(&mut got, cap);
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(q2.len(), producers);
        });
    }

    /// The signal cascade must not lose a wake-up: capacity 1, several blocked producers and
    /// several blocked consumers, each transition waking exactly one waiter that then wakes
    /// the next. A lost signal shows up as a hang, caught by the watchdog.
    #[test]
    fn signal_cascade_does_not_lose_wakeups() {
        let producers = 4;
        let consumers = 3;
        let per = if cfg!(miri) { 15 } else { 20_000 };
        for cap in [1usize, 2, 5] {
            let q = Arc::new(LinkedBlockingQueue::with_capacity(cap).unwrap());
            let received = Arc::new(AtomicUsize::new(0));
            let sum = Arc::new(AtomicUsize::new(0));
            let (q2, received2, sum2) = (q.clone(), received.clone(), sum.clone());
            within(&format!("cascade cap={cap}"), watchdog_limit(), move || {
                let cs: Vec<_> = (0..consumers)
                    .map(|_| {
                        let (q, received, sum) = (q2.clone(), received2.clone(), sum2.clone());
                        thread::spawn(move || {
                            while let Some(v) = q.take() {
                                received.fetch_add(1, Ordering::Relaxed);
                                sum.fetch_add(v, Ordering::Relaxed);
                            }
                        })
                    })
                    .collect();
                let ps: Vec<_> = (0..producers)
                    .map(|p| {
                        let q = q2.clone();
                        thread::spawn(move || {
                            for i in 0..per {
                                q.put(p * per + i).unwrap();
                            }
                        })
                    })
                    .collect();
                for p in ps {
                    p.join().unwrap();
                }
                // Every element is taken before close can end the consumers: wait for it.
                while received2.load(Ordering::Relaxed) < producers * per {
                    thread::yield_now();
                }
                q2.close();
                for c in cs {
                    c.join().unwrap();
                }
            });
            let n = producers * per;
            assert_eq!(received.load(Ordering::Relaxed), n, "cap={cap}");
            assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2, "cap={cap}: checksum");
            assert!(q.is_empty());
        }
    }

    #[test]
    fn closed_handoff_returns_messages_and_depth_tracks_len() {
        let (mut txs, rx) = LockedHandoff::new(Some(8)).open::<u64>(2).unwrap();
        txs[0].send(1).unwrap();
        txs[1].try_send(2).unwrap();
        assert_eq!(txs[0].depth(), 2);
        assert_eq!(handoff::Consumer::depth(&rx), 2);
        let b = txs.pop().unwrap();
        drop(b);
        // One producer left: still open.
        txs[0].send(3).unwrap();
        drop(txs);
        let mut rx = rx;
        let mut got = Vec::new();
        while let Some(v) = handoff::Consumer::recv(&mut rx) {
            got.push(v);
        }
        assert_eq!(got, [1, 2, 3], "dropping every producer ends the channel after delivery");
    }
}
