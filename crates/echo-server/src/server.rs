//! The event loop (the reactor), the workers and the server handle.

use crate::http::{self, BadReason, Method, Parse, ResponseKind};
use handoff::{Consumer, Handoff, Producer};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const LISTENER: Token = Token(usize::MAX - 1);
const WAKER: Token = Token(usize::MAX);

/// What the event loop parsed from a request: the part of it a worker needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A well-formed `GET` (or any method other than `HEAD`).
    Get,
    /// A well-formed `HEAD`.
    Head,
    /// A malformed request.
    Bad(BadReason),
}

/// The record the event loop (producer) hands to a worker (consumer): `Copy`, 16 bytes
/// of payload, no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The connection's slot in the event loop.
    pub conn: u32,
    /// The slot's generation when the request was read; a reply for an older generation
    /// (the connection closed meanwhile) is dropped.
    pub generation: u32,
    /// The parse result.
    pub outcome: Outcome,
    /// Whether the client asked to keep the connection open.
    pub keep_alive: bool,
}

/// A worker's answer, sent back to the event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// The connection's slot.
    pub conn: u32,
    /// The slot's generation (see [`Request::generation`]).
    pub generation: u32,
    /// Which fixed response to write.
    pub kind: ResponseKind,
    /// Keep the connection open after writing.
    pub keep_alive: bool,
}

/// The worker's work: decides the response for a request. Pure and cheap, like the
/// seed's echo handler; the handoff around it is what the experiment measures.
pub fn handle(req: Request) -> Reply {
    let (kind, keep_alive) = match req.outcome {
        Outcome::Get => (ResponseKind::Ok, req.keep_alive),
        Outcome::Head => (ResponseKind::OkHead, req.keep_alive),
        Outcome::Bad(_) => (ResponseKind::BadRequest, false),
    };
    Reply { conn: req.conn, generation: req.generation, kind, keep_alive }
}

/// Server settings. [`ServerConfig::default`] listens on an ephemeral loopback port.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen; must be a loopback address (the lab never serves off-host).
    pub addr: SocketAddr,
    /// Worker threads behind the handoff (one channel each; connections are spread by
    /// slot number). Ignored by [`start_inline`].
    pub workers: usize,
    /// Per-connection input buffer: a request (headers and body) larger than this gets
    /// `400` and the connection closes.
    pub max_request_bytes: usize,
    /// Open connections at most; further connections wait in the listen backlog.
    pub max_connections: usize,
    /// Readiness events fetched per `poll`.
    pub events_capacity: usize,
    /// After a `400`, how long the event loop keeps reading (and discarding) what the
    /// client still sends before it closes, so the client reads the 400 rather than a
    /// reset (Apache's lingering close).
    pub linger: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            workers: 1,
            max_request_bytes: 8 * 1024,
            max_connections: 4096,
            events_capacity: 1024,
            linger: Duration::from_secs(2),
        }
    }
}

impl ServerConfig {
    /// The default settings listening on `addr`.
    pub fn on(addr: SocketAddr) -> Self {
        ServerConfig { addr, ..ServerConfig::default() }
    }

    fn validate(&self, inline: bool) -> Result<(), ServerError> {
        let bad = |m: String| Err(ServerError::Config(m));
        if !self.addr.ip().is_loopback() {
            return bad(format!(
                "address {} is not a loopback address: the echo server listens on \
                 127.0.0.1 or ::1 only",
                self.addr
            ));
        }
        if !inline && !(1..=64).contains(&self.workers) {
            return bad(format!("workers = {}: choose 1 to 64", self.workers));
        }
        if !(64..=1 << 20).contains(&self.max_request_bytes) {
            return bad(format!(
                "max_request_bytes = {}: choose 64 to 1048576",
                self.max_request_bytes
            ));
        }
        if !(1..=1 << 20).contains(&self.max_connections) {
            return bad(format!("max_connections = {}: choose 1 to 1048576", self.max_connections));
        }
        if !(1..=1 << 16).contains(&self.events_capacity) {
            return bad(format!("events_capacity = {}: choose 1 to 65536", self.events_capacity));
        }
        if self.linger > Duration::from_secs(60) {
            return bad(format!("linger = {:?}: choose at most 60 s", self.linger));
        }
        Ok(())
    }
}

