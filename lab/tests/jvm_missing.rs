//! Without Maven (or without a JDK) a JVM row asked for by name is bad input: one line on
//! stderr naming the install command, exit 2, before anything is measured; never a skip.
//! The lab is run with a PATH that holds everything but the missing tool.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder of links to every program on PATH but `drop`.
fn path_without(drop: &[&str]) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("path-without-{}", drop.join("-")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for p in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            let name = e.file_name();
            let link = dir.join(&name);
            if drop.iter().any(|d| name == *d) || link.exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(e.path(), link);
        }
    }
    dir
}

fn lab_without(drop: &[&str], args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .env("PATH", path_without(drop))
        .output()
        .expect("run lab");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn no_maven_is_exit_2_naming_apt_get_install_maven() {
    let (code, err) =
        lab_without(&["mvn"], &["disruptor-vs-lbq", "--variants", "ring,jvm-disruptor"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install maven") && err.contains("jvm-disruptor"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let (code, err) =
        lab_without(&["mvn"], &["handoff-latency", "--variants", "locked,jvm-disruptor"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install maven") && err.contains("jvm-disruptor"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let (code, err) = lab_without(&["mvn"], &["jvm-referee"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install maven"), "{err}");
}

#[test]
fn no_jdk_is_exit_2_naming_the_jdk_package() {
    let (code, err) =
        lab_without(&["java", "javac"], &["disruptor-vs-lbq", "--variants", "jvm-lbq"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("apt-get install openjdk-17-jdk-headless"), "{err}");
}
