//! `echo-server`: seed 003 (the ReactiveJ echo server under `ab -n 10000 -c 25`), once per
//! handoff variant, side by side in one run.
//!
//! Each cell is one server: the echo server of `crates/echo-server` with one variant behind
//! its event loop (`inline`: no handoff, the event loop answers itself), or `nginx` (one
//! worker, the same 1028-byte document) as the reference. A fork starts the server on
//! 127.0.0.1, runs the crate's ab-style load generator against it (on its own thread: client
//! and server share the fork's process, as ab and ReactiveJ shared the seed's machine) for
//! each warm-up and measured run, and with `--ab` the real `ab` after each run, then stops
//! the server. The score of a run is the load generator's requests/s.
//!
//! `ab` and nginx are grandchildren of the runner: the fork starts them, and they stay in
//! its process group, so the runner's watchdog and Ctrl-C kill them with it.
//!
//! Rounds (`--rounds`) interleave the servers; ratios against the baseline (`inline` by
//! default) and against nginx are paired within rounds. A run with a failed request, a
//! short count, a document of the wrong length or a non-2xx response (load generator or
//! ab) is INVALID, and so is a fork whose event loop stopped on an error. The trace pass
//! (the crate's `event_loop`, `wait`, `handle` spans and `connections` counter) and the heap
//! pass run once per echo-server cell, untimed; nginx has neither (another program).

mod analyse;
mod cell;
mod detail;
pub mod jvm;
mod why;

pub use cell::{Ab, EchoCell, EchoOutcome, EchoRun, Load, Server};

use crate::experiment::Finished;
use crate::experiment::{size, CellPlan, Defaults, Experiment, Plan, Shared, Switch, TraceMode};
use crate::measure::variants;
use crate::protocol::Ctx;
use crate::results::Results;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use echo_server::{external, http};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::TcpListener;

/// The seed's figure: ReactiveJ under `ab -n 10000 -c 25`, requests/s.
pub const SEED_RPS: f64 = 8371.12;

/// The ring's size and the reactive pipeline's prefetch behind the event loop.
const RING_SIZE: usize = 1024;
const PREFETCH: usize = 256;

/// The experiment.
#[derive(Debug)]
pub struct EchoServer;

/// `--ab`, `--nginx`: whether to measure with / against an outside program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Peer {
    /// When it is installed.
    Auto,
    /// Yes (an error when it is not installed).
    On,
    /// No.
    Off,
}

/// The servers `--variants` may name: `inline`, every variant that runs through a handoff
/// (the JVM handoff originals do not: they are whole programs, not a handoff behind the
/// event loop), and the JVM servers (`java-nio`, `netty`; their planted faults with
/// LAB_FAULTS=1).
fn server_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = std::iter::once("inline")
        .chain(variants::handoffs().into_iter().map(|v| v.name))
        .chain(jvm::SERVERS.iter().map(|s| s.0))
        .collect();
    if crate::measure::faults::enabled() {
        v.extend(["fault-java-nio", "fault-netty"]);
    }
    v
}

/// The servers measured when `--variants` is not given: these, then the JVM servers that
/// can run here.
pub const DEFAULT_SERVERS: [&str; 5] = ["inline", "locked", "ring", "reactive", "naive"];

fn gc_names() -> PossibleValuesParser {
    PossibleValuesParser::new(crate::measure::jvm::GCS.iter().map(|g| g.0))
}

/// One name of `--variants`: its error names every valid one on one line.
#[derive(Debug, Clone, Copy)]
struct ServerName;

impl TypedValueParser for ServerName {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let s = value.to_string_lossy();
        let names = server_names();
        if names.contains(&s.as_ref()) {
            return Ok(s.into_owned());
        }
        Err(clap::Error::raw(
            clap::error::ErrorKind::InvalidValue,
            format!("unknown variant '{s}'; valid: {}\n", names.join(", ")),
        ))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(server_names().into_iter().map(PossibleValue::new)))
    }
}

fn wait_names() -> PossibleValuesParser {
    PossibleValuesParser::new(variants::WAITS.iter().map(|w| w.0))
}

