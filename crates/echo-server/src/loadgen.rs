//! An ab-style load generator: ApacheBench's model and report, on one thread.
//!
//! # Model (ab 2.3 without `-k`, unless [`LoadConfig::keep_alive`])
//! `concurrency` connections are kept busy until `requests` requests have finished. Each
//! request opens a non-blocking connection, writes `GET <path> HTTP/1.0` with `Host`,
//! `User-Agent` and `Accept` headers (and `Connection: Keep-Alive` with keep-alive), and
//! reads the response until the server closes (or, with keep-alive, until
//! `Content-Length` body bytes arrived and the response said `Connection: keep-alive`;
//! the next request then reuses the connection with a zero connect time, as ab does).
//!
//! Like ab it is single-threaded and event-driven (ab uses `apr_pollset`, this uses
//! `mio`): one client thread leaves the other cores to the server, and its own cost per
//! request is one readiness event per state change, not a thread switch.
//!
//! # Times, as ab defines them (per request, µs, reported in ms)
//! * `start`: before `connect()`; `connect`: the connection is established;
//!   `endwrite`: the request is written; `beginread`: the first response byte is read;
//!   `done`: the response is complete (EOF, or the last body byte with keep-alive).
//! * **Connect** = connect − start; **Processing** = done − connect (ab prints
//!   `time − ctime`); **Waiting** = beginread − endwrite; **Total** = done − start.
//! * The percentage table sorts requests by Total and prints, for p in 50 66 75 80 90 95
//!   98 99, the Total of the request at index `count·p/100`; 100% is the longest.
//! * Means and sample standard deviations (n − 1) over successful requests; the median
//!   is the middle element (mean of the two middle ones for an even count; ab's own code
//!   averages for an odd count, an off-by-one this one does not copy).
//!
//! # Failures, split as ab splits them
//! * **Connect**: `connect()` failed or the socket reported an error before connecting.
//!   As ab does, the run is abandoned after more than 10 connect failures with no
//!   successful response ([`LoadError::Aborted`]).
//! * **Receive**: a read failed, or the server closed before a complete header.
//! * **Length**: the body length differs from the first response's (the "Document
//!   Length"); such a request still counts as complete.
//! * **Exceptions**: the socket reported an error event, or the response was not HTTP.
//! * **Write errors** (ab's `epipe`): sending the request failed; counted as failed
//!   under Exceptions too.
//! * **Non-2xx responses** are counted but are not failures (as in ab).
//! * Beyond ab: when the global deadline ([`LoadConfig::timeout`]) passes, the run stops
//!   and the requests not finished are reported as **Unfinished** failures.

use serde::Serialize;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

/// What to run: ab's `-n`, `-c`, `-k`, `-s` (here a deadline for the whole run) and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadConfig {
    /// Requests in all (`-n`).
    pub requests: u64,
    /// Requests in flight at once (`-c`).
    pub concurrency: usize,
    /// Reuse connections (`-k`).
    pub keep_alive: bool,
    /// The whole run must finish within this; what is left is reported as unfinished.
    pub timeout: Duration,
    /// The document path.
    pub path: String,
}

impl Default for LoadConfig {
    /// The seed's run: `ab -n 10000 -c 25`, with a 60 s deadline.
    fn default() -> Self {
        LoadConfig {
            requests: 10_000,
            concurrency: 25,
            keep_alive: false,
            timeout: Duration::from_secs(60),
            path: "/".to_string(),
        }
    }
}

