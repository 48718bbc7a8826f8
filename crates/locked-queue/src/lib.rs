//! locked-queue: under construction.
