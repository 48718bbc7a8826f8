//! echo-server: under construction.