/// Its options.
#[derive(Args, Debug, Clone, Serialize)]
pub struct EchoArgs {
    /// Servers, a comma list of the names below: `inline` (the event loop answers, no
    /// handoff), a handoff variant behind the event loop, or a JVM server (`java-nio`: one
    /// Java NIO Selector thread, seed 003's reactor; `netty`: Netty 4.2, one worker event
    /// loop; each needs a JDK and Maven to build tools/jvm); fault-* are
    /// planted faults for tests, offered with LAB_FAULTS=1 [default:
    /// inline,locked,ring,reactive,naive, then java-nio and netty where they can run]
    #[arg(long, value_delimiter = ',', value_parser = ServerName)]
    pub variants: Option<Vec<String>>,
    /// Requests per run, a count (ab's -n).
    #[arg(short = 'n', long, value_parser = size, default_value = "10000")]
    pub requests: u64,
    /// Requests in flight, a count (ab's -c).
    #[arg(short = 'c', long, value_parser = size, default_value = "25")]
    pub concurrency: u64,
    /// Reuse connections (ab's -k).
    #[arg(long)]
    pub keep_alive: bool,
    /// Also run the real ab after each run, against the same server.
    #[arg(long, value_enum, default_value_t = Peer::Auto)]
    pub ab: Peer,
    /// Measure nginx (one worker, the same document) as the reference.
    #[arg(long, value_enum, default_value_t = Peer::Auto)]
    pub nginx: Peer,
    /// The port the echo server listens on in timed forks (127.0.0.1); 0: an ephemeral port.
    #[arg(long, default_value = "0")]
    pub port: u16,
    /// Worker threads behind the handoff, a count.
    #[arg(long, value_parser = size, default_value = "1")]
    pub workers: u64,
    /// The ring's wait strategy, one of the names below.
    #[arg(long, value_parser = wait_names(), default_value = "blocking")]
    pub wait: String,
    /// The server the row ratios are taken against, one of --variants (or nginx) [default:
    /// inline, or the first server].
    #[arg(long)]
    pub baseline: Option<String>,
    /// The JVM servers' collector setting (each with its flags; tools/jvm/README.md), the
    /// heap fixed at 256 MiB.
    #[arg(long, value_parser = gc_names(), default_value = crate::measure::jvm::DEFAULT_GC)]
    pub jvm_gc: String,
    /// More JVM flags for the JVM servers, after the collector's (one string; a collector
    /// flag is refused: choose it with --jvm-gc).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub jvm_flags: String,
}

fn peer_switch(what: &str, p: Peer, installed: bool) -> Result<(bool, String), String> {
    match p {
        Peer::On if !installed => Err(format!("--{what} on: {what} is not installed")),
        Peer::On => Ok((true, format!("{what}: on (asked)"))),
        Peer::Off => Ok((false, format!("{what}: off (asked)"))),
        Peer::Auto if installed => Ok((true, format!("{what}: on (installed, auto)"))),
        Peer::Auto => Ok((false, format!("{what} not installed: not measured"))),
    }
}

fn check_args(a: &EchoArgs) -> Result<(), String> {
    crate::units::at_least_one(&[
        (a.requests, "--requests"),
        (a.concurrency, "--concurrency"),
        (a.workers, "--workers"),
    ])?;
    if a.concurrency > a.requests {
        return Err(format!(
            "--concurrency {} is more than --requests {} (ab refuses this too)",
            a.concurrency, a.requests
        ));
    }
    for v in a.variants.iter().flatten() {
        if let Some(why) = variants::find(v).and_then(|i| i.unavailable) {
            return Err(format!("variant '{v}' is unavailable in this build: {why}"));
        }
    }
    if let Some(why) = crate::measure::jvm::check_extra_flags(&a.jvm_flags) {
        return Err(why);
    }
    if a.port != 0 {
        if let Err(e) = TcpListener::bind(("127.0.0.1", a.port)) {
            return Err(format!(
                "port {} on 127.0.0.1 is not free ({e}); choose another or --port 0",
                a.port
            ));
        }
    }
    Ok(())
}

