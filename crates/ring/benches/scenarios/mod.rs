//! One module per scenario; `common` holds the competitors' runners.

pub mod base;
pub mod common;
pub mod mpsc;
pub mod spsc;
