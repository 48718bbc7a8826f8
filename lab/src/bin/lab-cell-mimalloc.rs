//! A timed child on mimalloc: the same cells as `lab __child`, with `mimalloc::MiMalloc` as
//! the global allocator (Rust fixes it at compile time, so each allocator is a binary).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(lab::cli::child::allocator_main("mimalloc"));
}