/// The servers of a run and a note for each JVM server the defaults leave out or take:
/// `--variants` as given (a JVM server that cannot run here is an error naming the install
/// command), or [`DEFAULT_SERVERS`] and the JVM servers that can run here. `unavailable`
/// says why a JVM server cannot run ([`jvm::unavailable`]).
fn chosen_servers(
    variants: Option<&[String]>,
    unavailable: impl Fn(&str) -> Option<String>,
) -> Result<(Vec<String>, Vec<String>), String> {
    let mut servers: Vec<String> = Vec::new();
    let mut notes = Vec::new();
    match variants {
        Some(v) => {
            for name in v {
                if let Some(why) = jvm::is_jvm(name).then(|| unavailable(name)).flatten() {
                    return Err(format!("variant '{name}' cannot run here: {why}"));
                }
                if !servers.contains(name) {
                    servers.push(name.clone());
                }
            }
        }
        None => {
            servers.extend(DEFAULT_SERVERS.map(String::from));
            for (name, _, _) in jvm::SERVERS {
                match unavailable(name) {
                    None => {
                        servers.push(name.into());
                        notes.push(format!("{name}: on (it can run here; default)"));
                    }
                    Some(why) => notes.push(format!("{name} not measured (default): {why}")),
                }
            }
        }
    }
    Ok((servers, notes))
}

/// An `echo-server` row's key: the dimensions that name its cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EchoKey {
    /// The server.
    pub server: String,
    /// Requests per run.
    pub requests: u64,
    /// Concurrent connections.
    pub concurrency: u64,
    /// Whether connections are kept alive.
    pub keep_alive: bool,
}

impl Experiment for EchoServer {
    const NAME: &'static str = "echo-server";
    const ABOUT: &'static str = "seed 003 (the ReactiveJ echo server under ab -n 10000 -c 25): \
        the echo server per handoff variant (inline, locked, ring, reactive, naive), the JVM \
        servers (java-nio: one NIO Selector thread; netty) and nginx under an ab-style load, requests/s with paired ratios, connection times, percentiles";
    // One warm-up run per fork (a fresh server's first connections), eight rounds: enough
    // forks for a 99% interval of every row and ratio.
    const DEFAULTS: Defaults = Defaults {
        rounds: 8,
        runs: 1,
        warmup: 1,
        trace: &[TraceMode::Flight, TraceMode::Full, TraceMode::Off],
        heap: Some(Switch::On),
    };
    type Args = EchoArgs;
    type Cell = EchoCell;
    type Outcome = EchoOutcome;
    type Key = EchoKey;
    type Detail = detail::EchoDetail;

