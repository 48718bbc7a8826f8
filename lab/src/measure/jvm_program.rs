//! The one launcher of the lab's JVM programs: which JDK (`java`), the JVM flags (the
//! collector's, then `--jvm-flags`), the class path of a tools/jvm module and the main
//! class; the pass's listeners ([`Probes`]: perf counters on every thread in a timed fork,
//! Java Flight Recorder and the kernel's scheduler in the trace pass) add their flags here
//! and only here. Bus (disruptor-vs-lbq's JVM rows and their own loops), RxBench and
//! ReactorBench (seed 000's rows), NettyAlloc (seed 004's) and the echo servers (seed 003's)
//! are each a [`JvmProgram`] with their own arguments after the main class.

use super::jvm_probes::Probes;
use serde::{Deserialize, Serialize};
use std::process::Command;

/// The `java` of the default JDK: the one on PATH.
pub const DEFAULT_JAVA: &str = "java";

/// One JVM program as the lab starts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JvmProgram {
    /// The JDK's `java` ([`DEFAULT_JAVA`], or a JDK's own path).
    pub java: String,
    /// JVM flags, in order: the collector's, then the user's.
    pub flags: Vec<String>,
    /// The class path (a tools/jvm module's, built by Maven).
    pub class_path: String,
    /// The main class.
    pub main_class: String,
}

impl JvmProgram {
    /// The program `main_class` of module `module` (built first when needed), on `java`
    /// with `flags` (whitespace-separated).
    pub fn of_module(
        module: &str,
        main_class: &str,
        java: &str,
        flags: &str,
    ) -> Result<Self, String> {
        Ok(JvmProgram {
            java: java.to_string(),
            flags: flags.split_whitespace().map(str::to_string).collect(),
            class_path: super::jvm_build::class_path(module)?,
            main_class: main_class.to_string(),
        })
    }

    /// The command line: `java`, the flags, the listeners' flags (`probes`: Java Flight
    /// Recorder in the trace pass; none when `None`), the class path, the main class, then
    /// `args`.
    pub fn command<S: AsRef<std::ffi::OsStr>>(
        &self,
        probes: Option<&Probes>,
        args: &[S],
    ) -> Command {
        let mut cmd = Command::new(&self.java);
        cmd.args(&self.flags);
        if let Some(p) = probes {
            cmd.args(p.java_flags());
        }
        cmd.arg("-cp").arg(&self.class_path).arg(&self.main_class).args(args);
        cmd
    }

    /// The flags as one string, for results and reports.
    pub fn flags_text(&self) -> String {
        self.flags.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_puts_flags_then_probes_then_the_class_then_the_arguments() {
        let p = JvmProgram {
            java: "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java".into(),
            flags: vec!["-XX:+UseSerialGC".into(), "-Xmx1g".into()],
            class_path: "a:b".into(),
            main_class: "Bus".into(),
        };
        let cmd = p.command(None, &["--impl", "lbq"]);
        assert_eq!(cmd.get_program(), "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(args, ["-XX:+UseSerialGC", "-Xmx1g", "-cp", "a:b", "Bus", "--impl", "lbq"]);
        assert_eq!(p.flags_text(), "-XX:+UseSerialGC -Xmx1g");
    }
}
