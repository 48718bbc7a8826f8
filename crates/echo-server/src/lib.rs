//! echo-server: placeholder docs (written below once the code settles).

pub mod http;
pub mod loadgen;
mod server;

pub use server::{
    handle, start, start_inline, Outcome, Reply, Request, ServerConfig, ServerError,
    ServerHandle, ServerStats,
};
