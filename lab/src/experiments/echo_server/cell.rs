//! `echo-server`'s cell: what a fork is told, what it measures and returns (the load
//! generator's and ab's figures, the server's counters), and the fork itself: the server
//! started with its handoff, the warm-up and measured runs, each checked.

use super::{jvm, PREFETCH, RING_SIZE};
use crate::experiment::{Measured, Outcome};
use crate::measure::variants::{self, Settings, WithHandoff};
use crate::protocol::{Ctx, Pass};
use echo_server::loadgen::{self, LoadConfig, LoadReport};
use echo_server::{external, http, ServerConfig, ServerHandle, ServerStats};
use handoff::Handoff;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// What a fork is told: one server and the load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoCell {
    /// `inline`, a handoff variant, or `nginx`.
    pub server: String,
    /// The port in timed forks (0: ephemeral).
    pub port: u16,
    /// Requests per run.
    pub requests: u64,
    /// Requests in flight.
    pub concurrency: usize,
    /// Reuse connections.
    pub keep_alive: bool,
    /// Run ab after each run.
    pub ab: bool,
    /// Workers behind the handoff.
    pub workers: usize,
    /// The ring's wait strategy, one of the names below.
    pub wait: String,
    /// Warm-up runs per fork.
    pub warmup: usize,
    /// Measured runs per fork.
    pub runs: usize,
    /// A JVM server's class path, flags and fault (`None` for the others).
    #[serde(default)]
    pub jvm: Option<jvm::JvmCell>,
}

/// min / mean / sd / median / max of one phase, ms (ab's "Connection Times").
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Times {
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

/// ab's four phases.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConnectionTimes {
    /// connect − start.
    pub connect: Times,
    /// done − connect.
    pub processing: Times,
    /// first byte read − request written.
    pub waiting: Times,
    /// done − start.
    pub total: Times,
}

/// Failed requests by cause.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Failed {
    /// Connect failures.
    pub connect: u64,
    /// Read failures, or closed before a complete header.
    pub receive: u64,
    /// Body length differs from the first response's.
    pub length: u64,
    /// Error events, non-HTTP responses, write failures.
    pub exceptions: u64,
    /// Not finished when the load generator's deadline passed.
    pub unfinished: u64,
}

/// One line of the percentage table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Percentile {
    /// 50, 66, …, 100.
    pub percent: u32,
    /// Total time of that request, ms.
    pub ms: f64,
}

/// The load generator's report of one run (ab's figures).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Load {
    /// The `Server` header of the first response.
    pub server_software: String,
    /// Body length of the first complete response.
    pub document_length: u64,
    /// `-c`.
    pub concurrency: usize,
    /// `-n`.
    pub requests: u64,
    /// From the first connect to the last completion, s.
    pub time_taken_s: f64,
    /// Requests read to their end.
    pub complete_requests: u64,
    /// All failures.
    pub failed_requests: u64,
    /// Failures by cause.
    pub failed: Failed,
    /// Request writes that failed.
    pub write_errors: u64,
    /// Complete responses outside 200–299.
    pub non_2xx_responses: u64,
    /// Requests that reused a connection.
    pub keep_alive_requests: u64,
    /// complete / time taken.
    pub requests_per_second: f64,
    /// concurrency × time taken / complete, ms.
    pub time_per_request_ms: f64,
    /// time taken / complete, ms.
    pub time_per_request_all_ms: f64,
    /// KB read per second.
    pub transfer_rate_kbytes_s: f64,
    /// Connection times.
    pub connection_times: ConnectionTimes,
    /// The percentage table.
    pub percentiles: Vec<Percentile>,
}

fn times(t: &loadgen::TimeStats) -> Times {
    Times {
        min_ms: t.min_ms,
        mean_ms: t.mean_ms,
        sd_ms: t.sd_ms,
        median_ms: t.median_ms,
        max_ms: t.max_ms,
    }
}

impl From<&LoadReport> for Load {
    fn from(r: &LoadReport) -> Load {
        let c = &r.connection_times;
        Load {
            server_software: r.server_software.clone(),
            document_length: r.document_length,
            concurrency: r.concurrency,
            requests: r.requests,
            time_taken_s: r.time_taken_s,
            complete_requests: r.complete_requests,
            failed_requests: r.failed_requests,
            failed: Failed {
                connect: r.failed.connect,
                receive: r.failed.receive,
                length: r.failed.length,
                exceptions: r.failed.exceptions,
                unfinished: r.failed.unfinished,
            },
            write_errors: r.write_errors,
            non_2xx_responses: r.non_2xx_responses,
            keep_alive_requests: r.keep_alive_requests,
            requests_per_second: r.requests_per_second,
            time_per_request_ms: r.time_per_request_ms,
            time_per_request_all_ms: r.time_per_request_all_ms,
            transfer_rate_kbytes_s: r.transfer_rate_kbytes_s,
            connection_times: ConnectionTimes {
                connect: times(&c.connect),
                processing: times(&c.processing),
                waiting: times(&c.waiting),
                total: times(&c.total),
            },
            percentiles: r
                .percentiles
                .iter()
                .map(|p| Percentile { percent: p.percent, ms: p.ms })
                .collect(),
        }
    }
}