/// Why the server could not start.
#[derive(Debug)]
pub enum ServerError {
    /// The listening socket could not be bound (port in use, permission, …).
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
    /// A setting is out of range; the message names it and the valid choices.
    Config(String),
    /// The handoff variant refused to open a channel.
    Handoff(handoff::ConfigError),
    /// Another system call failed while setting up.
    Io {
        /// What was being done.
        what: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            ServerError::Config(m) => write!(f, "invalid server configuration: {m}"),
            ServerError::Handoff(e) => write!(f, "the handoff could not open a channel: {e}"),
            ServerError::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Bind { source, .. } | ServerError::Io { source, .. } => Some(source),
            ServerError::Handoff(e) => Some(e),
            ServerError::Config(_) => None,
        }
    }
}

/// What the server did, returned by [`ServerHandle::shutdown`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ServerStats {
    /// `200` responses written completely.
    pub requests_served: u64,
    /// `400` responses written completely.
    pub bad_requests: u64,
    /// Connection errors (reset, broken pipe, failed accept or register, a handoff whose
    /// worker is gone). Clients closing normally are not errors.
    pub errors: u64,
    /// Passes of the event loop (one `poll` each).
    pub event_loop_iterations: u64,
    /// Connections accepted.
    pub connections_accepted: u64,
    /// Writes that stopped at `WouldBlock` with part of a response unsent (the rest was
    /// written on a later writable edge).
    pub partial_writes: u64,
    /// Requests the workers handled (0 in inline mode).
    pub worker_handled: u64,
    /// Set when the event loop stopped on an error rather than on shutdown.
    pub fatal: Option<String>,
}

/// A running server. Dropping it shuts the server down too (and discards the stats).
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    variant: String,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<ServerStats>>,
}

impl ServerHandle {
    /// The address the server listens on (with the port the OS chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `"inline"` or the handoff's name.
    pub fn variant(&self) -> &str {
        &self.variant
    }

    /// Stops the event loop and the workers, waits for them, and returns the stats.
    /// Open connections are closed.
    pub fn shutdown(mut self) -> ServerStats {
        self.stop_and_join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    }

    fn stop_and_join(&mut self) -> thread::Result<ServerStats> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        match self.thread.take() {
            Some(t) => t.join(),
            None => Ok(ServerStats::default()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop_and_join();
        }
    }
}

/// Starts the server with each request handed to `config.workers` worker threads through
/// channels of `handoff` (one producer, the event loop; one consumer, a worker each).
/// Replies come back on an unbounded crossbeam channel plus a `mio::Waker`.
pub fn start<H: Handoff>(handoff: H, config: ServerConfig) -> Result<ServerHandle, ServerError> {
    config.validate(false)?;
    let (poll, listener, waker) = setup(&config)?;
    let mut producers = Vec::with_capacity(config.workers);
    let mut consumers = Vec::with_capacity(config.workers);
    for _ in 0..config.workers {
        let (mut txs, rx) = handoff.open::<Request>(1).map_err(ServerError::Handoff)?;
        let tx = match (txs.pop(), txs.is_empty()) {
            (Some(tx), true) => tx,
            _ => {
                return Err(ServerError::Handoff(handoff::ConfigError::new(format!(
                    "{} returned {} producers for 1 asked",
                    handoff.name(),
                    txs.len() + 1
                ))))
            }
        };
        producers.push(tx);
        consumers.push(rx);
    }
    let (reply_tx, reply_rx) = crossbeam_channel::unbounded();
    let wake_pending = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::with_capacity(config.workers);
    for (i, rx) in consumers.into_iter().enumerate() {
        let (tx, waker, pending) = (reply_tx.clone(), waker.clone(), wake_pending.clone());
        let spawned = thread::Builder::new()
            .name(format!("echo-worker-{i}"))
            .spawn(move || worker(rx, tx, &waker, &pending));
        match spawned {
            Ok(h) => workers.push(h),
            Err(source) => {
                drop(producers); // ends the channels, so spawned workers exit
                for w in workers {
                    let _ = w.join();
                }
                return Err(ServerError::Io { what: "spawning a worker thread", source });
            }
        }
    }
    drop(reply_tx);
    let dispatch = ViaHandoff { producers, replies: reply_rx, wake_pending, workers };
    launch(handoff.name(), poll, listener, waker, config, dispatch)
}

