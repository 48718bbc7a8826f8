//! The load generator against hand-written servers that misbehave in known ways: its
//! counts must match what the server did.

use echo_server::loadgen::{run, LoadConfig, LoadError};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

fn read_request(s: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).unwrap_or(0) == 0 {
            break;
        }
        buf.push(b[0]);
    }
    buf
}

/// Serves `n` connections, answering the i-th with `respond(i)`, then closing.
fn fake_server(n: usize, respond: fn(usize) -> Vec<u8>) -> (SocketAddr, thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = thread::spawn(move || {
        for i in 0..n {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let req = read_request(&mut s);
            assert!(req.starts_with(b"GET /doc HTTP/1.0\r\nHost: 127.0.0.1:"), "{req:?}");
            let _ = s.write_all(&respond(i));
        }
    });
    (addr, h)
}

fn cfg(n: u64, c: usize) -> LoadConfig {
    LoadConfig {
        requests: n,
        concurrency: c,
        keep_alive: false,
        timeout: Duration::from_secs(20),
        path: "/doc".into(),
    }
}

#[test]
fn counts_non_2xx_and_length_failures_as_ab_does() {
    // The first response sets the document length (10); every 4th one has 20 bytes.
    let (addr, h) = fake_server(20, |i| {
        let len = if i % 4 == 3 { 20 } else { 10 };
        let status = if i % 2 == 0 { "404 Not Found" } else { "200 OK" };
        let mut r = format!("HTTP/1.0 {status}\r\nServer: fake/1\r\nContent-Length: {len}\r\n\r\n")
            .into_bytes();
        r.extend(std::iter::repeat_n(b'x', len));
        r
    });
    let report = run(addr, &cfg(20, 1)).expect("runs");
    h.join().unwrap();
    let text = report.render_ab_style();
    assert_eq!(report.complete_requests, 20, "{text}");
    assert_eq!(report.document_length, 10, "{text}");
    assert_eq!(report.failed.length, 5, "{text}");
    assert_eq!(report.failed_requests, 5, "{text}");
    assert_eq!(report.non_2xx_responses, 10, "{text}");
    assert_eq!(report.html_transferred, 15 * 10 + 5 * 20, "{text}");
    assert_eq!(report.server_software, "fake/1");
    assert!(text.contains("   (Connect: 0, Receive: 0, Length: 5, Exceptions: 0)\n"), "{text}");
    assert!(text.contains("Non-2xx responses:      10\n"), "{text}");
    // Percentiles are sorted totals; 100% is the longest.
    let p: Vec<f64> = report.percentiles.iter().map(|p| p.ms).collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    assert_eq!(report.percentile_ms(100), Some(report.connection_times.total.max_ms));
}

#[test]
fn a_close_before_the_header_is_a_receive_failure_and_garbage_an_exception() {
    let (addr, h) = fake_server(6, |i| match i % 3 {
        0 => b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
        1 => b"HTTP/1.0 200 OK\r\nContent-Le".to_vec(), // closed inside the header
        _ => b"SSH-2.0-nope\r\n\r\n".to_vec(),          // not HTTP
    });
    let report = run(addr, &cfg(6, 1)).expect("runs");
    h.join().unwrap();
    let text = report.render_ab_style();
    assert_eq!(report.complete_requests, 2, "{text}");
    assert_eq!((report.failed.receive, report.failed.exceptions), (2, 2), "{text}");
    assert_eq!(report.failed_requests, 4, "{text}");
}

#[test]
fn a_silent_server_hits_the_deadline_and_the_rest_is_reported_unfinished() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let keep = thread::spawn(move || {
        // Accept and hold two connections without answering.
        let a = l.accept().unwrap();
        let b = l.accept().unwrap();
        thread::sleep(Duration::from_millis(700));
        drop((a, b));
    });
    let started = Instant::now();
    let config = LoadConfig { timeout: Duration::from_millis(300), ..cfg(4, 2) };
    let report = run(addr, &config).expect("a report, not a hang");
    assert!(started.elapsed() < Duration::from_millis(650), "{:?}", started.elapsed());
    assert!(report.deadline_exceeded);
    assert_eq!(report.failed.unfinished, 4);
    assert_eq!(report.complete_requests, 0);
    assert!(report.render_ab_style().contains("Unfinished: 4 (deadline exceeded)"));
    keep.join().unwrap();
}

#[test]
fn nothing_listening_aborts_after_ten_connect_failures() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    }; // closed again: connections are refused
    let e = run(addr, &cfg(100, 5)).expect_err("nothing listens");
    assert!(matches!(e, LoadError::Aborted { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&addr.to_string()) && msg.contains("10 failures"), "{msg}");
}