/// Why a run could not happen.
#[derive(Debug)]
pub enum LoadError {
    /// A setting is out of range; the message names it and the valid choices.
    Config(String),
    /// Setting up the poller failed.
    Io {
        /// What was being done.
        what: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
    /// More than 10 connect failures and no response at all (ab's "Test aborted after 10
    /// failures").
    Aborted {
        /// The server's address.
        addr: SocketAddr,
        /// The last connect error.
        last_error: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Config(m) => write!(f, "invalid load configuration: {m}"),
            LoadError::Io { what, source } => write!(f, "{what}: {source}"),
            LoadError::Aborted { addr, last_error } => write!(
                f,
                "test aborted after 10 failures to connect to {addr} (as ab does): {last_error}"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Failed requests by cause (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FailedRequests {
    /// Connect failures.
    pub connect: u64,
    /// Read failures, or closed before a complete header.
    pub receive: u64,
    /// Body length differs from the first response's.
    pub length: u64,
    /// Error events, non-HTTP responses, write failures.
    pub exceptions: u64,
    /// Not finished when the deadline passed.
    pub unfinished: u64,
}

impl FailedRequests {
    /// All failed requests.
    pub fn total(&self) -> u64 {
        self.connect + self.receive + self.length + self.exceptions + self.unfinished
    }
}

/// min / mean / sd / median / max of one row of ab's "Connection Times", in ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TimeStats {
    /// Smallest.
    pub min_ms: f64,
    /// Mean.
    pub mean_ms: f64,
    /// Sample standard deviation.
    pub sd_ms: f64,
    /// Median.
    pub median_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

/// ab's "Connection Times (ms)" table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConnectionTimes {
    /// connect − start.
    pub connect: TimeStats,
    /// done − connect.
    pub processing: TimeStats,
    /// first byte read − request written.
    pub waiting: TimeStats,
    /// done − start.
    pub total: TimeStats,
}

/// One line of ab's percentage table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Percentile {
    /// 50, 66, …, 100.
    pub percent: u32,
    /// Total time of that request, ms.
    pub ms: f64,
}

/// The percentages ab prints.
pub const PERCENTS: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// Everything ab reports, as numbers; [`LoadReport::render_ab_style`] lays it out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    /// The `Server` header of the first response.
    pub server_software: String,
    /// The server's IP.
    pub server_hostname: String,
    /// The server's port.
    pub server_port: u16,
    /// The path requested.
    pub document_path: String,
    /// Body length of the first complete response.
    pub document_length: u64,
    /// `-c`.
    pub concurrency: usize,
    /// `-k`.
    pub keep_alive: bool,
    /// `-n`.
    pub requests: u64,
    /// From the first connect to the last completion, s.
    pub time_taken_s: f64,
    /// Requests whose response was read to its end (including length failures).
    pub complete_requests: u64,
    /// All failures ([`FailedRequests::total`]).
    pub failed_requests: u64,
    /// Failures by cause.
    pub failed: FailedRequests,
    /// Request writes that failed.
    pub write_errors: u64,
    /// Complete responses with a status outside 200–299.
    pub non_2xx_responses: u64,
    /// Requests that reused a connection.
    pub keep_alive_requests: u64,
    /// All bytes read, headers included.
    pub total_transferred: u64,
    /// Body bytes read.
    pub html_transferred: u64,
    /// complete / time taken.
    pub requests_per_second: f64,
    /// concurrency × time taken / complete, ms.
    pub time_per_request_ms: f64,
    /// time taken / complete, ms ("across all concurrent requests").
    pub time_per_request_all_ms: f64,
    /// total transferred / 1024 / time taken.
    pub transfer_rate_kbytes_s: f64,
    /// The connection-times table (over complete requests).
    pub connection_times: ConnectionTimes,
    /// The percentage table (Total times).
    pub percentiles: Vec<Percentile>,
    /// Whether the deadline stopped the run.
    pub deadline_exceeded: bool,
}

impl LoadReport {
    /// The `Total` time within which `percent`% of requests were served, if present.
    pub fn percentile_ms(&self, percent: u32) -> Option<f64> {
        self.percentiles.iter().find(|p| p.percent == percent).map(|p| p.ms)
    }

    /// The report laid out as ab prints it (times rounded to whole ms, as ab does).
    pub fn render_ab_style(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(w, "Server Software:        {}", self.server_software);
        let _ = writeln!(w, "Server Hostname:        {}", self.server_hostname);
        let _ = writeln!(w, "Server Port:            {}", self.server_port);
        let _ = writeln!(w);
        let _ = writeln!(w, "Document Path:          {}", self.document_path);
        let _ = writeln!(w, "Document Length:        {} bytes", self.document_length);
        let _ = writeln!(w);
        let _ = writeln!(w, "Concurrency Level:      {}", self.concurrency);
        let _ = writeln!(w, "Time taken for tests:   {:.3} seconds", self.time_taken_s);
        let _ = writeln!(w, "Complete requests:      {}", self.complete_requests);
        let _ = writeln!(w, "Failed requests:        {}", self.failed_requests);
        if self.failed_requests > 0 {
            let f = &self.failed;
            let _ = write!(
                w,
                "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {}",
                f.connect, f.receive, f.length, f.exceptions
            );
            if f.unfinished > 0 {
                let _ = write!(w, ", Unfinished: {} (deadline exceeded)", f.unfinished);
            }
            let _ = writeln!(w, ")");
        }
        let _ = writeln!(w, "Write errors:           {}", self.write_errors);
        if self.non_2xx_responses > 0 {
            let _ = writeln!(w, "Non-2xx responses:      {}", self.non_2xx_responses);
        }
        if self.keep_alive {
            let _ = writeln!(w, "Keep-Alive requests:    {}", self.keep_alive_requests);
        }
        let _ = writeln!(w, "Total transferred:      {} bytes", self.total_transferred);
        let _ = writeln!(w, "HTML transferred:       {} bytes", self.html_transferred);
        if self.time_taken_s > 0.0 && self.complete_requests > 0 {
            let _ = writeln!(
                w,
                "Requests per second:    {:.2} [#/sec] (mean)",
                self.requests_per_second
            );
            let _ =
                writeln!(w, "Time per request:       {:.3} [ms] (mean)", self.time_per_request_ms);
            let _ = writeln!(
                w,
                "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
                self.time_per_request_all_ms
            );
            let _ = writeln!(
                w,
                "Transfer rate:          {:.2} [Kbytes/sec] received",
                self.transfer_rate_kbytes_s
            );
        }
        if self.complete_requests > 0 {
            let _ = writeln!(w);
            let _ = writeln!(w, "Connection Times (ms)");
            let _ = writeln!(w, "              min  mean[+/-sd] median   max");
            let ct = &self.connection_times;
            for (label, t) in [
                ("Connect:    ", &ct.connect),
                ("Processing: ", &ct.processing),
                ("Waiting:    ", &ct.waiting),
                ("Total:      ", &ct.total),
            ] {
                let _ = writeln!(
                    w,
                    "{label}{:5} {:4} {:5.1} {:6} {:7}",
                    round_ms(t.min_ms),
                    round_ms(t.mean_ms),
                    t.sd_ms,
                    round_ms(t.median_ms),
                    round_ms(t.max_ms)
                );
            }
        }
        if self.complete_requests > 1 {
            let _ = writeln!(w);
            let _ = writeln!(w, "Percentage of the requests served within a certain time (ms)");
            for p in &self.percentiles {
                if p.percent >= 100 {
                    let _ = writeln!(w, " 100%  {:5} (longest request)", round_ms(p.ms));
                } else {
                    let _ = writeln!(w, "  {}%  {:5}", p.percent, round_ms(p.ms));
                }
            }
        }
        s
    }
}

fn round_ms(ms: f64) -> i64 {
    ms.round() as i64
}

/// One finished request's times, µs.
#[derive(Debug, Clone, Copy)]
struct Sample {
    ctime: u64,
    time: u64,
    wait: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Connecting,
    Writing,
    Reading,
}

struct Client {
    stream: Option<TcpStream>,
    phase: Phase,
    start: Instant,
    connect: Instant,
    endwrite: Instant,
    beginread: Option<Instant>,
    written: usize,
    /// Bytes read for this request.
    read: u64,
    header: Vec<u8>,
    header_done: bool,
    status: u16,
    content_length: Option<u64>,
    server_keep_alive: bool,
    body: u64,
    /// This request reuses a kept-alive connection.
    keptalive: bool,
}

/// Largest response header accepted.
const MAX_HEADER: usize = 16 * 1024;

/// Runs the load against `addr` (a loopback address) and returns ab's report.
pub fn run(addr: SocketAddr, config: &LoadConfig) -> Result<LoadReport, LoadError> {
    validate(addr, config)?;
    let mut poll =
        Poll::new().map_err(|source| LoadError::Io { what: "creating epoll", source })?;
    let mut events = Events::with_capacity(config.concurrency.max(16));
    let mut request = format!(
        "GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: lab-loadgen/0.1\r\nAccept: */*\r\n",
        config.path, addr
    );
    if config.keep_alive {
        request.push_str("Connection: Keep-Alive\r\n");
    }
    request.push_str("\r\n");
    let mut g = Gen {
        addr,
        request: request.into_bytes(),
        keep_alive: config.keep_alive,
        requests: config.requests,
        started: 0,
        finished: 0,
        samples: Vec::with_capacity(config.requests.min(10_000_000) as usize),
        failed: FailedRequests::default(),
        write_errors: 0,
        non_2xx: 0,
        keep_alive_requests: 0,
        total_read: 0,
        body_read: 0,
        doclen: None,
        server_software: None,
        last_connect_error: None,
        last_done: None,
        refill: false,
        scratch: vec![0; 64 * 1024].into_boxed_slice(),
    };
    let now = Instant::now();
    let mut clients: Vec<Client> = (0..config.concurrency)
        .map(|_| Client {
            stream: None,
            phase: Phase::Idle,
            start: now,
            connect: now,
            endwrite: now,
            beginread: None,
            written: 0,
            read: 0,
            header: Vec::with_capacity(1024),
            header_done: false,
            status: 0,
            content_length: None,
            server_keep_alive: false,
            body: 0,
            keptalive: false,
        })
        .collect();
    let t0 = Instant::now();
    let deadline = t0 + config.timeout;
    for (i, c) in clients.iter_mut().enumerate() {
        g.start_connection(&mut poll, c, i);
    }
    let mut deadline_exceeded = false;
    while g.finished < g.requests {
        g.check_abort()?;
        let now = Instant::now();
        if now >= deadline {
            deadline_exceeded = true;
            break;
        }
        match poll.poll(&mut events, Some(deadline - now)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(LoadError::Io { what: "polling", source }),
        }
        for ev in events.iter() {
            let i = ev.token().0;
            let c = &mut clients[i];
            g.on_event(&mut poll, c, i, ev);
        }
        // Restart slots left idle by failures (not restarted in place, so that a run of
        // immediate failures cannot recurse).
        if std::mem::take(&mut g.refill) {
            for (i, c) in clients.iter_mut().enumerate() {
                if c.phase == Phase::Idle && g.started < g.requests {
                    g.start_connection(&mut poll, c, i);
                }
            }
        }
    }
    g.check_abort()?;
    if deadline_exceeded {
        g.failed.unfinished = g.requests - g.finished;
    }
    let end = if deadline_exceeded { Instant::now() } else { g.last_done.unwrap_or(t0) };
    Ok(g.report(config, end.duration_since(t0), deadline_exceeded))
}

fn validate(addr: SocketAddr, c: &LoadConfig) -> Result<(), LoadError> {
    let bad = |m: String| Err(LoadError::Config(m));
    if !addr.ip().is_loopback() {
        return bad(format!(
            "{addr} is not a loopback address: the load generator targets 127.0.0.1 or ::1 only"
        ));
    }
    if addr.port() == 0 {
        return bad(format!("{addr}: port 0 is not a server port"));
    }
    if !(1..=100_000_000).contains(&c.requests) {
        return bad(format!("requests = {}: choose 1 to 100000000", c.requests));
    }
    if c.concurrency == 0 || c.concurrency as u64 > c.requests || c.concurrency > 20_000 {
        return bad(format!(
            "concurrency = {}: choose 1 to min(requests = {}, 20000) (ab refuses a \
             concurrency above the number of requests)",
            c.concurrency, c.requests
        ));
    }
    if c.timeout.is_zero() || c.timeout > Duration::from_secs(3600) {
        return bad(format!("timeout = {:?}: choose more than 0 and at most 3600 s", c.timeout));
    }
    if !c.path.starts_with('/') || c.path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return bad(format!(
            "path = {:?}: it must start with '/' and contain no spaces or control characters",
            c.path
        ));
    }
    Ok(())
}

struct Gen {
    addr: SocketAddr,
    request: Vec<u8>,
    keep_alive: bool,
    requests: u64,
    started: u64,
    /// Complete plus failed (other than length failures, which are complete).
    finished: u64,
    samples: Vec<Sample>,
    failed: FailedRequests,
    write_errors: u64,
    non_2xx: u64,
    keep_alive_requests: u64,
    total_read: u64,
    body_read: u64,
    doclen: Option<u64>,
    server_software: Option<String>,
    last_connect_error: Option<String>,
    last_done: Option<Instant>,
    /// A slot went idle after a failure.
    refill: bool,
    scratch: Box<[u8]>,
}

enum Fail {
    Connect,
    Receive,
    Exception,
}

fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
}

