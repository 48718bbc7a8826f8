//! The suite checked against itself: a plain `Mutex<VecDeque>` + `Condvar` channel that
//! keeps the contract passes every check, and channels with one planted fault each
//! (a lost message, reordering, an overfull bound) are caught — so the suite can fail.

use handoff::{ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    LoseOne,
    Lifo,
    Overfill,
}

struct State<T> {
    q: VecDeque<T>,
    closed: bool,
    producers: usize,
    consumer_alive: bool,
    sent: u64,
}

struct Shared<T> {
    s: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    cap: usize,
    fault: Fault,
}

struct RefHandoff {
    cap: Option<usize>,
    fault: Fault,
}

struct Tx<T>(Arc<Shared<T>>);
struct Rx<T>(Arc<Shared<T>>);

impl<T: Send> Tx<T> {
    fn push(&self, msg: T, block: bool) -> Result<(), TrySendError<T>> {
        let sh = &self.0;
        let mut s = sh.s.lock().unwrap();
        let limit = if sh.fault == Fault::Overfill { sh.cap.saturating_add(1) } else { sh.cap };
        loop {
            if s.closed || !s.consumer_alive {
                return Err(TrySendError::Closed(msg));
            }
            if s.q.len() < limit {
                break;
            }
            if !block {
                return Err(TrySendError::Full(msg));
            }
            s = sh.not_full.wait(s).unwrap();
        }
        s.sent += 1;
        if sh.fault == Fault::LoseOne && s.sent == 100 {
            return Ok(());
        }
        if sh.fault == Fault::Lifo {
            s.q.push_front(msg);
        } else {
            s.q.push_back(msg);
        }
        sh.not_empty.notify_one();
        Ok(())
    }
}

impl<T: Send> Producer<T> for Tx<T> {
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        self.push(msg, true).map_err(|e| SendError(e.into_inner()))
    }
    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        self.push(msg, false)
    }
    fn close(&self) {
        self.0.s.lock().unwrap().closed = true;
        self.0.not_empty.notify_all();
        self.0.not_full.notify_all();
    }
    fn depth(&self) -> usize {
        self.0.s.lock().unwrap().q.len()
    }
}

impl<T> Drop for Tx<T> {
    fn drop(&mut self) {
        let mut s = self.0.s.lock().unwrap();
        s.producers -= 1;
        if s.producers == 0 {
            s.closed = true;
            self.0.not_empty.notify_all();
        }
    }
}

impl<T: Send> Consumer<T> for Rx<T> {
    fn recv(&mut self) -> Option<T> {
        let sh = &self.0;
        let mut s = sh.s.lock().unwrap();
        loop {
            if let Some(m) = s.q.pop_front() {
                sh.not_full.notify_one();
                return Some(m);
            }
            if s.closed {
                return None;
            }
            s = sh.not_empty.wait(s).unwrap();
        }
    }
    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut s = self.0.s.lock().unwrap();
        match s.q.pop_front() {
            Some(m) => {
                self.0.not_full.notify_one();
                Ok(m)
            }
            None if s.closed => Err(TryRecvError::Ended),
            None => Err(TryRecvError::Empty),
        }
    }
    fn depth(&self) -> usize {
        self.0.s.lock().unwrap().q.len()
    }
}

impl<T> Drop for Rx<T> {
    fn drop(&mut self) {
        self.0.s.lock().unwrap().consumer_alive = false;
        self.0.not_full.notify_all();
    }
}

impl Handoff for RefHandoff {
    type Producer<T: Send + 'static> = Tx<T>;
    type Consumer<T: Send + 'static> = Rx<T>;
    fn name(&self) -> String {
        format!("reference({:?})", self.fault)
    }
    fn capacity(&self) -> Option<usize> {
        self.cap
    }
    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Tx<T>>, Rx<T>), ConfigError> {
        if self.cap == Some(0) {
            return Err(ConfigError::new("capacity 0: a bounded channel needs room for one"));
        }
        let sh = Arc::new(Shared {
            s: Mutex::new(State {
                q: VecDeque::new(),
                closed: false,
                producers,
                consumer_alive: true,
                sent: 0,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            cap: self.cap.unwrap_or(usize::MAX),
            fault: self.fault,
        });
        Ok(((0..producers).map(|_| Tx(sh.clone())).collect(), Rx(sh)))
    }
}

fn faithful(cap: Option<usize>) -> RefHandoff {
    RefHandoff { cap, fault: Fault::None }
}

handoff::conformance_tests!(faithful);

fn caught(check: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(check).expect_err("the planted fault went unnoticed");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn a_lost_message_is_caught() {
    let msg = caught(|| {
        handoff::conformance::fifo_no_loss(|cap| RefHandoff { cap, fault: Fault::LoseOne }, 1)
    });
    assert!(msg.contains("received"), "{msg}");
}

#[test]
fn reordering_is_caught() {
    let msg = caught(|| {
        handoff::conformance::close_delivers_then_ends(|cap| RefHandoff { cap, fault: Fault::Lifo })
    });
    assert!(msg.contains("in order") || msg.contains("left"), "{msg}");
}

#[test]
fn an_overfull_bound_is_caught() {
    let msg = caught(|| {
        handoff::conformance::bounded_capacity_respected(|cap| RefHandoff {
            cap,
            fault: Fault::Overfill,
        })
    });
    assert!(msg.contains("capacity"), "{msg}");
}