/// Starts the server without a handoff: the event loop answers every request itself.
pub fn start_inline(config: ServerConfig) -> Result<ServerHandle, ServerError> {
    config.validate(true)?;
    let (poll, listener, waker) = setup(&config)?;
    launch("inline".to_string(), poll, listener, waker, config, Inline)
}

fn setup(config: &ServerConfig) -> Result<(Poll, TcpListener, Arc<Waker>), ServerError> {
    let poll = Poll::new().map_err(|source| ServerError::Io { what: "creating epoll", source })?;
    let waker = Waker::new(poll.registry(), WAKER)
        .map_err(|source| ServerError::Io { what: "creating the waker", source })?;
    let mut listener = TcpListener::bind(config.addr)
        .map_err(|source| ServerError::Bind { addr: config.addr, source })?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)
        .map_err(|source| ServerError::Io { what: "registering the listener", source })?;
    Ok((poll, listener, Arc::new(waker)))
}

fn launch<D: Dispatch + Send + 'static>(
    variant: String,
    poll: Poll,
    listener: TcpListener,
    waker: Arc<Waker>,
    config: ServerConfig,
    dispatch: D,
) -> Result<ServerHandle, ServerError> {
    let addr = listener
        .local_addr()
        .map_err(|source| ServerError::Io { what: "reading the listening address", source })?;
    let stop = Arc::new(AtomicBool::new(false));
    let el = EventLoop {
        poll,
        listener,
        slots: Vec::new(),
        free: Vec::new(),
        open: 0,
        bufs: Vec::new(),
        scratch: vec![0; 16 * 1024].into_boxed_slice(),
        lingering: VecDeque::new(),
        accept_pending: false,
        resume: Vec::new(),
        stats: ServerStats::default(),
        stop: stop.clone(),
        dispatch,
        config,
    };
    let thread = thread::Builder::new()
        .name("echo-event-loop".to_string())
        .spawn(move || el.run())
        .map_err(|source| ServerError::Io { what: "spawning the event loop thread", source })?;
    Ok(ServerHandle { addr, variant, stop, waker, thread: Some(thread) })
}

/// The consumer side: takes requests in batches, answers each, sends the replies back and
/// wakes the event loop once per batch (and only if it is not already being woken).
fn worker<C: Consumer<Request>>(
    mut rx: C,
    tx: crossbeam_channel::Sender<Reply>,
    waker: &Waker,
    wake_pending: &AtomicBool,
) -> u64 {
    let mut handled = 0u64;
    loop {
        let n = rx.recv_batch(256, |req| {
            let _h = tracing::trace_span!("handle", conn = req.conn).entered();
            // The event loop outlives the workers; a failed send means it has stopped.
            let _ = tx.send(handle(req));
        });
        if n == 0 {
            return handled;
        }
        handled += n as u64;
        if !wake_pending.swap(true, Ordering::SeqCst) {
            let _ = waker.wake();
        }
    }
}

/// How the event loop gets a request answered.
trait Dispatch {
    /// Hands a request over; returns the reply at once when there is no handoff.
    fn dispatch(&mut self, req: Request) -> Dispatched;
    /// Moves replies that came back into `out`.
    fn take_replies(&mut self, out: &mut Vec<Reply>);
    /// Ends the workers; returns how many requests they handled.
    fn finish(self) -> u64;
}

enum Dispatched {
    Now(Reply),
    Queued,
    Failed,
}

struct Inline;

impl Dispatch for Inline {
    fn dispatch(&mut self, req: Request) -> Dispatched {
        Dispatched::Now(handle(req))
    }
    fn take_replies(&mut self, _out: &mut Vec<Reply>) {}
    fn finish(self) -> u64 {
        0
    }
}

struct ViaHandoff<P> {
    producers: Vec<P>,
    replies: crossbeam_channel::Receiver<Reply>,
    wake_pending: Arc<AtomicBool>,
    workers: Vec<JoinHandle<u64>>,
}

impl<P: Producer<Request>> Dispatch for ViaHandoff<P> {
    fn dispatch(&mut self, req: Request) -> Dispatched {
        let i = req.conn as usize % self.producers.len();
        // Blocks while a bounded channel is full: the worker keeps draining it and never
        // waits on the event loop (its reply channel is unbounded), so this cannot
        // deadlock; it is the handoff's backpressure reaching the event loop.
        match self.producers[i].send(req) {
            Ok(()) => Dispatched::Queued,
            Err(_) => Dispatched::Failed,
        }
    }