impl Gen {
    fn check_abort(&self) -> Result<(), LoadError> {
        if self.failed.connect > 10 && self.samples.is_empty() {
            return Err(LoadError::Aborted {
                addr: self.addr,
                last_error: self.last_connect_error.clone().unwrap_or_default(),
            });
        }
        Ok(())
    }

    fn reset(c: &mut Client) {
        c.beginread = None;
        c.written = 0;
        c.read = 0;
        c.header.clear();
        c.header_done = false;
        c.status = 0;
        c.content_length = None;
        c.server_keep_alive = false;
        c.body = 0;
    }

    /// Starts the next request on a new connection, if any is left.
    fn start_connection(&mut self, poll: &mut Poll, c: &mut Client, i: usize) {
        if let Some(mut s) = c.stream.take() {
            let _ = poll.registry().deregister(&mut s);
        }
        c.phase = Phase::Idle;
        if self.started >= self.requests || self.check_abort().is_err() {
            return;
        }
        self.started += 1;
        Self::reset(c);
        c.keptalive = false;
        c.start = Instant::now();
        let mut stream = match TcpStream::connect(self.addr) {
            Ok(s) => s,
            Err(e) => return self.connect_failed(c, e.to_string()),
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = poll.registry().register(&mut stream, Token(i), interest) {
            return self.connect_failed(c, e.to_string());
        }
        c.stream = Some(stream);
        c.phase = Phase::Connecting;
    }

    fn connect_failed(&mut self, c: &mut Client, e: String) {
        self.last_connect_error = Some(e);
        self.fail(c, Fail::Connect);
    }

    /// Ends the current request as failed; the slot goes idle and is refilled by the loop.
    fn fail(&mut self, c: &mut Client, why: Fail) {
        match why {
            Fail::Connect => self.failed.connect += 1,
            Fail::Receive => self.failed.receive += 1,
            Fail::Exception => self.failed.exceptions += 1,
        }
        self.finished += 1;
        self.refill = true;
        c.stream = None; // dropping closes the socket, which removes it from epoll
        c.phase = Phase::Idle;
    }

    fn on_event(&mut self, poll: &mut Poll, c: &mut Client, i: usize, ev: &mio::event::Event) {
        if c.phase == Phase::Connecting {
            let Some(s) = c.stream.as_ref() else { return };
            match s.take_error() {
                Ok(Some(e)) | Err(e) => return self.connect_failed(c, e.to_string()),
                Ok(None) => {}
            }
            match s.peer_addr() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotConnected && !ev.is_error() => {
                    return; // not yet: a spurious event
                }
                Err(e) => return self.connect_failed(c, e.to_string()),
            }
            c.connect = Instant::now();
            c.phase = Phase::Writing;
        }
        if c.phase == Phase::Writing {
            return self.write_request(poll, c, i);
        }
        if c.phase == Phase::Reading {
            if ev.is_readable() || ev.is_read_closed() {
                return self.read_response(poll, c, i, ev.is_read_closed());
            }
            if ev.is_error() {
                self.fail(c, Fail::Exception);
            }
        }
    }

