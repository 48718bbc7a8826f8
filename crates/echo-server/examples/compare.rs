//! Seed 003's measurement, side by side in one run: `ab -n 10000 -c 25` (and the crate's
//! own load generator, the same model) against the inline server, the locked and naive
//! handoffs, and nginx with one worker serving the same document; rounds interleaved,
//! medians reported.
//!
//! `cargo run --release -p echo-server --example compare -- [rounds] [requests] [concurrency]`

use echo_server::external::{run_ab, Nginx};
use echo_server::loadgen::{run, LoadConfig};
use echo_server::{http, start, start_inline, ServerConfig, ServerHandle};
use std::net::SocketAddr;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let parsed: Result<Vec<u64>, _> = std::env::args().skip(1).map(|a| a.parse()).collect();
    let Ok(args) = parsed else {
        eprintln!("usage: compare [rounds] [requests] [concurrency] (whole numbers)");
        std::process::exit(2)
    };
    let rounds = args.first().copied().unwrap_or(5) as usize;
    let requests = args.get(1).copied().unwrap_or(10_000);
    let concurrency = args.get(2).copied().unwrap_or(25) as usize;
    let cfg = ServerConfig::default;
    let servers: Vec<ServerHandle> = vec![
        start_inline(cfg()).expect("inline"),
        start(locked_queue::LockedHandoff::new(None), cfg()).expect("locked"),
        start(naive_buffer::NaiveHandoff::new(), cfg()).expect("naive"),
    ];
    let nginx = Nginx::start(0, http::document()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let mut targets: Vec<(String, SocketAddr)> =
        servers.iter().map(|s| (s.variant().to_string(), s.addr())).collect();
    targets.push(("nginx".into(), nginx.addr()));
    // (rps, p99) per target, for ab and for the load generator.
    let mut ab: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); targets.len()];
    let mut lg: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); targets.len()];
    let load = LoadConfig { requests, concurrency, ..LoadConfig::default() };
    for round in 0..rounds {
        for (i, (name, addr)) in targets.iter().enumerate() {
            let a = run_ab(*addr, requests, concurrency, false).expect("ab");
            assert_eq!((a.failed_requests, a.non_2xx_responses), (0, 0), "{name}: {}", a.output);
            assert_eq!(a.document_length, http::DOCUMENT_LENGTH as u64, "{name}");
            ab[i].0.push(a.requests_per_second);
            ab[i].1.push(a.p99_ms as f64);
            let r = run(*addr, &load).expect("loadgen");
            assert_eq!(r.failed_requests, 0, "{name}: {}", r.render_ab_style());
            lg[i].0.push(r.requests_per_second);
            lg[i].1.push(r.percentile_ms(99).unwrap_or(f64::NAN));
            eprintln!(
                "round {round} {name:7} ab {:9.0} req/s p99 {:2} ms | loadgen {:9.0} req/s p99 {:.2} ms",
                a.requests_per_second,
                a.p99_ms,
                r.requests_per_second,
                r.percentile_ms(99).unwrap_or(f64::NAN)
            );
        }
    }
    let nginx_ab = median(&mut ab[targets.len() - 1].0.clone());
    let nginx_lg = median(&mut lg[targets.len() - 1].0.clone());
    println!(
        "median of {rounds} rounds, -n {requests} -c {concurrency} (seed: 8371 req/s, 99% <= 6 ms)"
    );
    println!(
        "{:8} {:>10} {:>8} {:>8} {:>8} | {:>10} {:>8} {:>8}",
        "target", "ab req/s", "p99 ms", "x seed", "/nginx", "lg req/s", "p99 ms", "/nginx"
    );
    for (i, (name, _)) in targets.iter().enumerate() {
        let (rps, p99) = (median(&mut ab[i].0), median(&mut ab[i].1));
        let (lrps, lp99) = (median(&mut lg[i].0), median(&mut lg[i].1));
        println!(
            "{name:8} {rps:10.0} {p99:8.1} {:8.2} {:7.0}% | {lrps:10.0} {lp99:8.2} {:7.0}%",
            rps / 8371.12,
            100.0 * rps / nginx_ab,
            100.0 * lrps / nginx_lg
        );
    }
    for s in servers {
        let v = s.variant().to_string();
        let st = s.shutdown();
        eprintln!("{v}: {st:?}");
    }
    nginx.stop().expect("nginx stops");
}
