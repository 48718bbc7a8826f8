//! Captures the build context for the environment record: rustc version, profile,
//! optimisation level, flags and target, as `LAB_BUILD_*` compile-time variables; and
//! `LAB_BUILD_ID`, a digest of the sources every lab binary is built from, by which the lab
//! tells whether a sibling binary (lab-cell-*, lab-heap) was built from the same sources.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files under `dir` (recursively) that end in `.rs` or are named `Cargo.toml`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            || p.file_name().is_some_and(|n| n == "Cargo.toml")
        {
            out.push(p);
        }
    }
}

/// Digest of the lab's and the workspace crates' sources and manifests, the lock file and
/// the build settings (not the features: `cargo test` unifies dev-dependencies' features
/// into the same sources, which the lab treats as the same build). Each source folder is
/// also a rerun trigger, so an edited file gives a new digest.
fn build_id(settings: &str) -> String {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.parent().expect("the lab sits in the workspace").to_path_buf();
    let mut dirs = vec![manifest.join("src")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        for c in crates.flatten() {
            dirs.push(c.path().join("src"));
            dirs.push(c.path().join("Cargo.toml"));
        }
    }
    dirs.extend([manifest.join("Cargo.toml"), root.join("Cargo.toml"), root.join("Cargo.lock")]);
    let mut files = Vec::new();
    for d in &dirs {
        println!("cargo:rerun-if-changed={}", d.display());
        if d.is_dir() {
            sources(d, &mut files);
        } else if d.is_file() {
            files.push(d.clone());
        }
    }
    files.sort();
    let mut h = DefaultHasher::new();
    h.write(settings.as_bytes());
    for f in &files {
        h.write(f.strip_prefix(&root).unwrap_or(f).to_string_lossy().as_bytes());
        h.write(&std::fs::read(f).unwrap_or_default());
    }
    format!("{:016x}", h.finish())
}

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
    let settings =
        format!("{version}|{}|{}|{}|{flags}", var("PROFILE"), var("OPT_LEVEL"), var("DEBUG"));
    println!("cargo:rustc-env=LAB_BUILD_ID={}", build_id(&settings));
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
