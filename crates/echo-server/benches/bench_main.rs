//! Seed 003's figure as a criterion bench: one iteration is an ab-style run of the
//! crate's load generator (`-n 2000 -c 25`, one request per connection) against a server
//! started once per target; throughput is requests, so criterion reports requests/s.
//! Targets: inline, the locked and naive handoffs, and nginx (one process, the same
//! document) when installed; when it is not, the bench says so and how to install it.
//! The seed measured 8,371 requests/s with `ab -n 10000 -c 25`.
//!
//! `cargo bench -p echo-server` (`-- --quick` for a short run).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use echo_server::external::Nginx;
use echo_server::loadgen::{run, LoadConfig};
use echo_server::{http, start, start_inline, ServerConfig, ServerHandle};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const REQUESTS: u64 = 2000;

fn one_run(addr: SocketAddr, what: &str) -> Duration {
    let config = LoadConfig { requests: REQUESTS, concurrency: 25, ..LoadConfig::default() };
    let t = Instant::now();
    let report = run(addr, &config).unwrap_or_else(|e| panic!("{what}: {e}"));
    let elapsed = t.elapsed();
    // Check before timing counts: a run with failures is not a measurement.
    assert_eq!(report.failed_requests, 0, "{what}:\n{}", report.render_ab_style());
    assert_eq!(report.document_length, http::DOCUMENT_LENGTH as u64, "{what}");
    elapsed
}

fn echo(c: &mut Criterion) {
    let mut g = c.benchmark_group("echo_ab_n2000_c25");
    g.throughput(Throughput::Elements(REQUESTS));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    let servers: Vec<ServerHandle> = vec![
        start_inline(ServerConfig::default()).expect("inline"),
        start(locked_queue::LockedHandoff::new(None), ServerConfig::default()).expect("locked"),
        start(naive_buffer::NaiveHandoff::new(), ServerConfig::default()).expect("naive"),
    ];
    for s in &servers {
        let (name, addr) = (s.variant().to_string(), s.addr());
        g.bench_function(&name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| one_run(addr, &name)).sum())
        });
    }
    match Nginx::start(0, http::document()) {
        Ok(nginx) => {
            let addr = nginx.addr();
            g.bench_function("nginx", |b| {
                b.iter_custom(|iters| (0..iters).map(|_| one_run(addr, "nginx")).sum())
            });
            nginx.stop().expect("nginx stops");
        }
        Err(e) => eprintln!("NOT MEASURED: nginx: {e}"),
    }
    g.finish();
    for s in servers {
        let stats = s.shutdown();
        assert_eq!(stats.errors, 0, "{stats:?}");
    }
}

criterion_group!(benches, echo);
criterion_main!(benches);
