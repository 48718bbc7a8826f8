//! The server in every mode: load, malformed requests, a port in use, keep-alive.

mod common;

use common::{assert_closed, connect, read_response, send, start_mode, Mode, MODES};
use echo_server::http::{document, DOCUMENT_LENGTH};
use echo_server::loadgen::{run, LoadConfig};
use echo_server::{start_inline, ServerConfig, ServerError};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

fn load(n: u64, c: usize, keep_alive: bool) -> LoadConfig {
    LoadConfig {
        requests: n,
        concurrency: c,
        keep_alive,
        timeout: Duration::from_secs(30),
        path: "/".into(),
    }
}

fn check_load(mode: Mode, keep_alive: bool) {
    let server = start_mode(mode, ServerConfig::default());
    let report = run(server.addr(), &load(2000, 10, keep_alive)).expect("load runs");
    let stats = server.shutdown();
    let text = report.render_ab_style();
    assert!(!report.deadline_exceeded, "{mode:?}: deadline exceeded\n{text}");
    assert_eq!(report.failed_requests, 0, "{mode:?}\n{text}");
    assert_eq!(report.complete_requests, 2000, "{mode:?}\n{text}");
    assert_eq!(report.non_2xx_responses, 0, "{mode:?}\n{text}");
    assert_eq!(report.document_length, DOCUMENT_LENGTH as u64, "{mode:?}\n{text}");
    assert_eq!(report.html_transferred, 2000 * DOCUMENT_LENGTH as u64, "{mode:?}");
    assert_eq!(report.server_software, "lab-echo/0.1");
    assert!(text.contains("Document Length:        1028 bytes"), "{text}");
    assert!(report.total_transferred > report.html_transferred);
    assert_eq!(report.percentiles.len(), 9);
    let expected_ka = if keep_alive { 2000 - 10 } else { 0 };
    assert_eq!(report.keep_alive_requests, expected_ka, "{mode:?}\n{text}");
    assert_eq!(stats.requests_served, 2000, "{mode:?}: {stats:?}");
    assert_eq!(stats.bad_requests, 0, "{mode:?}: {stats:?}");
    assert_eq!(stats.fatal, None);
    let conns = if keep_alive { 10 } else { 2000 };
    assert_eq!(stats.connections_accepted, conns, "{mode:?}: {stats:?}");
    let handled = if matches!(mode, Mode::Inline) { 0 } else { 2000 };
    assert_eq!(stats.worker_handled, handled, "{mode:?}: {stats:?}");
    assert!(stats.event_loop_iterations > 0);
}

#[test]
fn loadgen_n2000_c10_completes_in_every_mode() {
    for mode in MODES {
        check_load(mode, false);
    }
}

#[test]
fn loadgen_keep_alive_reuses_connections_in_every_mode() {
    for mode in MODES {
        check_load(mode, true);
    }
}

