//! Captures the build context for the environment record: rustc version, profile,
//! optimisation level, flags and target, as `LAB_BUILD_*` compile-time variables.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("unknown ({rustc} -V failed)"));
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    println!("cargo:rustc-env=LAB_BUILD_RUSTC={version}");
    println!("cargo:rustc-env=LAB_BUILD_PROFILE={}", var("PROFILE"));
    println!("cargo:rustc-env=LAB_BUILD_OPT_LEVEL={}", var("OPT_LEVEL"));
    println!("cargo:rustc-env=LAB_BUILD_DEBUG={}", var("DEBUG"));
    println!("cargo:rustc-env=LAB_BUILD_TARGET={}", var("TARGET"));
    let flags = var("CARGO_ENCODED_RUSTFLAGS").replace('\x1f', " ");
    println!("cargo:rustc-env=LAB_BUILD_RUSTFLAGS={flags}");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