/// The real ab's figures of one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ab {
    /// `Document Length:`.
    pub document_length: u64,
    /// `Complete requests:`.
    pub complete_requests: u64,
    /// `Failed requests:`.
    pub failed_requests: u64,
    /// `Non-2xx responses:`.
    pub non_2xx_responses: u64,
    /// `Requests per second:`.
    pub requests_per_second: f64,
    /// The 50% line, ms.
    pub p50_ms: u64,
    /// The 99% line, ms.
    pub p99_ms: u64,
    /// The longest request, ms.
    pub max_ms: u64,
}

impl From<&external::AbSummary> for Ab {
    fn from(a: &external::AbSummary) -> Ab {
        Ab {
            document_length: a.document_length,
            complete_requests: a.complete_requests,
            failed_requests: a.failed_requests,
            non_2xx_responses: a.non_2xx_responses,
            requests_per_second: a.requests_per_second,
            p50_ms: a.p50_ms,
            p99_ms: a.p99_ms,
            max_ms: a.max_ms,
        }
    }
}

/// What the echo server did over a fork (all its runs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Server {
    /// `200` responses written completely.
    pub requests_served: u64,
    /// `400` responses.
    pub bad_requests: u64,
    /// Connection errors.
    pub errors: u64,
    /// Passes of the event loop.
    pub event_loop_iterations: u64,
    /// Connections accepted.
    pub connections_accepted: u64,
    /// Writes that stopped with part of a response unsent.
    pub partial_writes: u64,
    /// Requests the workers handled (0 inline).
    pub worker_handled: u64,
    /// Why the event loop stopped, when not on shutdown.
    pub fatal: Option<String>,
    /// Fields above this server does not count (Netty: event-loop passes, partial writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_counted: Vec<String>,
    /// CPU time of the server's own threads (`echo-*`: the event loop and workers, the
    /// Java selector, Netty's boss and worker) over the whole fork, ms (schedstat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_ms: Option<f64>,
}

impl From<ServerStats> for Server {
    fn from(s: ServerStats) -> Server {
        Server {
            requests_served: s.requests_served,
            bad_requests: s.bad_requests,
            errors: s.errors,
            event_loop_iterations: s.event_loop_iterations,
            connections_accepted: s.connections_accepted,
            partial_writes: s.partial_writes,
            worker_handled: s.worker_handled,
            fatal: s.fatal,
            not_counted: Vec::new(),
            server_cpu_ms: None,
        }
    }
}

/// One run: the load generator's report, ab's when on, and its checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoRun {
    /// The load generator's figures.
    pub load: Load,
    /// The same report laid out as ab prints it.
    pub ab_style: String,
    /// The real ab's figures, when it ran.
    pub ab: Option<Ab>,
    /// Every check passed.
    pub valid: bool,
    /// "ok" or the first failed check.
    pub verdict: String,
}

/// What a fork returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoOutcome {
    /// Warm-up runs (discarded, but checked).
    pub warmup: Vec<EchoRun>,
    /// Measured runs.
    pub runs: Vec<EchoRun>,
    /// The echo server's account (none for nginx).
    pub server: Option<Server>,
    /// A JVM server's JVM account (flags, collector, GC and counters per measured run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<jvm::JvmAccount>,
}

impl EchoRun {
    /// The run as the runner sees it: its figure and its check.
    fn check(&self) -> Measured {
        Measured {
            value: self.load.requests_per_second,
            valid: self.valid,
            verdict: self.verdict.clone(),
        }
    }
}

impl Outcome for EchoOutcome {
    /// Requests/s of the load generator, per measured run.
    fn measured(&self) -> Vec<Measured> {
        self.runs.iter().map(EchoRun::check).collect()
    }

    fn warmups(&self) -> Vec<Measured> {
        self.warmup.iter().map(EchoRun::check).collect()
    }

