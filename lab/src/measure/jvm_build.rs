//! The JVM side's build: `tools/jvm` is a Maven project (a parent pom with every version
//! pinned, one shared module `bus` and one module per program group), built on first use
//! into the workspace's `target/jvm`, and the class path each program runs with.
//!
//! `mvn process-classes` compiles every module into `target/jvm/<module>/classes` and writes
//! the class path of the module's dependencies (jars in Maven's local repository, and the
//! `bus` module's classes for the others) to `target/jvm/<module>/classpath.txt`; the `bus`
//! module also copies seed 001's Disruptor (3.4) into `target/jvm/bus/alt/`, which
//! `jvm-disruptor-3.4` runs in place of the current one (the same classes: Bus uses only
//! the API both lines share).
//!
//! Maven starts in seconds, so the lab asks it only when the sources changed: a digest of
//! every file under `tools/jvm` (outputs excluded) is kept beside the classes, and a build
//! whose digest matches, whose class path files are there and whose jars still exist is
//! taken as it is. One build at a time: a file lock in `target/jvm` serialises the lab's
//! processes and the test threads that ask at once.
//!
//! What cannot build says so in one line with the command that fixes it: no JDK, no Maven,
//! or a Maven that cannot fetch the pinned libraries from Maven Central.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Maven modules of tools/jvm, each a program group on the shared `bus` module (`jmh`:
/// JMH benchmarks of the other modules' loops, the referee of the JVM rows).
pub const MODULES: [&str; 6] = ["bus", "jctools", "netty", "rx", "reactor", "jmh"];

/// The command that builds (and fetches) the JVM side by hand, as the lab does.
pub const BUILD_COMMAND: &str = "just jvm";

/// The installs the JVM side needs, named in the errors.
const INSTALL_JDK: &str = "apt-get install openjdk-17-jdk-headless";
const INSTALL_MAVEN: &str = "apt-get install maven";

/// The file, beside the classes, that holds the digest of the sources they were built from.
const DIGEST_FILE: &str = "sources.digest";

