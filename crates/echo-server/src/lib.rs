//! echo-server: seed 003's reactor-pattern server, with the lab's handoff variants between
//! its event loop and its workers, and an ab-style load generator to measure it.
//!
//! # What it models
//! Seed 003 is ReactiveJ, a Java NIO server built on the Reactor pattern (Schmidt,
//! "Reactor: An Object Behavioral Pattern for Demultiplexing and Dispatching Handles for
//! Synchronous Events", 1995): one thread waits on a `Selector` for readiness, and
//! dispatches each ready channel to its handler. It was measured with
//! `ab -n 10000 -c 25`: 8,371 requests/s, 99% of requests within 6 ms. This crate is that
//! server in Rust, with `mio` (epoll) as the selector, plus one thing ReactiveJ does not
//! have: the request can be handed to worker threads through any [`handoff::Handoff`], so
//! the lab can see what each handoff design costs on a request path.
//!
//! # The reactor as implemented ([`start`], [`start_inline`])
//! * **One event-loop thread** owns the listener, every connection and all socket I/O.
//!   `mio` readiness is edge-triggered, so the loop always drains: it accepts until
//!   `WouldBlock`, reads until `WouldBlock` (or until the bounded per-connection buffer,
//!   8 KiB by default, is full, in which case it remembers to read again: no new edge
//!   will come for bytes already waiting), and writes until done or `WouldBlock`, keeping
//!   the unsent rest and asking for a writable edge.
//! * A connection is a small state machine: *Reading* → (request parsed) *Awaiting* →
//!   (reply) *Writing* → *Reading* again (keep-alive) or closed. Only one request per
//!   connection is in flight; pipelined requests wait in the buffer, so responses leave in
//!   order.
//! * **HTTP**: a subset of HTTP/1.0 and 1.1 ([`http`]): every well-formed request gets
//!   the same `HTTP/1.0 200 OK` with a 1028-byte HTML body (the seed's document length),
//!   `Server: lab-echo/0.1`, `Content-Type: text/html`, `Content-Length: 1028`. The
//!   connection stays open for HTTP/1.1 without `Connection: close` and for HTTP/1.0 with
//!   `Connection: keep-alive`, and the response says which. A malformed or oversized
//!   request gets `400 Bad Request` and the connection closes after a short lingering
//!   read (so the client sees the 400, not a reset); other connections are unaffected.
//!   The responses are built once; writing one copies nothing.
//!
//! # The request path with a handoff
//! event loop → `Producer::send(`[`Request`]`)` (a 12-byte `Copy` record: connection slot,
//! generation, parse outcome, keep-alive) → worker thread (`Consumer::recv_batch`, then
//! [`handle`] per request) → [`Reply`] on a crossbeam unbounded channel → `mio::Waker`
//! (at most one wake-up in flight, coalesced with an atomic flag) → event loop writes the
//! response.
//! * The event loop is the handoff's only producer, each worker its only consumer
//!   (`open::<Request>(1)` per worker; several workers get a channel each, and a
//!   connection always goes to the same one).
//! * The way back is deliberately not a variant under test: a crossbeam unbounded channel
//!   plus the waker, the same for every variant. Because it is unbounded a worker never
//!   waits on the event loop, so the event loop may block in `send` on a full bounded
//!   handoff (backpressure) without deadlock.
//! * A reply carries the connection's generation; a reply for a connection that closed
//!   meanwhile (and whose slot may be reused) is dropped.
//! * **Inline mode** ([`start_inline`]) has no handoff at all: the event loop calls
//!   [`handle`] itself — the baseline each variant is compared with.
//!
//! # Guarantees
//! No allocation per request in the event loop (connection buffers are pooled, responses
//! are static; the handoff variant may allocate, which is part of what is measured, and
//! the reply channel, crossbeam's unbounded list, allocates a block per 31 replies);
//! bounded input per connection; no blocking system call on the event loop except
//! `epoll_wait` and, with a full bounded handoff, the handoff's `send`. Every error is a value: a port in use is a
//! [`ServerError::Bind`] naming the address and the OS error.
//!
//! # Tracing (the conventions of [`handoff::trace`])
//! A `wait` span (reason `empty`) around each `poll`, an `event_loop` span per loop pass
//! with its `events` count, a `handle` span per request on the workers, and
//! `counter!("connections", n)` whenever the number of open connections changed. All are
//! `TRACE` level: with no subscriber each costs a cached-interest check.
//!
//! # What ab measures, and how [`loadgen`] mirrors it
//! ab opens `-c` connections at once, sends one `GET` per connection (HTTP/1.0, no
//! keep-alive unless `-k`), reads until the server closes, and opens the next connection
//! until `-n` requests are done; all on one thread with a poll set. Per request it records
//! connect, processing, waiting and total times; it reports throughput as completed
//! requests over the wall time of the whole run, and latency as the min / mean / sd /
//! median / max table and the percentage table of total times. [`loadgen::run`] does the
//! same on one `mio` thread (closer to ab than a thread per connection, and it leaves the
//! other cores to the server) and returns a [`loadgen::LoadReport`] (serde-serialisable)
//! whose [`render_ab_style`](loadgen::LoadReport::render_ab_style) prints ab's layout. Its
//! module docs define every figure and failure class. Both sides stay on loopback: the
//! server refuses a non-loopback address, the load generator too.
//!
//! # External programs
//! [`external`] starts a private nginx (one process, the same document) and runs the real
//! `ab`, so an experiment can put the variants, nginx and both load generators side by
//! side in one run; `examples/compare.rs` does exactly that.
//!
//! # Sources
//! Seed 003 (ReactiveJ and its ab report); D. Schmidt's Reactor paper; `mio`'s docs on
//! edge-triggered readiness ("drain until `WouldBlock`"); ApacheBench 2.3's `ab.c`
//! (`output_results`: the definitions of the times, the percentile index
//! `count * p / 100`, the failure classes); RFC 9112 (message syntax, persistence);
//! Apache httpd's lingering close.

pub mod external;
pub mod http;
pub mod loadgen;
mod server;

pub use server::{
    handle, start, start_inline, Outcome, Reply, Request, ServerConfig, ServerError, ServerHandle,
    ServerStats,
};