    /// A failed run's check, else an event loop that stopped on an error.
    fn failure(&self) -> Option<String> {
        let run = self.warmups().into_iter().chain(self.measured()).find(|m| !m.valid);
        run.map(|m| m.verdict).or_else(|| {
            let fatal = self.server.as_ref()?.fatal.as_ref()?;
            Some(format!("the event loop stopped on an error: {fatal}"))
        })
    }
}

/// The checks every run must pass before its requests/s is used.
fn check(load: &Load, ab: Option<&Ab>, requests: u64) -> Result<(), String> {
    let doc = http::document().len() as u64;
    let f = &load.failed;
    if load.failed_requests > 0 {
        return Err(format!(
            "{} failed requests (load generator: connect {}, receive {}, length {}, \
             exceptions {}, unfinished {})",
            load.failed_requests, f.connect, f.receive, f.length, f.exceptions, f.unfinished
        ));
    }
    if load.complete_requests != requests {
        return Err(format!("{} of {requests} requests completed", load.complete_requests));
    }
    if load.document_length != doc {
        return Err(format!("document of {} bytes, not {doc}", load.document_length));
    }
    if load.non_2xx_responses > 0 {
        return Err(format!("{} non-2xx responses (load generator)", load.non_2xx_responses));
    }
    if let Some(a) = ab {
        if a.failed_requests > 0 || a.non_2xx_responses > 0 {
            return Err(format!(
                "ab: {} failed requests, {} non-2xx responses",
                a.failed_requests, a.non_2xx_responses
            ));
        }
        if a.complete_requests != requests || a.document_length != doc {
            return Err(format!(
                "ab: {} of {requests} requests completed, document of {} bytes (not {doc})",
                a.complete_requests, a.document_length
            ));
        }
    }
    Ok(())
}

struct Start(ServerConfig);

impl WithHandoff for Start {
    type Out = Result<ServerHandle, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        echo_server::start(h, self.0).map_err(|e| e.to_string())
    }
}

/// A running server of a fork. Dropping any stops it.
enum Running {
    Echo(ServerHandle),
    Nginx(external::Nginx),
    Jvm(Box<jvm::JvmServer>),
}

impl Running {
    fn start(cell: &EchoCell, port: u16, timed: bool) -> Result<Running, String> {
        if cell.server == "nginx" {
            let ng = external::Nginx::start(port, http::document()).map_err(|e| e.to_string())?;
            return Ok(Running::Nginx(ng));
        }
        if let Some(j) = &cell.jvm {
            return Ok(Running::Jvm(Box::new(jvm::JvmServer::start(j, port, timed)?)));
        }
        let mut cfg = ServerConfig::on(SocketAddr::from(([127, 0, 0, 1], port)));
        cfg.workers = cell.workers;
        let handle = if cell.server == "inline" {
            echo_server::start_inline(cfg).map_err(|e| e.to_string())?
        } else {
            let s = Settings {
                variant: cell.server.clone(),
                wait: Some(cell.wait.clone()),
                ring_size: RING_SIZE,
                capacity: None,
                prefetch: PREFETCH,
            };
            variants::dispatch(&s, Start(cfg))??
        };
        Ok(Running::Echo(handle))
    }

    fn addr(&self) -> SocketAddr {
        match self {
            Running::Echo(h) => h.addr(),
            Running::Nginx(n) => n.addr(),
            Running::Jvm(j) => j.addr(),
        }
    }

    /// Marks a run's start or end to a JVM server (its counters and GC account); nothing
    /// for the others.
    fn mark(&mut self, start: bool, run: usize, phase: &str) -> Result<(), String> {
        match self {
            Running::Jvm(j) => j.mark(start, run, phase),
            _ => Ok(()),
        }
    }

    /// Stops it: the echo server's account (none for nginx) and a JVM server's JVM account.
    /// `requests`, `measured`, `all`: per run, measured runs, all runs.
    fn stop(
        self,
        requests: u64,
        measured: usize,
        all: usize,
    ) -> Result<(Option<Server>, Option<jvm::JvmAccount>), String> {
        match self {
            Running::Echo(h) => {
                let cpu = jvm::server_threads_cpu_ms(std::process::id());
                let mut s: Server = h.shutdown().into();
                s.server_cpu_ms = cpu.map(|c| c.0);
                Ok((Some(s), None))
            }
            Running::Nginx(n) => n.stop().map(|()| (None, None)).map_err(|e| e.to_string()),
            Running::Jvm(j) => {
                let cpu = jvm::server_threads_cpu_ms(j.pid());
                let (mut s, account) = j.stop(requests, measured, all)?;
                s.server_cpu_ms = cpu.map(|c| c.0);
                Ok((Some(s), Some(account)))
            }
        }
    }
}

