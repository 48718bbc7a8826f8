//! The outside programs the experiment compares against or measures with: Debian's nginx
//! (the reference server, one worker, serving the same 1028-byte document) and the real
//! ApacheBench. Both are found on `PATH` (and `/usr/sbin`); when one is missing the
//! functions say so and how to install it, never skip quietly.

use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Why an external program could not be used.
#[derive(Debug)]
pub enum ExternalError {
    /// The program is not installed; the message says how to install it.
    Missing(String),
    /// It ran but did not do what was asked; the message has its output.
    Failed(String),
    /// A file or process operation failed.
    Io {
        /// What was being done.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
}

impl fmt::Display for ExternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExternalError::Missing(m) | ExternalError::Failed(m) => f.write_str(m),
            ExternalError::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for ExternalError {}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ExternalError {
    let what = what.into();
    move |source| ExternalError::Io { what, source }
}

/// Finds an executable on `PATH` or in the sbin directories (where Debian puts nginx).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether nginx is installed.
pub fn nginx_available() -> bool {
    find_program("nginx").is_some()
}

/// Whether ApacheBench (`ab`) is installed.
pub fn ab_available() -> bool {
    find_program("ab").is_some()
}

const NGINX_INSTALL: &str =
    "nginx is not installed: on Debian/Ubuntu `apt-get update && apt-get install -y nginx-light`";
const AB_INSTALL: &str =
    "ab (ApacheBench) is not installed: on Debian/Ubuntu `apt-get update && apt-get install -y \
     apache2-utils`";

/// A private nginx: one process (`master_process off`, so the server is exactly one
/// worker and stopping it leaves no orphan), serving `document` at `/` on a loopback
/// port, with its files in a fresh directory under the system temp dir. Stopped and
/// cleaned up on drop.
#[derive(Debug)]
pub struct Nginx {
    addr: SocketAddr,
    dir: PathBuf,
    child: Option<Child>,
}

impl Nginx {
    /// Starts nginx on `port` (0: a free port chosen now) and waits (at most 10 s) until it
    /// accepts connections.
    pub fn start(port: u16, document: &[u8]) -> Result<Nginx, ExternalError> {
        let bin =
            find_program("nginx").ok_or_else(|| ExternalError::Missing(NGINX_INSTALL.into()))?;
        let port = if port == 0 { free_port()? } else { port };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lab-nginx-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let www = dir.join("www");
        std::fs::create_dir_all(&www).map_err(io_err(format!("creating {}", www.display())))?;
        std::fs::write(www.join("index.html"), document)
            .map_err(io_err("writing nginx's document"))?;
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log;\nevents {{ worker_connections 4096; }}\nhttp {{\n\
             access_log off;\ndefault_type text/html;\nsendfile on;\nkeepalive_timeout 65;\n\
             client_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
             server {{\nlisten {addr};\nroot {d}/www;\nlocation / {{ index index.html; }}\n}}\n}}\n"
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).map_err(io_err("writing nginx.conf"))?;
        let child = Command::new(&bin)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf_path)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(io_err(format!("starting {}", bin.display())))?;
        let mut nginx = Nginx { addr, dir, child: Some(child) };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(nginx);
            }
            let exited = nginx.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(nginx.dir.join("error.log")).unwrap_or_default();
                let why = match exited {
                    Some(status) => format!("exited with {status}"),
                    None => "did not accept connections within 10 s".to_string(),
                };
                return Err(ExternalError::Failed(format!(
                    "nginx on {addr} {why}; error.log:\n{log}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its directory (config, document, logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops it (SIGQUIT, nginx's graceful stop; SIGKILL after 5 s) and removes its files.
    pub fn stop(mut self) -> Result<(), ExternalError> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), ExternalError> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let _ = Command::new("kill")
            .args(["-QUIT", &child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while child.try_wait().map_err(io_err("waiting for nginx"))?.is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(())
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

fn free_port() -> Result<u16, ExternalError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(io_err("finding a free port"))?;
    Ok(l.local_addr().map_err(io_err("finding a free port"))?.port())
}

/// The figures of one `ab` run, parsed from its output.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AbSummary {
    /// `Server Software:`.
    pub server_software: String,
    /// `Document Length:` in bytes.
    pub document_length: u64,
    /// `Complete requests:`.
    pub complete_requests: u64,
    /// `Failed requests:`.
    pub failed_requests: u64,
    /// `Non-2xx responses:` (0 when ab prints no such line).
    pub non_2xx_responses: u64,
    /// `Requests per second:`.
    pub requests_per_second: f64,
    /// The 50% line, ms.
    pub p50_ms: u64,
    /// The 99% line, ms.
    pub p99_ms: u64,
    /// The 100% line (longest request), ms.
    pub max_ms: u64,
    /// ab's whole output.
    pub output: String,
}

/// Runs `ab -n requests -c concurrency [-k] http://addr/` (with a 10 s socket timeout,
/// `-s 10`, and a 120 s limit for the whole run) and parses its report.
pub fn run_ab(
    addr: SocketAddr,
    requests: u64,
    concurrency: usize,
    keep_alive: bool,
) -> Result<AbSummary, ExternalError> {
    let bin = find_program("ab").ok_or_else(|| ExternalError::Missing(AB_INSTALL.into()))?;
    let mut cmd = Command::new(bin);
    cmd.args(["-q", "-s", "10", "-n", &requests.to_string(), "-c", &concurrency.to_string()]);
    if keep_alive {
        cmd.arg("-k");
    }
    cmd.arg(format!("http://{addr}/"));
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(io_err("starting ab"))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().map_err(io_err("waiting for ab"))?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ExternalError::Failed(format!("ab against {addr} ran over 120 s")));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().map_err(io_err("reading ab's output"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(ExternalError::Failed(format!(
            "ab against {addr} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    parse_ab(&stdout)
        .ok_or_else(|| ExternalError::Failed(format!("cannot read ab's report:\n{stdout}")))
}

/// Parses ab's text report (the fields [`AbSummary`] holds).
pub fn parse_ab(text: &str) -> Option<AbSummary> {
    let field =
        |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string());
    let first_word = |name: &str| -> Option<String> {
        field(name).and_then(|v| v.split_whitespace().next().map(str::to_string))
    };
    let pct = |p: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(p)).then(|| w.next()?.parse().ok()).flatten()
        })
    };
    Some(AbSummary {
        server_software: field("Server Software:").unwrap_or_default(),
        document_length: first_word("Document Length:")?.parse().ok()?,
        complete_requests: first_word("Complete requests:")?.parse().ok()?,
        failed_requests: first_word("Failed requests:")?.parse().ok()?,
        non_2xx_responses: match first_word("Non-2xx responses:") {
            Some(v) => v.parse().ok()?,
            None => 0,
        },
        requests_per_second: first_word("Requests per second:")?.parse().ok()?,
        p50_ms: pct("50%")?,
        p99_ms: pct("99%")?,
        max_ms: pct("100%")?,
        output: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seed_report() {
        let seed = "Server Software:        ReactiveJ/0.1\nDocument Length:        1028 bytes\n\
                    Complete requests:      10000\nFailed requests:        0\n\
                    Non-2xx responses:      10001\n\
                    Requests per second:    8371.12 [#/sec] (mean)\n  50%      3\n  66%      3\n\
                    99%      6\n 100%     12 (longest request)\n";
        let s = parse_ab(seed).expect("parses");
        assert_eq!(s.server_software, "ReactiveJ/0.1");
        assert_eq!((s.document_length, s.complete_requests, s.failed_requests), (1028, 10000, 0));
        assert_eq!(s.non_2xx_responses, 10001);
        assert_eq!(s.requests_per_second, 8371.12);
        assert_eq!((s.p50_ms, s.p99_ms, s.max_ms), (3, 6, 12));
        assert!(parse_ab("garbage").is_none());
    }
}
