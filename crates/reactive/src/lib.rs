//! reactive: under construction.
