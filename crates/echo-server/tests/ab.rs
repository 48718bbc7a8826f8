//! The real ApacheBench against the server: `ab -n 1000 -c 10`. Fails (never skips) when
//! `ab` is missing, saying how to install it.

mod common;

use common::{start_mode, MODES};
use echo_server::ServerConfig;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn field<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(name)).map(str::trim)
}

fn run_ab(url: &str) -> String {
    let mut child = match Command::new("ab")
        .args(["-n", "1000", "-c", "10", "-s", "10", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!(
            "cannot run `ab` (ApacheBench): {e}. Install it: on Debian/Ubuntu \
             `apt-get update && apt-get install -y apache2-utils`; on Fedora \
             `dnf install httpd-tools`. This test does not skip."
        ),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait().expect("wait for ab") {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("ab did not finish within 60 s against {url}");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let out = child.wait_with_output().expect("ab output");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ab failed ({}) against {url}:\n{stdout}\n{stderr}", out.status);
    stdout
}

#[test]
fn apache_bench_n1000_c10_has_no_failures() {
    for mode in MODES {
        let server = start_mode(mode, ServerConfig::default());
        let out = run_ab(&format!("http://{}/", server.addr()));
        let stats = server.shutdown();
        assert_eq!(field(&out, "Server Software:"), Some("lab-echo/0.1"), "{mode:?}\n{out}");
        assert_eq!(field(&out, "Document Length:"), Some("1028 bytes"), "{mode:?}\n{out}");
        assert_eq!(field(&out, "Complete requests:"), Some("1000"), "{mode:?}\n{out}");
        assert_eq!(field(&out, "Failed requests:"), Some("0"), "{mode:?}\n{out}");
        let non2xx = field(&out, "Non-2xx responses:").unwrap_or("0");
        assert_eq!(non2xx, "0", "{mode:?}\n{out}");
        assert_eq!(field(&out, "HTML transferred:"), Some("1028000 bytes"), "{mode:?}\n{out}");
        assert_eq!(stats.requests_served, 1000, "{mode:?}: {stats:?}");
    }
}
