//! The `lab` binary; see the library's documentation (`lab::cli`).

fn main() {
    std::process::exit(lab::cli::main());
}
