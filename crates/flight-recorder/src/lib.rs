//! flight-recorder: under construction.
