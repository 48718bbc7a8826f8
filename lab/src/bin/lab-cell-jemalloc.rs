//! A timed child on jemalloc: the same cells as `lab __child`, with
//! `tikv_jemallocator::Jemalloc` as the global allocator (Rust fixes it at compile time, so
//! each allocator is a binary).

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    std::process::exit(lab::cli::child::allocator_main("jemalloc"));
}