/// Why the JVM side cannot be built here (no `java`, `javac` or `mvn`), with the install
/// command; `None` when it can.
pub fn unavailable() -> Option<String> {
    let runs = |cmd: &str, arg: &str| {
        Command::new(cmd)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !runs("java", "-version") || !runs("javac", "-version") {
        return Some(format!("no JDK: `java` or `javac` is not on PATH ({INSTALL_JDK})"));
    }
    if !runs("mvn", "-v") {
        return Some(format!("no Maven: `mvn` is not on PATH ({INSTALL_MAVEN})"));
    }
    None
}

/// The JVM sources: tools/jvm under the workspace root.
fn sources_dir() -> PathBuf {
    crate::machine::workspace_root().join("tools/jvm")
}

/// Where the classes go: target/jvm under the workspace root.
pub fn out_dir() -> PathBuf {
    crate::machine::workspace_root().join("target/jvm")
}

/// Builds the JVM side when its sources changed since the last build (or it was never
/// built); the output folder. The error is one line naming what is missing and the
/// command that installs or fetches it.
pub fn build() -> Result<PathBuf, String> {
    build_in(&sources_dir(), &out_dir())
}

/// [`build`] of the Maven project at `src` into `out`.
fn build_in(src: &Path, out: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let lock_path = out.join(".build.lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    // An exclusive flock held until `lock` is dropped at the end of this function (the
    // kernel releases it with the descriptor, on any exit).
    use std::os::fd::AsRawFd;
    // SAFETY: `lock` owns a valid open descriptor for the whole call; flock reads nothing
    // else.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("cannot lock {}: {e}", lock_path.display()));
    }
    let digest = digest(src)?;
    if built(out, &digest) {
        return Ok(out.to_path_buf());
    }
    if let Some(why) = unavailable() {
        return Err(why);
    }
    let pom = src.join("pom.xml");
    let output = Command::new("mvn")
        .args(["-B", "-q", "-Dstyle.color=never", "-f"])
        .arg(&pom)
        .arg(format!("-Dlab.jvm.out={}", out.display()))
        .arg("process-classes")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run mvn: {e}"))?;
    if !output.status.success() {
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        return Err(build_error(&text));
    }
    std::fs::write(out.join(DIGEST_FILE), &digest)
        .map_err(|e| format!("cannot write {}: {e}", out.join(DIGEST_FILE).display()))?;
    Ok(out.to_path_buf())
}

/// The one line a failed Maven build is reported by: a library Maven could not fetch (no
/// network, or Maven Central out of reach) names the command to fetch it where the network
/// reaches; anything else (javac's errors) gives Maven's first error line.
fn build_error(output: &str) -> String {
    let errors: Vec<String> = output
        .lines()
        .map(|l| strip_ansi(l).trim().to_string())
        .filter(|l| l.starts_with("[ERROR]"))
        .map(|l| l.trim_start_matches("[ERROR]").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let first = errors.first().map_or("mvn failed with no error line", String::as_str);
    let fetch = [
        "Could not resolve",
        "Could not transfer",
        "Failed to read artifact descriptor",
        "Non-resolvable",
        "Unknown host",
        "is offline",
        "Cannot access central",
        "could not be resolved",
    ];
    if errors.iter().any(|e| fetch.iter().any(|f| e.contains(f))) {
        let line = errors.iter().find(|e| fetch.iter().any(|f| e.contains(f)));
        return format!(
            "Maven could not fetch the JVM side's pinned libraries from Maven Central ({}); \
             where the network reaches it, run `{BUILD_COMMAND}` once (tools/jvm/pom.xml)",
            shorten(line.map_or(first, String::as_str))
        );
    }
    format!("the JVM side did not build (tools/jvm, mvn): {}", shorten(first))
}

/// `line` without terminal colour codes (ESC `[` … letter), which Maven may print.
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `line` cut to 300 characters, so an error stays one readable line.
fn shorten(line: &str) -> String {
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Whether `out` holds a build of sources with `digest` whose class path files are there
/// and name only jars that still exist (Maven's local repository can be emptied).
fn built(out: &Path, digest: &str) -> bool {
    if std::fs::read_to_string(out.join(DIGEST_FILE)).ok().as_deref() != Some(digest) {
        return false;
    }
    MODULES.iter().all(|m| {
        let Ok(cp) = std::fs::read_to_string(out.join(m).join("classpath.txt")) else {
            return false;
        };
        out.join(m).join("classes").is_dir()
            && cp.trim().split(':').filter(|p| !p.is_empty()).all(|p| Path::new(p).exists())
    })
}

/// A digest of every file under `src` but Maven's own outputs (`target/`): the poms, the
/// Java sources and anything else a build reads.
fn digest(src: &Path) -> Result<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let p = e?.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    walk(&p, out)?;
                }
            } else {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(src, &mut files).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    files.sort();
    let mut h = DefaultHasher::new();
    for f in &files {
        h.write(f.strip_prefix(src).unwrap_or(f).to_string_lossy().as_bytes());
        h.write(&std::fs::read(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?);
    }
    Ok(format!("{:016x}", h.finish()))
}

/// The class path `module`'s programs run with: its classes, then its dependencies'
/// (the shared module's classes and the pinned jars), built first when needed.
pub fn class_path(module: &str) -> Result<String, String> {
    if !MODULES.contains(&module) {
        return Err(format!("no JVM module '{module}'; valid: {}", MODULES.join(", ")));
    }
    let out = build()?;
    let dir = out.join(module);
    let deps = std::fs::read_to_string(dir.join("classpath.txt"))
        .map_err(|e| format!("cannot read {}: {e}", dir.join("classpath.txt").display()))?;
    let mut cp = vec![dir.join("classes").display().to_string()];
    cp.extend(deps.trim().split(':').filter(|p| !p.is_empty()).map(str::to_string));
    Ok(cp.join(":"))
}

/// `class_path` with the current Disruptor's jar replaced by seed 001's (3.4, copied into
/// `bus/alt/` by the build): what `jvm-disruptor-3.4` runs.
pub fn with_seed_disruptor(class_path: &str) -> Result<String, String> {
    let alt = out_dir().join("bus/alt");
    let jar = std::fs::read_dir(&alt)
        .map_err(|e| format!("cannot read {}: {e}", alt.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("disruptor-")))
        .ok_or_else(|| format!("no Disruptor 3.4 jar in {}", alt.display()))?;
    let mut swapped = false;
    let parts: Vec<String> = class_path
        .split(':')
        .map(|p| {
            let name = Path::new(p).file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with("disruptor-") && n.ends_with(".jar")) {
                swapped = true;
                jar.display().to_string()
            } else {
                p.to_string()
            }
        })
        .collect();
    if !swapped {
        return Err(format!("no Disruptor jar on the class path {class_path}"));
    }
    Ok(parts.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetch_failure_names_the_command_that_fetches() {
        let out = "[ERROR] Failed to execute goal on project bus: Could not resolve dependencies \
                   for project lab.jvm:bus:jar:1.0: Could not transfer artifact \
                   com.lmax:disruptor:jar:4.0.0 from/to central: Unknown host repo.maven.apache.org";
        let e = build_error(out);
        assert!(e.contains("could not fetch") && e.contains(BUILD_COMMAND), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_compile_failure_gives_mavens_first_error() {
        let e =
            build_error("[INFO] x\n[ERROR] COMPILATION ERROR : \n[ERROR] Bus.java:[1,1] oops\n");
        assert!(e.starts_with("the JVM side did not build") && e.contains("COMPILATION ERROR"));
    }

    #[test]
    fn the_digest_follows_the_sources_and_skips_the_outputs() {
        let dir = std::env::temp_dir().join(format!("lab-jvm-digest-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("m/target")).unwrap();
        std::fs::write(dir.join("pom.xml"), "a").unwrap();
        let d0 = digest(&dir).unwrap();
        std::fs::write(dir.join("m/target/X.class"), "b").unwrap();
        assert_eq!(digest(&dir).unwrap(), d0, "outputs are not sources");
        std::fs::write(dir.join("pom.xml"), "c").unwrap();
        assert_ne!(digest(&dir).unwrap(), d0, "an edited pom is a new build");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_seed_disruptor_takes_the_current_ones_place() {
        build().expect("the JVM side builds (a JDK, Maven and Maven Central)");
        let cp = class_path("bus").unwrap();
        assert!(cp.contains("disruptor-4.0.0.jar"), "{cp}");
        let seed = with_seed_disruptor(&cp).unwrap();
        assert!(
            seed.contains("disruptor-3.4.4.jar") && !seed.contains("disruptor-4.0.0"),
            "{seed}"
        );
        assert!(with_seed_disruptor("/a/b.jar").is_err());
    }

    /// A pinned library that Maven Central does not serve is refused by Maven Central
    /// itself (no stub): the one line names the artifact and the command that fetches.
    #[test]
    fn an_artifact_maven_cannot_fetch_is_one_line_naming_the_fetch_command() {
        let dir = std::env::temp_dir().join(format!("lab-jvm-missing-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/pom.xml"),
            "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>\
             <groupId>lab.test</groupId><artifactId>missing</artifactId><version>1</version>\
             <dependencies><dependency><groupId>com.lmax</groupId><artifactId>disruptor</artifactId>\
             <version>0.0.0-not-published</version></dependency></dependencies></project>",
        )
        .unwrap();
        let e = build_in(&dir.join("src"), &dir.join("out")).unwrap_err();
        assert!(e.contains("could not fetch") && e.contains(BUILD_COMMAND), "{e}");
        assert!(e.contains("0.0.0-not-published") && !e.contains('\n'), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unknown_module_lists_the_modules() {
        let e = class_path("nope").unwrap_err();
        assert!(e.contains("bus, jctools, netty, rx, reactor, jmh"), "{e}");
    }
}