    fn write_request(&mut self, poll: &mut Poll, c: &mut Client, i: usize) {
        let Some(s) = c.stream.as_mut() else { return };
        while c.written < self.request.len() {
            match s.write(&self.request[c.written..]) {
                Ok(0) => {
                    self.write_errors += 1;
                    return self.fail(c, Fail::Exception);
                }
                Ok(n) => c.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    if c.keptalive {
                        // The server closed an idle kept-alive connection: not an error,
                        // retry on a fresh connection (ab does the same).
                        self.started -= 1;
                        return self.start_connection(poll, c, i);
                    }
                    self.write_errors += 1;
                    return self.fail(c, Fail::Exception);
                }
            }
        }
        c.endwrite = Instant::now();
        c.phase = Phase::Reading;
        // The response raises a readable edge when it arrives (not read here: with
        // keep-alive that would recurse through `complete` for as long as responses
        // came back at once).
    }

    /// Reads until drained: `WouldBlock`, or (unless the peer may have closed) a read
    /// shorter than the buffer, after which new bytes raise a new edge.
    fn read_response(&mut self, poll: &mut Poll, c: &mut Client, i: usize, read_closed: bool) {
        loop {
            let Some(s) = c.stream.as_mut() else { return };
            match s.read(&mut self.scratch) {
                Ok(0) => return self.on_eof(poll, c, i),
                Ok(n) => {
                    if c.beginread.is_none() {
                        c.beginread = Some(Instant::now());
                    }
                    c.read += n as u64;
                    self.total_read += n as u64;
                    if !c.header_done {
                        let before = c.header.len();
                        let take = n.min(MAX_HEADER + 4 - before);
                        c.header.extend_from_slice(&self.scratch[..take]);
                        let from = before.saturating_sub(3);
                        match find(&c.header[from..], b"\r\n\r\n") {
                            Some(p) => {
                                let end = from + p + 4;
                                let body_here = (before + n - end) as u64;
                                c.header.truncate(end);
                                if !self.parse_header(c) {
                                    return self.fail(c, Fail::Exception);
                                }
                                c.header_done = true;
                                c.body += body_here;
                            }
                            None if c.header.len() > MAX_HEADER => {
                                return self.fail(c, Fail::Exception);
                            }
                            None => {}
                        }
                    } else {
                        c.body += n as u64;
                    }
                    if self.keep_alive && c.header_done && c.server_keep_alive {
                        if let Some(cl) = c.content_length {
                            if c.body >= cl {
                                c.body = cl;
                                return self.complete(poll, c, i, true);
                            }
                        }
                    }
                    if n < self.scratch.len() && !read_closed {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    if c.keptalive && c.read == 0 {
                        self.started -= 1;
                        return self.start_connection(poll, c, i);
                    }
                    return self.fail(c, Fail::Receive);
                }
            }
        }
    }

    fn on_eof(&mut self, poll: &mut Poll, c: &mut Client, i: usize) {
        if c.keptalive && c.read == 0 {
            // The server closed an idle kept-alive connection: retry, not an error.
            self.started -= 1;
            return self.start_connection(poll, c, i);
        }
        if !c.header_done {
            return self.fail(c, Fail::Receive);
        }
        self.complete(poll, c, i, false);
    }

    /// Parses the status line and the headers ab looks at. False if it is not HTTP.
    fn parse_header(&mut self, c: &mut Client) -> bool {
        let Ok(text) = std::str::from_utf8(&c.header) else { return false };
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        let mut parts = status_line.splitn(3, ' ');
        let (Some(version), Some(code)) = (parts.next(), parts.next()) else { return false };
        if !version.starts_with("HTTP/") {
            return false;
        }
        let Ok(code) = code.parse::<u16>() else { return false };
        c.status = code;
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                c.content_length = value.parse().ok();
            } else if name.eq_ignore_ascii_case("connection") {
                c.server_keep_alive =
                    value.split(',').any(|t| t.trim().eq_ignore_ascii_case("keep-alive"));
            } else if name.eq_ignore_ascii_case("server") && self.server_software.is_none() {
                self.server_software = Some(value.to_string());
            }
        }
        true
    }

    fn complete(&mut self, poll: &mut Poll, c: &mut Client, i: usize, reuse: bool) {
        let done = Instant::now();
        self.last_done = Some(done);
        self.finished += 1;
        if c.keptalive {
            self.keep_alive_requests += 1;
        }
        self.body_read += c.body;
        if !(200..300).contains(&c.status) {
            self.non_2xx += 1;
        }
        match self.doclen {
            None => self.doclen = Some(c.body),
            Some(d) if d != c.body => self.failed.length += 1,
            Some(_) => {}
        }
        let ctime = micros(c.connect.duration_since(c.start));
        let time = micros(done.duration_since(c.start));
        let wait = c.beginread.map_or(0, |b| micros(b.saturating_duration_since(c.endwrite)));
        self.samples.push(Sample { ctime, time, wait });
        if reuse && self.started < self.requests {
            self.started += 1;
            Self::reset(c);
            c.keptalive = true;
            c.start = done;
            c.connect = done; // zero connect time with keep-alive, as ab
            c.phase = Phase::Writing;
            return self.write_request(poll, c, i);
        }
        self.start_connection(poll, c, i);
    }

    fn report(&self, config: &LoadConfig, taken: Duration, deadline_exceeded: bool) -> LoadReport {
        let secs = taken.as_secs_f64();
        let done = self.samples.len() as u64;
        let per = |num: f64| if done > 0 && secs > 0.0 { num } else { 0.0 };
        let col = |f: fn(&Sample) -> u64| time_stats(self.samples.iter().map(f).collect());
        let mut totals: Vec<u64> = self.samples.iter().map(|s| s.time).collect();
        totals.sort_unstable();
        let percentiles = if totals.is_empty() {
            Vec::new()
        } else {
            PERCENTS
                .iter()
                .map(|&p| {
                    let idx = if p >= 100 {
                        totals.len() - 1
                    } else {
                        (totals.len() * p as usize / 100).min(totals.len() - 1)
                    };
                    Percentile { percent: p, ms: totals[idx] as f64 / 1000.0 }
                })
                .collect()
        };
        LoadReport {
            server_software: self.server_software.clone().unwrap_or_default(),
            server_hostname: self.addr.ip().to_string(),
            server_port: self.addr.port(),
            document_path: config.path.clone(),
            document_length: self.doclen.unwrap_or(0),
            concurrency: config.concurrency,
            keep_alive: config.keep_alive,
            requests: config.requests,
            time_taken_s: secs,
            complete_requests: done,
            failed_requests: self.failed.total(),
            failed: self.failed.clone(),
            write_errors: self.write_errors,
            non_2xx_responses: self.non_2xx,
            keep_alive_requests: self.keep_alive_requests,
            total_transferred: self.total_read,
            html_transferred: self.body_read,
            requests_per_second: per(done as f64 / secs),
            time_per_request_ms: per(config.concurrency as f64 * secs * 1000.0 / done as f64),
            time_per_request_all_ms: per(secs * 1000.0 / done as f64),
            transfer_rate_kbytes_s: per(self.total_read as f64 / 1024.0 / secs),
            connection_times: ConnectionTimes {
                connect: col(|s| s.ctime),
                processing: col(|s| s.time - s.ctime),
                waiting: col(|s| s.wait),
                total: col(|s| s.time),
            },
            percentiles,
            deadline_exceeded,
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// min / mean / sample sd / median / max of µs values, in ms.
fn time_stats(mut v: Vec<u64>) -> TimeStats {
    if v.is_empty() {
        return TimeStats::default();
    }
    v.sort_unstable();
    let n = v.len();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let median = if n % 2 == 0 { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 } else { v[n / 2] as f64 };
    TimeStats {
        min_ms: v[0] as f64 / 1000.0,
        mean_ms: mean / 1000.0,
        sd_ms: var.sqrt() / 1000.0,
        median_ms: median / 1000.0,
        max_ms: v[n - 1] as f64 / 1000.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_stats_and_rendering_follow_ab() {
        let t = time_stats(vec![1000, 2000, 3000, 10_000]);
        assert_eq!((t.min_ms, t.median_ms, t.max_ms), (1.0, 2.5, 10.0));
        assert!((t.mean_ms - 4.0).abs() < 1e-9);
        assert!((t.sd_ms - 4.0825).abs() < 1e-3, "{}", t.sd_ms);
        let odd = time_stats(vec![5, 1, 3]);
        assert_eq!(odd.median_ms, 0.003);

        let row = TimeStats { min_ms: 0.2, mean_ms: 1.4, sd_ms: 0.4, median_ms: 1.0, max_ms: 9.3 };
        let report = LoadReport {
            server_software: "ReactiveJ/0.1".into(),
            server_hostname: "127.0.0.1".into(),
            server_port: 8888,
            document_path: "/".into(),
            document_length: 1028,
            concurrency: 25,
            keep_alive: false,
            requests: 10_000,
            time_taken_s: 1.195,
            complete_requests: 10_000,
            failed_requests: 0,
            failed: FailedRequests::default(),
            write_errors: 0,
            non_2xx_responses: 0,
            keep_alive_requests: 0,
            total_transferred: 11_811_181,
            html_transferred: 10_281_028,
            requests_per_second: 8371.12,
            time_per_request_ms: 2.986,
            time_per_request_all_ms: 0.119,
            transfer_rate_kbytes_s: 9655.55,
            connection_times: ConnectionTimes {
                connect: row.clone(),
                processing: row.clone(),
                waiting: row.clone(),
                total: row,
            },
            percentiles: vec![
                Percentile { percent: 50, ms: 3.0 },
                Percentile { percent: 100, ms: 12.0 },
            ],
            deadline_exceeded: false,
        };
        let text = report.render_ab_style();
        for line in [
            "Server Software:        ReactiveJ/0.1\n",
            "Document Length:        1028 bytes\n",
            "Time taken for tests:   1.195 seconds\n",
            "Failed requests:        0\n",
            "Requests per second:    8371.12 [#/sec] (mean)\n",
            "Time per request:       0.119 [ms] (mean, across all concurrent requests)\n",
            "Transfer rate:          9655.55 [Kbytes/sec] received\n",
            "              min  mean[+/-sd] median   max\n",
            "Connect:        0    1   0.4      1       9\n",
            "  50%      3\n",
            " 100%     12 (longest request)\n",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains("Non-2xx"));
        assert_eq!(report.percentile_ms(100), Some(12.0));
    }

    #[test]
    fn bad_configurations_are_refused_with_the_choices() {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let cases = [
            (LoadConfig { requests: 0, ..LoadConfig::default() }, "requests = 0"),
            (LoadConfig { concurrency: 0, ..LoadConfig::default() }, "concurrency = 0"),
            (LoadConfig { requests: 5, concurrency: 6, ..LoadConfig::default() }, "min(requests"),
            (LoadConfig { timeout: Duration::ZERO, ..LoadConfig::default() }, "timeout"),
            (LoadConfig { path: "x y".into(), ..LoadConfig::default() }, "path"),
        ];
        for (cfg, needle) in cases {
            let e = run(addr, &cfg).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        let e = run("10.1.2.3:80".parse().unwrap(), &LoadConfig::default()).unwrap_err();
        assert!(e.to_string().contains("not a loopback"), "{e}");
    }
}
