//! The ab-style load generator from the command line:
//! `cargo run --release -p echo-server --example loadgen -- <requests> <concurrency> <port> [-k]`

use echo_server::loadgen::{run, LoadConfig};
use std::net::SocketAddr;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: loadgen <requests> <concurrency> <port> [-k]";
    let parsed = match args.as_slice() {
        [n, c, p, rest @ ..] if rest.is_empty() || rest == ["-k"] => {
            match (n.parse::<u64>(), c.parse::<usize>(), p.parse::<u16>()) {
                (Ok(n), Ok(c), Ok(p)) => Some((n, c, p, !rest.is_empty())),
                _ => None,
            }
        }
        _ => None,
    };
    let Some((requests, concurrency, port, keep_alive)) = parsed else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let config = LoadConfig { requests, concurrency, keep_alive, ..LoadConfig::default() };
    match run(SocketAddr::from(([127, 0, 0, 1], port)), &config) {
        Ok(report) => print!("{}", report.render_ab_style()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