#[test]
fn malformed_and_oversized_requests_get_400_and_the_server_goes_on() {
    for mode in MODES {
        let server = start_mode(mode, ServerConfig::default());
        let addr = server.addr();

        let mut s = connect(addr);
        send(&mut s, "GARBAGE\r\n\r\n");
        let (status, head, _) = read_response(&mut s);
        assert_eq!(status, 400, "{mode:?}: {head}");
        assert!(head.starts_with("HTTP/1.0 400 Bad Request\r\n"), "{head}");
        assert_closed(&mut s);

        // Over the 8 KiB buffer: the rest is still arriving when the 400 is written.
        let mut s = connect(addr);
        let big = format!("GET / HTTP/1.1\r\nX-Pad: {}\r\n\r\n", "a".repeat(20_000));
        send(&mut s, &big);
        let (status, _, _) = read_response(&mut s);
        assert_eq!(status, 400, "{mode:?}");
        assert_closed(&mut s);

        // A bad request on a kept-alive connection also closes it.
        let mut s = connect(addr);
        send(&mut s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 200);
        send(&mut s, "GET / HTTP/9.9\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 400);
        assert_closed(&mut s);

        // And the next client is served.
        let mut s = connect(addr);
        send(&mut s, "GET / HTTP/1.0\r\n\r\n");
        let (status, head, body) = read_response(&mut s);
        assert_eq!(status, 200, "{mode:?}: {head}");
        assert_eq!(body, document());
        assert_closed(&mut s);

        let stats = server.shutdown();
        assert_eq!((stats.bad_requests, stats.requests_served), (3, 2), "{mode:?}: {stats:?}");
    }
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    for mode in [Mode::Inline, Mode::Locked(None)] {
        let r = match mode {
            Mode::Inline => start_inline(ServerConfig::on(addr)),
            _ => echo_server::start(locked_queue::LockedHandoff::new(None), ServerConfig::on(addr)),
        };
        let err = r.expect_err("the port is taken");
        let msg = err.to_string();
        match &err {
            ServerError::Bind { addr: a, source } => {
                assert_eq!(*a, addr);
                assert_eq!(source.kind(), std::io::ErrorKind::AddrInUse);
            }
            other => panic!("expected a bind error, got {other:?}"),
        }
        assert!(msg.contains(&addr.to_string()) && msg.contains("in use"), "{msg}");
    }
}

#[test]
fn bad_settings_are_refused_with_the_choices() {
    let off_host: SocketAddr = "10.0.0.1:80".parse().unwrap();
    let e = start_inline(ServerConfig::on(off_host)).unwrap_err().to_string();
    assert!(e.contains("not a loopback address"), "{e}");
    let cfg = ServerConfig { workers: 0, ..ServerConfig::default() };
    let e = echo_server::start(locked_queue::LockedHandoff::new(None), cfg).unwrap_err();
    assert!(e.to_string().contains("workers = 0: choose 1 to 64"), "{e}");
    let e = echo_server::start(locked_queue::LockedHandoff::new(Some(0)), ServerConfig::default())
        .unwrap_err();
    assert!(matches!(e, ServerError::Handoff(_)), "{e:?}");
}

#[test]
fn keep_alive_rules_and_pipelining() {
    for mode in MODES {
        let server = start_mode(mode, ServerConfig::default());
        let mut s = connect(server.addr());
        // HTTP/1.1 keeps the connection by default.
        for _ in 0..3 {
            send(&mut s, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            let (status, head, body) = read_response(&mut s);
            assert_eq!(status, 200);
            assert!(head.contains("\r\nConnection: keep-alive\r\n"), "{head}");
            assert_eq!(body.len(), DOCUMENT_LENGTH);
        }
        // HEAD: headers only, still kept alive.
        send(&mut s, "HEAD / HTTP/1.1\r\n\r\n");
        let mut s2 = s.try_clone().unwrap();
        let head = read_head_only(&mut s2);
        assert!(head.contains("Content-Length: 1028"), "{head}");
        // Two requests in one write (pipelined): two responses in order, then close.
        send(&mut s, "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 200);
        let (status, head, _) = read_response(&mut s);
        assert_eq!(status, 200);
        assert!(head.contains("\r\nConnection: close\r\n"), "{head}");
        assert_closed(&mut s);

        // HTTP/1.0 keeps it only when asked.
        let mut s = connect(server.addr());
        send(&mut s, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 200);
        send(&mut s, "GET / HTTP/1.0\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 200);
        assert_closed(&mut s);

        // A request split across writes (partial reads) is assembled.
        let mut s = connect(server.addr());
        for part in ["GE", "T / HT", "TP/1.0\r", "\nHost: x\r\n", "\r\n"] {
            send(&mut s, part);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(read_response(&mut s).0, 200);
        assert_closed(&mut s);

        // A client that half-closes after a keep-alive request gets its answer, then EOF.
        let mut s = connect(server.addr());
        send(&mut s, "GET / HTTP/1.1\r\n\r\n");
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(read_response(&mut s).0, 200);
        assert_closed(&mut s);

        let stats = server.shutdown();
        assert_eq!(stats.requests_served, 10, "{mode:?}: {stats:?}");
        assert_eq!(stats.errors, 0, "{mode:?}: {stats:?}");
    }
}

fn read_head_only(s: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).unwrap(), 1, "closed inside a HEAD response");
        buf.push(b[0]);
    }
    String::from_utf8(buf).unwrap()
}

#[test]
fn a_slow_reader_gets_the_whole_response() {
    // A client that does not read while many responses pile up forces partial writes
    // (WouldBlock) on the server; everything must still arrive, in order. The client's
    // receive buffer is pinned small (which also stops the kernel growing it), and the
    // responses outweigh twice the largest send buffer the kernel may grow the server's
    // socket to, so the writes block on any machine's socket settings.
    let server = start_mode(Mode::Locked(None), ServerConfig::default());
    let mut s = connect(server.addr());
    set_receive_buffer(&s, 256 * 1024);
    let send_max = tcp_buffer_max("/proc/sys/net/ipv4/tcp_wmem");
    let response_len =
        echo_server::http::response_bytes(echo_server::http::ResponseKind::Ok, true).len();
    let n = (2 * send_max).div_ceil(response_len).max(5000);
    let mut requests = String::new();
    for _ in 0..n {
        requests.push_str("GET / HTTP/1.1\r\n\r\n");
    }
    let writer = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || send(&mut w, &requests))
    };
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..n {
        let (status, _, body) = read_response(&mut s);
        assert_eq!((status, body.len()), (200, DOCUMENT_LENGTH));
    }
    writer.join().unwrap();
    drop(s);
    let stats = server.shutdown();
    assert_eq!(stats.requests_served as usize, n, "{stats:?}");
    assert!(
        stats.partial_writes > 0,
        "no write hit WouldBlock with {n} responses of {response_len} bytes \
         (send buffers up to {send_max} bytes): {stats:?}"
    );
    assert_eq!(stats.errors, 0, "{stats:?}");
}

