//! ring: under construction.