    fn plan(a: &EchoArgs, shared: &Shared) -> Result<Plan<EchoCell>, String> {
        check_args(a)?;
        let (with_ab, ab_note) = peer_switch("ab", a.ab, external::ab_available())?;
        let (with_nginx, nginx_note) = peer_switch("nginx", a.nginx, external::nginx_available())?;
        let (mut servers, jvm_notes) = chosen_servers(a.variants.as_deref(), jvm::unavailable)?;
        let mut jvm_cells = std::collections::BTreeMap::new();
        for s in servers.iter().filter(|s| jvm::is_jvm(s)) {
            jvm_cells.insert(s.clone(), jvm::cell(s, &a.jvm_gc, &a.jvm_flags)?);
        }
        if with_nginx {
            servers.push("nginx".into());
        }
        let baseline = match &a.baseline {
            Some(b) if servers.contains(b) => b.clone(),
            Some(b) => {
                return Err(format!(
                    "--baseline '{b}' is not a row of this run; valid: {}",
                    servers.join(", ")
                ))
            }
            None if servers.iter().any(|s| s == "inline") => "inline".into(),
            None => servers[0].clone(),
        };
        let group = format!(
            "-n {} -c {}{}",
            a.requests,
            a.concurrency,
            if a.keep_alive { " -k" } else { "" }
        );
        let cells = servers
            .iter()
            .map(|s| {
                let nginx = s == "nginx";
                let cell = EchoCell {
                    server: s.clone(),
                    port: if nginx { 0 } else { a.port },
                    requests: a.requests,
                    concurrency: a.concurrency as usize,
                    keep_alive: a.keep_alive,
                    ab: with_ab,
                    workers: a.workers as usize,
                    wait: a.wait.clone(),
                    warmup: shared.warmup as usize,
                    runs: shared.runs as usize,
                    jvm: jvm_cells.get(s).cloned(),
                };
                let key = EchoKey {
                    server: s.clone(),
                    requests: a.requests,
                    concurrency: a.concurrency,
                    keep_alive: a.keep_alive,
                };
                let mut c = CellPlan::new(cell, s.as_str(), group.as_str()).keyed(&key);
                c.unit = "req/s";
                c.higher_is_better = true;
                // The load generator's thread, the event loop and the workers (inline:
                // none); nginx is one worker process; java-nio its selector thread; netty
                // its boss and its worker.
                c.threads = match s.trim_start_matches("fault-") {
                    "inline" | "nginx" | "java-nio" => 2,
                    "netty" => 3,
                    _ => 2 + a.workers as usize,
                };
                // nginx and the JVM servers are other programs: neither dhat nor the
                // recorder sees inside them.
                let other = nginx || jvm::is_jvm(s);
                c.heap = !other;
                c.trace = !other;
                c
            })
            .collect();
        Ok(Plan {
            pairs: Vec::new(),
            cells,
            baseline: Some(baseline),
            config: json!({"servers": servers, "ab": with_ab, "nginx": with_nginx,
                           "ring_size": RING_SIZE, "reactive_prefetch": PREFETCH,
                           "locked_capacity": "unbounded",
                           "document_length": http::document().len(),
                           "seed_requests_per_second": SEED_RPS,
                           "jvm_gc": a.jvm_gc, "jvm_flags": a.jvm_flags,
                           "jvm_servers": jvm_cells}),
            input_size: a.requests,
            notes: [ab_note, nginx_note].into_iter().chain(jvm_notes).collect(),
        })
    }

    fn run_cell(cell: &EchoCell, ctx: &mut Ctx) -> Result<EchoOutcome, String> {
        cell::run_fork(cell, ctx)
    }

    fn analyse(a: &EchoArgs, run: &Finished<Self>, out: &mut Results) {
        analyse::analyse(a, run, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{results, row};

    #[test]
    fn the_main_chart_is_each_servers_requests_per_second_beside_the_seeds() {
        let rows = vec![
            row("inline", "-n 200 -c 5", 9073.5, Some([8000.0, 9500.0]), json!({})),
            row("locked", "-n 200 -c 5", 8731.1, None, json!({})),
        ];
        let r = results("echo-server", rows, Vec::new());
        let c = analyse::main_chart(&r).expect("a chart");
        assert_eq!(c.series, vec![("this run".to_string(), vec![(1.0, 9073.5), (2.0, 8731.1)])]);
        assert_eq!(c.intervals, vec![("this run".to_string(), vec![(1.0, 8000.0, 9500.0)])]);
        assert_eq!(c.x_names, vec![(1.0, "inline".to_string()), (2.0, "locked".to_string())]);
        assert_eq!(c.references[0].1, vec![(1.0, SEED_RPS), (2.0, SEED_RPS)]);
    }

    #[test]
    fn a_jvm_server_asked_for_without_its_jars_is_refused_with_the_install_command() {
        let missing = |name: &str| {
            (name == "netty")
                .then(|| "no Maven: `mvn` is not on PATH (apt-get install maven)".to_string())
        };
        let asked = vec!["inline".to_string(), "netty".to_string()];
        let err = chosen_servers(Some(&asked), missing).unwrap_err();
        assert!(err.contains("'netty'") && err.contains("apt-get install maven"), "{err}");
        assert_eq!(err.lines().count(), 1);
        // The defaults leave it out and say why; java-nio, which can run, is in.
        let (servers, notes) = chosen_servers(None, missing).expect("defaults");
        assert_eq!(servers, ["inline", "locked", "ring", "reactive", "naive", "java-nio"]);
        assert!(notes
            .iter()
            .any(|n| n.starts_with("netty not measured") && n.contains("apt-get install maven")));
        assert!(notes.iter().any(|n| n.starts_with("java-nio: on")), "{notes:?}");
        let (servers, _) = chosen_servers(Some(&asked), |_| None).expect("both run");
        assert_eq!(servers, asked);
    }
}
