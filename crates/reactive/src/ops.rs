//! Stateless and counting operators (`map`, `filter`, `take`) and the lambda subscriber.
//! Each wraps its downstream subscriber and passes the upstream subscription through
//! unchanged: they transform elements, not demand.

use crate::{Error, Publisher, SharedSubscription, Subscriber, Subscription, UNBOUNDED};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `map(f)`.
#[derive(Debug, Clone)]
pub struct Map<P, F> {
    source: P,
    f: F,
}

impl<P, F> Map<P, F> {
    pub(crate) fn new(source: P, f: F) -> Self {
        Map { source, f }
    }
}

struct MapSubscriber<S, F> {
    down: S,
    f: F,
}

impl<P, F, U> Publisher for Map<P, F>
where
    P: Publisher,
    F: FnMut(P::Item) -> U + Send + 'static,
{
    type Item = U;
    #[inline]
    fn subscribe<S: Subscriber<U> + Send + 'static>(self, s: S) {
        self.source.subscribe(MapSubscriber { down: s, f: self.f })
    }
}

impl<T, U, S: Subscriber<U>, F: FnMut(T) -> U> Subscriber<T> for MapSubscriber<S, F> {
    #[inline]
    fn on_subscribe<Q: Subscription>(&mut self, s: &Q) {
        self.down.on_subscribe(s)
    }
    #[inline]
    fn on_next<Q: Subscription>(&mut self, item: T, s: &Q) {
        self.down.on_next((self.f)(item), s)
    }
    #[inline]
    fn on_error(&mut self, error: Error) {
        self.down.on_error(error)
    }
    #[inline]
    fn on_complete(&mut self) {
        self.down.on_complete()
    }
}

/// `filter(f)`.
#[derive(Debug, Clone)]
pub struct Filter<P, F> {
    source: P,
    f: F,
}

impl<P, F> Filter<P, F> {
    pub(crate) fn new(source: P, f: F) -> Self {
        Filter { source, f }
    }
}

struct FilterSubscriber<S, F> {
    down: S,
    f: F,
}

impl<P, F> Publisher for Filter<P, F>
where
    P: Publisher,
    F: FnMut(&P::Item) -> bool + Send + 'static,
{
    type Item = P::Item;
    #[inline]
    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.source.subscribe(FilterSubscriber { down: s, f: self.f })
    }
}

impl<T, S: Subscriber<T>, F: FnMut(&T) -> bool> Subscriber<T> for FilterSubscriber<S, F> {
    #[inline]
    fn on_subscribe<Q: Subscription>(&mut self, s: &Q) {
        self.down.on_subscribe(s)
    }
    #[inline]
    fn on_next<Q: Subscription>(&mut self, item: T, s: &Q) {
        if (self.f)(&item) {
            self.down.on_next(item, s)
        } else {
            // The downstream's demand for this element is still open: ask for another.
            s.request(1)
        }
    }
    #[inline]
    fn on_error(&mut self, error: Error) {
        self.down.on_error(error)
    }
    #[inline]
    fn on_complete(&mut self) {
        self.down.on_complete()
    }
}

/// `take(n)`.
#[derive(Debug, Clone)]
pub struct Take<P> {
    source: P,
    n: u64,
}

impl<P> Take<P> {
    pub(crate) fn new(source: P, n: u64) -> Self {
        Take { source, n }
    }
}

struct TakeSubscriber<S> {
    down: S,
    remaining: u64,
    done: bool,
}

impl<P: Publisher> Publisher for Take<P> {
    type Item = P::Item;
    #[inline]
    fn subscribe<S: Subscriber<P::Item> + Send + 'static>(self, s: S) {
        self.source.subscribe(TakeSubscriber { down: s, remaining: self.n, done: false })
    }
}

impl<T, S: Subscriber<T>> Subscriber<T> for TakeSubscriber<S> {
    #[inline]
    fn on_subscribe<Q: Subscription>(&mut self, s: &Q) {
        if self.remaining == 0 {
            // take(0): complete at once, never request (Reactor does the same).
            self.done = true;
            s.cancel();
            self.down.on_subscribe(&crate::Cancelled);
            self.down.on_complete();
        } else {
            self.down.on_subscribe(s)
        }
    }
    #[inline]
    fn on_next<Q: Subscription>(&mut self, item: T, s: &Q) {
        if self.done {
            return;
        }
        self.remaining -= 1;
        if self.remaining == 0 {
            self.done = true;
            s.cancel();
            self.down.on_next(item, s);
            self.down.on_complete();
        } else {
            self.down.on_next(item, s)
        }
    }
    #[inline]
    fn on_error(&mut self, error: Error) {
        if !std::mem::replace(&mut self.done, true) {
            self.down.on_error(error)
        }
    }
    #[inline]
    fn on_complete(&mut self) {
        if !std::mem::replace(&mut self.done, true) {
            self.down.on_complete()
        }
    }
}

/// The lambda subscriber (Reactor's `LambdaSubscriber`): requests unbounded in
/// `on_subscribe`, calls `on_next` per element and `on_done` once at the end.
pub struct ForEach<N, D> {
    on_next: N,
    on_done: Option<D>,
}

impl<N, D> std::fmt::Debug for ForEach<N, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForEach")
    }
}

impl<N, D> ForEach<N, D> {
    /// A subscriber from two closures.
    pub fn new(on_next: N, on_done: D) -> Self {
        ForEach { on_next, on_done: Some(on_done) }
    }
}

impl<T, N: FnMut(T), D: FnOnce(Result<(), Error>)> Subscriber<T> for ForEach<N, D> {
    #[inline]
    fn on_subscribe<Q: Subscription>(&mut self, s: &Q) {
        s.request(UNBOUNDED)
    }
    #[inline]
    fn on_next<Q: Subscription>(&mut self, item: T, _s: &Q) {
        (self.on_next)(item)
    }
    #[inline]
    fn on_error(&mut self, error: Error) {
        if let Some(d) = self.on_done.take() {
            d(Err(error))
        }
    }
    #[inline]
    fn on_complete(&mut self) {
        if let Some(d) = self.on_done.take() {
            d(Ok(()))
        }
    }
}

struct Collect<T> {
    items: Vec<T>,
    tx: Option<mpsc::Sender<Result<Vec<T>, Error>>>,
    handle: Arc<Mutex<Option<SharedSubscription>>>,
}

impl<T> Subscriber<T> for Collect<T> {
    fn on_subscribe<Q: Subscription>(&mut self, s: &Q) {
        *self.handle.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.detach());
        s.request(UNBOUNDED)
    }
    fn on_next<Q: Subscription>(&mut self, item: T, _s: &Q) {
        self.items.push(item)
    }
    fn on_error(&mut self, error: Error) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Err(error));
        }
    }
    fn on_complete(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Ok(std::mem::take(&mut self.items)));
        }
    }
}

pub(crate) fn collect_blocking<P: Publisher>(
    source: P,
    timeout: Duration,
) -> Result<Vec<P::Item>, Error>
where
    P::Item: Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let handle = Arc::new(Mutex::new(None));
    source.subscribe(Collect { items: Vec::new(), tx: Some(tx), handle: handle.clone() });
    match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Failed(
            "the subscriber was dropped without a terminal signal (cancelled, or no demand \
             could arrive)"
                .to_string(),
        )),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            if let Some(h) = handle.lock().unwrap_or_else(|e| e.into_inner()).take() {
                h.cancel();
            }
            Err(Error::Timeout(timeout))
        }
    }
}