    fn take_replies(&mut self, out: &mut Vec<Reply>) {
        // Clear the flag before draining: a reply sent after the drain sees `false` and
        // wakes us; one sent before the clear is drained here.
        self.wake_pending.store(false, Ordering::SeqCst);
        out.extend(self.replies.try_iter());
    }

    fn finish(self) -> u64 {
        drop(self.producers); // the channels end; workers return
        self.workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a request.
    Reading,
    /// A request is with a worker.
    Awaiting,
    /// Writing the response.
    Writing,
    /// Response sent and write side shut; discarding input until EOF or the deadline.
    Lingering,
}

struct Conn {
    stream: TcpStream,
    inbuf: Vec<u8>,
    state: State,
    out: &'static [u8],
    written: usize,
    kind: ResponseKind,
    keep_alive: bool,
    /// Reading stopped with the buffer full, before `WouldBlock`: with edge-triggered
    /// readiness no new event will come for those bytes, so read again later.
    more_to_read: bool,
    peer_eof: bool,
    writable_interest: bool,
}

struct Slot {
    generation: u32,
    conn: Option<Conn>,
}

struct EventLoop<D> {
    poll: Poll,
    listener: TcpListener,
    slots: Vec<Slot>,
    free: Vec<usize>,
    open: usize,
    /// Input buffers of closed connections, reused.
    bufs: Vec<Vec<u8>>,
    scratch: Box<[u8]>,
    /// (deadline, slot, generation) of lingering connections, in deadline order.
    lingering: VecDeque<(Instant, usize, u32)>,
    accept_pending: bool,
    /// (slot, generation) of connections to resume reading: see `run`.
    resume: Vec<(usize, u32)>,
    stats: ServerStats,
    stop: Arc<AtomicBool>,
    dispatch: D,
    config: ServerConfig,
}

impl<D: Dispatch> EventLoop<D> {
    fn run(mut self) -> ServerStats {
        let mut events = Events::with_capacity(self.config.events_capacity);
        let mut replies = Vec::new();
        let mut resume = Vec::new();
        let mut last_open = usize::MAX;
        while !self.stop.load(Ordering::SeqCst) {
            let timeout = self.poll_timeout();
            let polled = {
                let _w = handoff::wait_span!(handoff::trace::WAIT_EMPTY);
                self.poll.poll(&mut events, timeout)
            };
            match polled {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.stats.fatal = Some(format!("poll failed: {e}"));
                    break;
                }
            }
            self.stats.event_loop_iterations += 1;
            let n_events = events.iter().count();
            let _span = tracing::trace_span!("event_loop", events = n_events as u64).entered();
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept_all(),
                    WAKER => {}
                    Token(i) => {
                        let gen = self.slots[i].generation;
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.on_readable(i, ev.is_read_closed() || ev.is_error());
                        }
                        if ev.is_writable() && self.state_of(i, gen) == Some(State::Writing) {
                            self.flush(i);
                        }
                    }
                }
            }
            self.dispatch.take_replies(&mut replies);
            for r in replies.drain(..) {
                self.deliver(r);
            }
            // Kept-alive connections whose response went out: their next (pipelined)
            // request is parsed here, one per connection per pass, rather than by
            // recursion from `flush` (which a long pipeline would turn into a deep stack).
            std::mem::swap(&mut resume, &mut self.resume);
            for (i, generation) in resume.drain(..) {
                if self.state_of(i, generation) == Some(State::Reading) {
                    if self.conn(i).more_to_read {
                        self.on_readable(i, true);
                    } else {
                        self.process(i);
                    }
                }
            }
            if self.accept_pending {
                self.accept_all();
            }
            self.sweep_lingering();
            if self.open != last_open {
                last_open = self.open;
                handoff::counter!("connections", self.open);
            }
        }
        let EventLoop { dispatch, mut stats, .. } = self;
        stats.worker_handled = dispatch.finish();
        stats
    }

    fn poll_timeout(&self) -> Option<Duration> {
        if !self.resume.is_empty() {
            return Some(Duration::ZERO);
        }
        let mut t = self.accept_pending.then_some(Duration::from_millis(10));
        if let Some(&(deadline, _, _)) = self.lingering.front() {
            let d = deadline.saturating_duration_since(Instant::now());
            t = Some(t.map_or(d, |t| t.min(d)));
        }
        t
    }

    fn state_of(&self, i: usize, generation: u32) -> Option<State> {
        let slot = self.slots.get(i)?;
        if slot.generation != generation {
            return None;
        }
        slot.conn.as_ref().map(|c| c.state)
    }

    fn conn(&mut self, i: usize) -> &mut Conn {
        self.slots[i].conn.as_mut().expect("live connection")
    }

    fn accept_all(&mut self) {
        loop {
            if self.open >= self.config.max_connections {
                self.accept_pending = true; // retried when a connection closes
                return;
            }
            match self.listener.accept() {
                Ok((stream, _peer)) => {
                    self.stats.connections_accepted += 1;
                    self.add_connection(stream);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.accept_pending = false;
                    return;
                }
                Err(e)
                    if e.kind() == io::ErrorKind::Interrupted
                        || e.kind() == io::ErrorKind::ConnectionAborted =>
                {
                    continue
                }
                Err(_) => {
                    // EMFILE, ENOBUFS, …: the backlog still holds connections, and the
                    // edge will not fire again; retry on a short poll timeout.
                    self.stats.errors += 1;
                    self.accept_pending = true;
                    return;
                }
            }
        }
    }

    fn add_connection(&mut self, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot { generation: 0, conn: None });
                self.slots.len() - 1
            }
        };
        // Registration after accept is safe with edge triggers: epoll reports readiness
        // that already exists when the descriptor is added.
        if self.poll.registry().register(&mut stream, Token(i), Interest::READABLE).is_err() {
            self.stats.errors += 1;
            self.free.push(i);
            return;
        }
        let inbuf =
            self.bufs.pop().unwrap_or_else(|| Vec::with_capacity(self.config.max_request_bytes));
        self.slots[i].conn = Some(Conn {
            stream,
            inbuf,
            state: State::Reading,
            out: &[],
            written: 0,
            kind: ResponseKind::Ok,
            keep_alive: false,
            more_to_read: false,
            peer_eof: false,
            writable_interest: false,
        });
        self.open += 1;
    }

    fn close(&mut self, i: usize, error: bool) {
        let slot = &mut self.slots[i];
        let Some(mut conn) = slot.conn.take() else { return };
        slot.generation = slot.generation.wrapping_add(1);
        let _ = self.poll.registry().deregister(&mut conn.stream);
        conn.inbuf.clear();
        self.bufs.push(conn.inbuf);
        self.free.push(i);
        self.open -= 1;
        if error {
            self.stats.errors += 1;
        }
    }

    /// Reads until the socket is drained (edge-triggered readiness), EOF, an error, or a
    /// full buffer; then parses if a request is expected.
    ///
    /// Drained means `WouldBlock`, or a read shorter than asked: the receive queue was
    /// empty at that moment, and bytes arriving later raise a new edge, so the extra
    /// `read` that would return `WouldBlock` is skipped (one system call per request).
    /// When the peer may have closed (`read_closed`, or called outside an event) it reads
    /// on until `WouldBlock` or EOF, so an EOF is never missed.
    fn on_readable(&mut self, i: usize, read_closed: bool) {
        let max = self.config.max_request_bytes;
        let scratch = &mut self.scratch;
        let Some(conn) = self.slots[i].conn.as_mut() else { return };
        conn.more_to_read = false;
        let lingering = conn.state == State::Lingering;
        // Some(error?) when the connection must close.
        let close = loop {
            let room = if lingering { scratch.len() } else { max - conn.inbuf.len() };
            if room == 0 {
                conn.more_to_read = true;
                break None;
            }
            let n = room.min(scratch.len());
            match conn.stream.read(&mut scratch[..n]) {
                Ok(0) => {
                    conn.peer_eof = true;
                    break lingering.then_some(false);
                }
                Ok(got) => {
                    if !lingering {
                        conn.inbuf.extend_from_slice(&scratch[..got]);
                    }
                    if got < n && !read_closed {
                        break None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break Some(!lingering),
            }
        };
        match close {
            Some(error) => self.close(i, error),
            None => self.process(i),
        }
    }

    /// Parses the next request if the connection is waiting for one.
    fn process(&mut self, i: usize) {
        let max = self.config.max_request_bytes;
        let generation = self.slots[i].generation;
        let conn = self.conn(i);
        if conn.state != State::Reading {
            return;
        }
        let (outcome, keep_alive) = match http::parse_request(&conn.inbuf, max) {
            Parse::Incomplete => {
                if conn.peer_eof {
                    self.close(i, false); // the client left mid-request or between requests
                }
                return;
            }
            Parse::Complete { consumed, method, keep_alive } => {
                conn.inbuf.drain(..consumed);
                let o = if method == Method::Head { Outcome::Head } else { Outcome::Get };
                (o, keep_alive)
            }
            Parse::Bad(why) => {
                conn.inbuf.clear();
                (Outcome::Bad(why), false)
            }
        };
        conn.state = State::Awaiting;
        let req = Request { conn: i as u32, generation, outcome, keep_alive };
        match self.dispatch.dispatch(req) {
            Dispatched::Now(reply) => self.deliver(reply),
            Dispatched::Queued => {}
            Dispatched::Failed => self.close(i, true),
        }
    }

    fn deliver(&mut self, r: Reply) {
        let i = r.conn as usize;
        if self.state_of(i, r.generation) != Some(State::Awaiting) {
            return; // the connection closed meanwhile
        }
        let conn = self.conn(i);
        conn.out = http::response_bytes(r.kind, r.keep_alive);
        conn.written = 0;
        conn.kind = r.kind;
        conn.keep_alive = r.keep_alive && !conn.peer_eof;
        conn.state = State::Writing;
        self.flush(i);
    }

    /// Writes until done or `WouldBlock` (then waits for a writable edge; the unsent
    /// rest stays in `out`/`written`).
    fn flush(&mut self, i: usize) {
        let conn = self.slots[i].conn.as_mut().expect("live connection");
        while conn.written < conn.out.len() {
            match conn.stream.write(&conn.out[conn.written..]) {
                Ok(0) => return self.close(i, true),
                Ok(n) => conn.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.partial_writes += 1;
                    if !conn.writable_interest {
                        conn.writable_interest = true;
                        let interest = Interest::READABLE | Interest::WRITABLE;
                        if self
                            .poll
                            .registry()
                            .reregister(&mut conn.stream, Token(i), interest)
                            .is_err()
                        {
                            self.close(i, true);
                        }
                    }
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.close(i, true),
            }
        }
        if conn.kind == ResponseKind::BadRequest {
            self.stats.bad_requests += 1;
        } else {
            self.stats.requests_served += 1;
        }
        if conn.keep_alive {
            conn.state = State::Reading;
            conn.out = &[];
            // Resume if input is waiting, or if the peer's EOF came while writing (its edge
            // is spent: without this the half-closed connection would sit open).
            if conn.more_to_read || !conn.inbuf.is_empty() || conn.peer_eof {
                let generation = self.slots[i].generation;
                self.resume.push((i, generation));
            }
        } else if conn.kind == ResponseKind::BadRequest
            || conn.more_to_read
            || !conn.inbuf.is_empty()
        {
            self.linger(i);
        } else {
            self.close(i, false);
        }
    }

    /// Half-closes and keeps reading so that unread input does not turn the close into a
    /// reset that could destroy the response before the client reads it.
    fn linger(&mut self, i: usize) {
        let generation = self.slots[i].generation;
        let conn = self.conn(i);
        conn.state = State::Lingering;
        conn.inbuf.clear();
        if conn.peer_eof || conn.stream.shutdown(Shutdown::Write).is_err() {
            return self.close(i, false);
        }
        self.lingering.push_back((Instant::now() + self.config.linger, i, generation));
        self.on_readable(i, true);
    }

    fn sweep_lingering(&mut self) {
        let now = Instant::now();
        while let Some(&(deadline, i, generation)) = self.lingering.front() {
            if self.state_of(i, generation) != Some(State::Lingering) {
                self.lingering.pop_front(); // closed already
            } else if deadline <= now {
                self.lingering.pop_front();
                self.close(i, false);
            } else {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_record_is_small_and_copy() {
        assert_eq!(std::mem::size_of::<Request>(), 12);
        let r = Request { conn: 7, generation: 3, outcome: Outcome::Head, keep_alive: true };
        let copy = r;
        assert_eq!(handle(r), handle(copy));
        let reply = handle(Request { outcome: Outcome::Bad(BadReason::Version), ..r });
        assert_eq!((reply.kind, reply.keep_alive), (ResponseKind::BadRequest, false));
        assert_eq!((reply.conn, reply.generation), (7, 3));
    }
}