/// Run `i` against the server: the load generator between the run's marks, then ab when
/// asked; a heartbeat after each.
fn one_run(
    server: &mut Running,
    (i, phase): (usize, &str),
    load: &LoadConfig,
    with_ab: bool,
    ctx: &mut Ctx,
) -> Result<EchoRun, String> {
    let addr = server.addr();
    server.mark(true, i, phase)?;
    let r = loadgen::run(addr, load).map_err(|e| format!("load generator: {e}"))?;
    server.mark(false, i, phase)?;
    ctx.heartbeat();
    let ab = if with_ab {
        let a = external::run_ab(addr, load.requests, load.concurrency, load.keep_alive)
            .map_err(|e| e.to_string())?;
        ctx.heartbeat();
        Some(Ab::from(&a))
    } else {
        None
    };
    let l = Load::from(&r);
    let checked = check(&l, ab.as_ref(), load.requests);
    Ok(EchoRun {
        load: l,
        ab_style: r.render_ab_style(),
        ab,
        valid: checked.is_ok(),
        verdict: checked.err().unwrap_or_else(|| "ok".into()),
    })
}

pub(super) fn run_fork(cell: &EchoCell, ctx: &mut Ctx) -> Result<EchoOutcome, String> {
    // The untimed passes make one run each, without ab (a program outside the profile and
    // the recorder), and on an ephemeral port: the heap passes run two at a time, so a
    // fixed port would collide.
    let timed = ctx.pass == Pass::Timed;
    let (warmup, runs, with_ab, port) =
        if timed { (cell.warmup, cell.runs, cell.ab, cell.port) } else { (0, 1, false, 0) };
    let load = LoadConfig {
        requests: cell.requests,
        concurrency: cell.concurrency,
        keep_alive: cell.keep_alive,
        ..LoadConfig::default()
    };
    let mut server = Running::start(cell, port, timed)?;
    let mut out = EchoOutcome { warmup: Vec::new(), runs: Vec::new(), server: None, jvm: None };
    for i in 0..warmup + runs {
        // On an error the server is dropped, which stops it.
        let phase = if i < warmup { "warmup" } else { "measured" };
        let run = one_run(&mut server, (i, phase), &load, with_ab, ctx)?;
        if i < warmup {
            out.warmup.push(run);
        } else {
            out.runs.push(run);
        }
    }
    (out.server, out.jvm) = server.stop(cell.requests, runs, warmup + runs)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good(requests: u64) -> Load {
        Load {
            document_length: http::document().len() as u64,
            requests,
            complete_requests: requests,
            ..Load::default()
        }
    }

    #[test]
    fn a_clean_run_passes_its_checks() {
        let ab = Ab {
            document_length: http::document().len() as u64,
            complete_requests: 100,
            ..Ab::default()
        };
        assert_eq!(check(&good(100), Some(&ab), 100), Ok(()));
    }

    #[test]
    fn failed_short_wrong_or_non_2xx_runs_are_invalid() {
        let mut l = good(100);
        l.failed_requests = 1;
        l.failed.unfinished = 1;
        assert!(check(&l, None, 100).unwrap_err().contains("unfinished 1"));
        let mut l = good(100);
        l.complete_requests = 99;
        assert!(check(&l, None, 100).unwrap_err().contains("99 of 100"));
        let mut l = good(100);
        l.document_length = 12;
        assert!(check(&l, None, 100).unwrap_err().contains("12 bytes"));
        let mut l = good(100);
        l.non_2xx_responses = 3;
        assert!(check(&l, None, 100).unwrap_err().contains("non-2xx"));
        let ab = Ab { non_2xx_responses: 1, ..Ab::default() };
        assert!(check(&good(100), Some(&ab), 100).unwrap_err().starts_with("ab:"));
    }

    #[test]
    fn an_invalid_warm_up_or_a_fatal_event_loop_fails_the_fork() {
        let run = |valid: bool| EchoRun {
            load: good(10),
            ab_style: String::new(),
            ab: None,
            valid,
            verdict: if valid { "ok".into() } else { "bad warm-up".into() },
        };
        let o = EchoOutcome {
            warmup: vec![run(false)],
            runs: vec![run(true)],
            server: None,
            jvm: None,
        };
        assert_eq!(o.failure().as_deref(), Some("bad warm-up"));
        let fatal = Server { fatal: Some("poll failed".into()), ..Server::default() };
        let o =
            EchoOutcome { warmup: vec![], runs: vec![run(true)], server: Some(fatal), jvm: None };
        assert!(o.failure().unwrap().contains("poll failed"));
    }
}
