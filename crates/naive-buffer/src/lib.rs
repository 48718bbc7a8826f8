//! naive-buffer: under construction.
