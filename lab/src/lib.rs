//! The lab (library part).
pub mod peers;
