//! Shared by the integration tests: starting the server in each mode, raw HTTP exchanges.
#![allow(dead_code)]

use echo_server::{start, start_inline, ServerConfig, ServerHandle};
use handoff::{ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The ways the server is run in the tests.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// No handoff: the event loop answers.
    Inline,
    /// `locked_queue::LockedHandoff` with this capacity.
    Locked(Option<usize>),
    /// `naive_buffer::NaiveHandoff`: unbounded, a box per message.
    Naive,
    /// A stand-in handoff over a crossbeam bounded channel, written here: proves the
    /// server drives any `Handoff`, not only the lab's.
    Tiny,
}

pub const MODES: [Mode; 5] =
    [Mode::Inline, Mode::Locked(None), Mode::Locked(Some(1)), Mode::Naive, Mode::Tiny];

pub fn start_mode(mode: Mode, config: ServerConfig) -> ServerHandle {
    let r = match mode {
        Mode::Inline => start_inline(config),
        Mode::Locked(cap) => start(locked_queue::LockedHandoff::new(cap), config),
        Mode::Naive => start(naive_buffer::NaiveHandoff::new(), config),
        Mode::Tiny => start(TinyHandoff, config),
    };
    r.unwrap_or_else(|e| panic!("{mode:?}: the server did not start: {e}"))
}

/// A TCP connection to the server with 5 s timeouts, so a hung server fails the test.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Reads one response (headers, then `Content-Length` bytes of body): (status, headers, body).
pub fn read_response(s: &mut TcpStream) -> (u16, String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).expect("read response header");
        assert_eq!(
            n,
            1,
            "connection closed inside the header: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).expect("ascii header");
    let status = head[9..12].parse().expect("status code");
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("Content-Length")
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0; len];
    s.read_exact(&mut body).expect("read body");
    (status, head, body)
}

/// Asserts the server closes the connection (EOF, not a timeout).
pub fn assert_closed(s: &mut TcpStream) {
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).expect("EOF expected, not an error or timeout");
    assert!(rest.is_empty(), "unexpected bytes after the response: {rest:?}");
}

pub fn send(s: &mut TcpStream, text: &str) {
    s.write_all(text.as_bytes()).expect("write request");
}

pub struct TinyHandoff;
pub struct TinyProducer<T>(crossbeam_channel::Sender<T>);
pub struct TinyConsumer<T>(crossbeam_channel::Receiver<T>);

impl Handoff for TinyHandoff {
    type Producer<T: Send + 'static> = TinyProducer<T>;
    type Consumer<T: Send + 'static> = TinyConsumer<T>;
    fn name(&self) -> String {
        "tiny".into()
    }
    fn capacity(&self) -> Option<usize> {
        Some(64)
    }
    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<TinyProducer<T>>, TinyConsumer<T>), ConfigError> {
        let (tx, rx) = crossbeam_channel::bounded(64);
        Ok(((0..producers).map(|_| TinyProducer(tx.clone())).collect(), TinyConsumer(rx)))
    }
}

impl<T: Send> Producer<T> for TinyProducer<T> {
    fn send(&mut self, m: T) -> Result<(), SendError<T>> {
        self.0.send(m).map_err(|e| SendError(e.0))
    }
    fn try_send(&mut self, m: T) -> Result<(), TrySendError<T>> {
        self.0.try_send(m).map_err(|e| match e {
            crossbeam_channel::TrySendError::Full(m) => TrySendError::Full(m),
            crossbeam_channel::TrySendError::Disconnected(m) => TrySendError::Closed(m),
        })
    }
    fn close(&self) {} // the server only ends channels by dropping its producer
    fn depth(&self) -> usize {
        self.0.len()
    }
}

impl<T: Send> Consumer<T> for TinyConsumer<T> {
    fn recv(&mut self) -> Option<T> {
        self.0.recv().ok()
    }
    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.0.try_recv().map_err(|e| match e {
            crossbeam_channel::TryRecvError::Empty => TryRecvError::Empty,
            crossbeam_channel::TryRecvError::Disconnected => TryRecvError::Ended,
        })
    }
    fn depth(&self) -> usize {
        self.0.len()
    }
}