/// The largest size the kernel grows a TCP buffer to (the third field of `tcp_wmem` or
/// `tcp_rmem`); 4 MiB, Linux's usual `tcp_wmem` maximum, where the file cannot be read.
fn tcp_buffer_max(path: &str) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.split_whitespace().nth(2).and_then(|f| f.parse().ok()))
        .unwrap_or(4 << 20)
}

/// Sets `SO_RCVBUF`; a socket whose receive buffer was set is no longer auto-tuned.
fn set_receive_buffer(s: &std::net::TcpStream, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is an open socket owned by `s` for the whole call; the option
    // value is a live `c_int` whose size is passed with it, as setsockopt requires.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "setsockopt(SO_RCVBUF): {}", std::io::Error::last_os_error());
}

#[test]
fn a_long_pipeline_read_as_fast_as_it_comes_is_served_in_order() {
    // 20,000 pipelined requests on one connection, answered in the event loop itself:
    // all served, in order. (The server resumes a pipelined connection from its loop, not
    // by recursion from the write path; this test did not overflow the old recursive
    // version here, because the writes block often enough to unwind it.)
    let server = start_mode(Mode::Inline, ServerConfig::default());
    let mut s = connect(server.addr());
    let n = 20_000u64;
    let writer = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            // One write: the server's buffer is always full of requests.
            let mut all = String::new();
            for i in 0..n {
                let path = if i % 2 == 0 { "/even" } else { "/odd" };
                let method = if i == n - 1 { "HEAD" } else { "GET" };
                all.push_str(&format!("{method} {path} HTTP/1.1\r\n\r\n"));
            }
            send(&mut w, &all);
        })
    };
    // Read as fast as possible, in big chunks, so the server's writes never block.
    use echo_server::http::{response_bytes, ResponseKind};
    let (get, head) =
        (response_bytes(ResponseKind::Ok, true), response_bytes(ResponseKind::OkHead, true));
    let expected = (n as usize - 1) * get.len() + head.len();
    let mut got = Vec::with_capacity(expected);
    let mut chunk = vec![0u8; 1 << 20];
    while got.len() < expected {
        let k = std::io::Read::read(&mut s, &mut chunk).expect("read responses");
        assert!(k > 0, "closed after {} of {expected} bytes", got.len());
        got.extend_from_slice(&chunk[..k]);
    }
    assert_eq!(got.len(), expected);
    assert!(got.chunks(get.len()).take(n as usize - 1).all(|r| r == get));
    // The last one is the HEAD: headers only, proving the order was kept.
    assert_eq!(&got[expected - head.len()..], head);
    writer.join().unwrap();
    drop(s);
    let stats = server.shutdown();
    assert_eq!(stats.requests_served, n, "{stats:?}");
}

#[test]
fn three_workers_behind_a_bounded_handoff_handle_every_request() {
    let config = ServerConfig { workers: 3, ..ServerConfig::default() };
    let server = echo_server::start(locked_queue::LockedHandoff::new(Some(8)), config)
        .expect("three workers start");
    let report = run(server.addr(), &load(1500, 12, false)).expect("load runs");
    let stats = server.shutdown();
    assert_eq!(report.failed_requests, 0, "{}", report.render_ab_style());
    assert_eq!((stats.requests_served, stats.worker_handled), (1500, 1500), "{stats:?}");
}
