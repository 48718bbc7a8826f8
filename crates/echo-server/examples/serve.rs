//! Serves for a while, for measuring with the real `ab`:
//! `cargo run --release -p echo-server --example serve -- <inline|locked|naive> <port> <seconds>`
//! then prints the server's stats as JSON.

use echo_server::{start, start_inline, ServerConfig, ServerHandle};
use std::net::SocketAddr;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve <inline|locked|naive> <port> <seconds>";
    let [variant, port, secs] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (Ok(port), Ok(secs)) = (port.parse::<u16>(), secs.parse::<u64>()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let config = ServerConfig::on(SocketAddr::from(([127, 0, 0, 1], port)));
    let server: Result<ServerHandle, _> = match variant.as_str() {
        "inline" => start_inline(config),
        "locked" => start(locked_queue::LockedHandoff::new(None), config),
        "naive" => start(naive_buffer::NaiveHandoff::new(), config),
        other => {
            eprintln!("unknown variant {other:?}; choose inline, locked or naive. {usage}");
            std::process::exit(2);
        }
    };
    let server = server.unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    println!("{} listening on {}", server.variant(), server.addr());
    std::thread::sleep(Duration::from_secs(secs));
    let stats = server.shutdown();
    println!("{}", serde_json::to_string(&stats).expect("stats serialise"));
}
