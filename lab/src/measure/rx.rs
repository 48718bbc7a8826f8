//! Seed 000's workloads on the JVM, one code path for both libraries: RxJava 3
//! (`tools/jvm/rx/src/main/java/RxBench.java`, rows `rx-…`) and Reactor 3.8, the seed's own library
//! (`tools/jvm/reactor/src/main/java/ReactorBench.java`, rows `reactor-…`), the JVM counterparts of the
//! reactive crate's rows.
//!
//! Both programs are the shared module's driver (`tools/jvm/bus/src/main/java/Seed000.java`) with the
//! library's workloads: one command line, one run loop, one outcome. RxJava is the
//! Reactive Streams library nearest to Reactor (`Flowable` for `Flux`, `Single` for `Mono`,
//! `observeOn(scheduler, false, 256)` for `publishOn(scheduler, 256)`); the experiments
//! speak RxBench's workload names, and [`Lib::word`] turns them into Reactor's. Each
//! program runs one named workload per process with warm-up and measured runs, checks each
//! run's result against its closed form and reports GC collections and time and bytes
//! allocated per run; the lab starts it through [`super::jvm::run_program_probed`]
//! (heartbeats, perf counters per run from its run marks; in a trace pass Java Flight
//! Recorder, whose recording becomes the pass's Chrome trace) on the JDK of `--jdk` ([`Jdk`];
//! seed 000 ran Temurin 25) with the collector of `--jvm-gc`.

use super::jvm;
use crate::profile::counters::RunCounters;
use crate::protocol::Ctx;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The command that installs what the JVM programs' build needs (the libraries come from
/// Maven Central with the build).
pub const INSTALL: &str = "apt-get install openjdk-17-jdk-headless maven";

/// A JVM library that runs seed 000's workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lib {
    /// RxJava 3 (tools/jvm/rx).
    Rx,
    /// Reactor 3.8, seed 000's library (tools/jvm/reactor).
    Reactor,
}

impl Lib {
    /// Every library, in the order their rows are planned.
    pub const ALL: [Lib; 2] = [Lib::Rx, Lib::Reactor];

    /// The `--impl` name, the rows' label prefix and the JVM module (tools/jvm/<name>).
    pub fn name(self) -> &'static str {
        match self {
            Lib::Rx => "rx",
            Lib::Reactor => "reactor",
        }
    }

    /// The library in words (`RxJava`, `Reactor`).
    pub fn library(self) -> &'static str {
        match self {
            Lib::Rx => "RxJava",
            Lib::Reactor => "Reactor",
        }
    }

    /// The program's main class.
    fn main_class(self) -> &'static str {
        match self {
            Lib::Rx => "RxBench",
            Lib::Reactor => "ReactorBench",
        }
    }

    /// The collector setting when `--jvm-gc` is not given: RxJava the lab's JVM default
    /// (serial, a fixed heap); Reactor the seed's own flags (`seed`), so that its rows
    /// reproduce seed 000's table as the seed ran it.
    pub fn default_gc(self) -> &'static str {
        match self {
            Lib::Rx => jvm::DEFAULT_GC,
            Lib::Reactor => SEED_GC,
        }
    }

    /// `rx_word` (RxBench's name of a workload, scheduler, buffer or a label built from
    /// them) in this library's words: Reactor's `Flux`, `Mono`, `publishOn` and `parallel`
    /// scheduler for RxJava's `Flowable`, `Single`, `observeOn` and `computation`. `None`:
    /// the library has no such thing (Reactor has no `Observable`, a stream without
    /// backpressure).
    pub fn word(self, rx_word: &str) -> Option<String> {
        if self == Lib::Rx {
            return Some(rx_word.to_string());
        }
        if rx_word.starts_with("observable") {
            return None;
        }
        let mut w = rx_word.to_string();
        for (rx, reactor) in [
            ("flowable-range", "flux-range"),
            ("single-just", "mono-just"),
            ("observe-on", "publish-on"),
            ("computation", "parallel"),
        ] {
            w = w.replace(rx, reactor);
        }
        Some(w)
    }
}

/// The collector setting that is seed 000's JVM flags: `-Xms512m -Xmx1g -XX:+UseG1GC`
/// (the maximum heap raised where an experiment's runs need more than 1 GiB).
pub const SEED_GC: &str = "seed";

/// The flags of [`SEED_GC`] for a heap of `heap` bytes.
fn seed_flags(heap: u64) -> String {
    let mb = (heap >> 20).max(1024);
    let max = if mb == 1024 { "1g".to_string() } else { format!("{mb}m") };
    format!("-Xms512m -Xmx{max} -XX:+UseG1GC")
}

/// A JDK `--jdk` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Jdk {
    /// OpenJDK 17, Debian's.
    #[serde(rename = "17")]
    J17,
    /// Temurin 25, seed 000's JDK.
    #[serde(rename = "25")]
    J25,
}

/// The JDK the JVM rows of seed 000's experiments run on by default: the seed's.
pub const DEFAULT_JDK: Jdk = Jdk::J25;

impl Jdk {
    /// `--jdk`'s names.
    pub const NAMES: [&'static str; 2] = ["17", "25"];

    /// `--jdk`'s parser: one line naming the valid choices.
    pub fn parse(s: &str) -> Result<Jdk, String> {
        match s {
            "17" => Ok(Jdk::J17),
            "25" => Ok(Jdk::J25),
            _ => Err(format!("--jdk: unknown '{s}'; valid: {}", Jdk::NAMES.join(", "))),
        }
    }

    /// The name (`17`, `25`).
    pub fn name(self) -> &'static str {
        match self {
            Jdk::J17 => "17",
            Jdk::J25 => "25",
        }
    }

    /// The `java` the lab runs: `LAB_JDK17` or `LAB_JDK25` when set (a path to a `java`),
    /// else the Debian OpenJDK 17 or the Temurin 25 under /usr/lib/jvm.
    pub fn java(self) -> PathBuf {
        let (var, default) = match self {
            Jdk::J17 => ("LAB_JDK17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"),
            Jdk::J25 => ("LAB_JDK25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"),
        };
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map_or(PathBuf::from(default), PathBuf::from)
    }

    /// What installs it. Debian (bookworm) has no openjdk-25 package: JDK 25 is Adoptium's
    /// Temurin, whose `temurin-25-jdk` package installs to the path [`Jdk::java`] looks in.
    fn install(self) -> &'static str {
        match self {
            Jdk::J17 => "apt-get install openjdk-17-jdk-headless",
            Jdk::J25 => {
                "Debian has no openjdk-25 package: install Adoptium's Temurin 25 \
                 (`apt-get install temurin-25-jdk` from packages.adoptium.net), or set LAB_JDK25 \
                 to a JDK 25's bin/java, or choose --jdk 17"
            }
        }
    }

    /// Why this JDK cannot run here (one line: the path the lab looked in and what installs
    /// it); `None` when its `java -version` runs.
    pub fn unavailable(self) -> Option<String> {
        let java = self.java();
        let runs = Command::new(&java)
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        (!runs).then(|| {
            format!(
                "--jdk {}: no JDK {} at {} ({})",
                self.name(),
                self.name(),
                java.display(),
                self.install()
            )
        })
    }
}

/// How one library's rows' JVMs are started: the library, the JDK, class path, flags,
/// collector, the planted fault.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LibSettings {
    /// The library.
    pub lib: Lib,
    /// The JDK (`--jdk`).
    pub jdk: Jdk,
    /// The `java` it runs.
    pub java: String,
    /// The class path (the library's module, the shared module's classes, its jars).
    pub classpath: String,
    /// JVM flags: the collector's, then `--jvm-flags`.
    pub flags: String,
    /// The collector setting's name (`--jvm-gc`, or the library's default).
    pub gc: String,
    /// The planted fault (`--fault drop-one`: every run one op short, so INVALID).
    pub fault: bool,
}

impl LibSettings {
    /// Builds the library's program (when needed) and the settings on `jdk` for collector
    /// `gc` (one of [`jvm::GCS`] or [`SEED_GC`]; `None`: the library's default) with `extra`
    /// flags and a heap of `heap` bytes for the sized collectors; `Err` (one line) when the
    /// library or the JDK cannot run here or a flag is refused.
    pub fn prepare(
        lib: Lib,
        jdk: Jdk,
        (gc, extra): (Option<&str>, &str),
        fault: bool,
        heap: u64,
    ) -> Result<LibSettings, String> {
        if let Some(why) = unavailable(lib) {
            return Err(why);
        }
        if let Some(why) = jvm::check_extra_flags(extra) {
            return Err(why);
        }
        let gc = gc.unwrap_or(lib.default_gc());
        let flags = if gc == SEED_GC { Some(seed_flags(heap)) } else { jvm::gc_flags(gc, heap) };
        let flags = flags.ok_or_else(|| {
            format!("--jvm-gc: unknown collector '{gc}'; valid: {}", gc_names().join(", "))
        })?;
        if let Some(why) = jdk.unavailable() {
            return Err(why);
        }
        let classpath = jvm::build_group(lib.name())?;
        Ok(LibSettings {
            lib,
            jdk,
            java: jdk.java().display().to_string(),
            classpath,
            flags: format!("{flags} {extra}").trim().to_string(),
            gc: gc.to_string(),
            fault,
        })
    }

    /// The library's program as the launcher starts it: its JDK, flags and class path.
    pub fn program(&self) -> super::jvm_program::JvmProgram {
        super::jvm_program::JvmProgram {
            java: self.java.clone(),
            flags: self.flags.split_whitespace().map(str::to_string).collect(),
            class_path: self.classpath.clone(),
            main_class: self.lib.main_class().to_string(),
        }
    }

    /// The row label of `rx_word` (a workload or buffer in RxBench's words): the library's
    /// prefix (`fault-` first for the planted fault) and its word; `None` where the library
    /// has no such thing.
    pub fn label(&self, rx_word: &str) -> Option<String> {
        let w = self.lib.word(rx_word)?;
        Some(format!("{}{}-{w}", if self.fault { "fault-" } else { "" }, self.lib.name()))
    }

    /// The library and JDK a row ran, for its results and the report: `Reactor 3.8.8 on
    /// JDK 25.0.3` (the versions the JVM reported).
    pub fn library_text(&self, o: &RxOutcome) -> String {
        let jdk = o.jvm["version"]
            .as_str()
            .map_or(format!("JDK {}", self.jdk.name()), |v| format!("JDK {v}"));
        format!("{} {} on {jdk}", self.lib.library(), o.version().unwrap_or("?"))
    }
}

/// `--jvm-gc`'s names: the JVM rows' collectors and the seed's flags.
pub fn gc_names() -> Vec<&'static str> {
    jvm::GCS.iter().map(|g| g.0).chain([SEED_GC]).collect()
}

/// The heap of the JVM rows of subscribe-overhead and publish-on-latency: the seed's
/// workloads keep little alive (one range, one subscription, a 256-slot queue); 1 GiB, the
/// sized collectors' least, as seed 000 ran `-Xmx1g`. Experiments whose runs hold other
/// amounts choose theirs.
pub const HEAP: u64 = 1 << 30;

/// Why `lib` cannot run here (with the install command); `None` when it can.
pub fn unavailable(lib: Lib) -> Option<String> {
    jvm::group_unavailable(lib.name())
        .map(|why| format!("{} cannot run here: {why}", lib.library()))
}

/// One run of a library's program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxRun {
    /// Wall time, ns (System.nanoTime, CLOCK_MONOTONIC).
    pub ns: u64,
    /// What the workload returned (-1: observe-on failed or timed out).
    pub result: i64,
    /// Collections during the run (every GarbageCollectorMXBean).
    pub gc_count: u64,
    /// Their time, ms.
    pub gc_ms: u64,
    /// Bytes allocated by every live thread during the run.
    pub allocated_bytes: u64,
    /// latency: elements stamped on another thread than the one that received them.
    #[serde(default)]
    pub crossed: u64,
    /// latency, measured runs: each element's nanoTime from the map stamp to onNext, in
    /// arrival order.
    #[serde(default)]
    pub latency_ns: Vec<u64>,
    /// backpressure: the run's counts (tools/jvm/rx/src/main/java/RxBackpressure.java).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bp: Option<RxBpRun>,
    /// heap-growth: the run's live heap and depth (tools/jvm/rx/src/main/java/RxHeapGrowth.java).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<RxHeapRun>,
}

/// One backpressure run: `onBackpressureBuffer(capacity, onOverflow, strategy)`, the source
/// counted as it emits, the subscriber's counts, and the run's own check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxBpRun {
    /// Elements that left the source.
    pub emitted: u64,
    /// The last of them (-1: none); under ERROR, the element that overflowed.
    pub last_emitted: i64,
    /// Elements the subscriber received.
    pub delivered: u64,
    /// Elements dropped (onOverflow calls) plus MissingBackpressureExceptions the buffer
    /// signalled.
    pub overflows: u64,
    /// publish-on-1: the overflows when the range had finished, before any request.
    pub overflows_at_once: Option<u64>,
    /// Whether the delivered elements increased strictly.
    pub in_order: bool,
    /// `complete`, `error: <exception>`, or `none` (no terminal signal in time).
    pub terminal: String,
    /// grid: from the first element to the terminal signal, ms.
    pub elapsed_ms: Option<f64>,
    /// The run's own check: `ok` or what failed.
    pub check: String,
}

/// One heap-growth run: live heap after full collections and the backlog's depth.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxHeapRun {
    /// Live heap before the run: after System.gc(), the heap pools' collection usage.
    pub live_before_bytes: u64,
    /// The largest of `live_bytes`.
    pub live_peak_bytes: i64,
    /// Live heap sampled on the source's thread after every N/8-th message (same reading).
    pub live_bytes: Vec<u64>,
    /// Messages the consumer received.
    pub received: u64,
    /// The largest backlog (produced − received) the consumer saw.
    pub max_depth: u64,
    /// (ms since the run began, backlog) every N/200 messages.
    pub depth_series: Vec<(f64, f64)>,
    /// The consumer's accumulator.
    pub checksum: i64,
    /// Whether the messages arrived in order.
    pub in_order: bool,
    /// `complete`, `error: …` or `none`.
    pub terminal: String,
    /// The run's own check: `ok` or what failed.
    pub check: String,
}

/// What a library's program returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RxOutcome {
    /// The workload (in the library's words).
    pub workload: String,
    /// N.
    pub n: u64,
    /// The closed form the program checked against.
    pub expected: i64,
    /// RxJava's version (its jar's manifest), from RxBench.
    #[serde(default)]
    pub rxjava_version: Option<String>,
    /// Reactor's version (its jar's manifest), from ReactorBench.
    #[serde(default)]
    pub reactor_version: Option<String>,
    /// The JVM: version, flags, collectors, heap.
    pub jvm: Value,
    /// Warm-up runs.
    pub warmup: Vec<RxRun>,
    /// Measured runs.
    pub runs: Vec<RxRun>,
}

impl RxOutcome {
    /// The library's version, whichever program ran.
    pub fn version(&self) -> Option<&str> {
        self.rxjava_version.as_deref().or(self.reactor_version.as_deref())
    }
}

/// Runs the library's `workload` (in RxBench's words: [`Lib::word`] translates it and
/// `--scheduler`'s value in `extra`) over `n` ops, `warmup` + `runs` runs, with more
/// arguments in `extra`; its outcome and the perf counters of its measured runs (per op).
pub fn run(
    s: &LibSettings,
    workload: &str,
    n: u64,
    (warmup, runs): (usize, usize),
    extra: &[String],
    ctx: &mut Ctx,
) -> Result<(RxOutcome, Vec<RunCounters>), String> {
    // In the trace pass: Java Flight Recorder and the kernel's scheduler recorder.
    let probes = super::jvm_probes::Probes::prepare(&ctx.pass)?;
    let word = |w: &str| s.lib.word(w).ok_or_else(|| format!("{} has no '{w}'", s.lib.library()));
    let workload = word(workload)?;
    let extra = extra.iter().map(|a| word(a)).collect::<Result<Vec<String>, String>>()?;
    let mut cmd = s.program().command(Some(&probes), &["--workload", &workload]);
    cmd.args(["--n", &n.to_string()])
        .args(["--warmup", &warmup.to_string(), "--runs", &runs.to_string()])
        .args(&extra);
    if s.fault {
        cmd.args(["--fault", "drop-one"]);
    }
    let r = jvm::run_program_probed(&mut cmd, ctx, probes, (runs, warmup + runs), n)?;
    for note in r.notes {
        ctx.note(format!("{}: {note}", s.lib.name()));
    }
    let tool = s.lib.main_class();
    let o: RxOutcome =
        serde_json::from_value(r.outcome).map_err(|e| format!("unreadable {tool} outcome: {e}"))?;
    if o.runs.len() != runs || o.warmup.len() != warmup || o.n != n {
        return Err(format!(
            "{tool} ran {} warm-up and {} measured runs of {} where {warmup}, {runs} of {n} \
             were asked",
            o.warmup.len(),
            o.runs.len(),
            o.n
        ));
    }
    Ok((o, r.counters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_collector_or_a_collector_flag_is_one_line_naming_the_choices() {
        if let Some(why) = unavailable(Lib::Rx) {
            panic!("this test needs RxJava: {why}");
        }
        let prep = |gc: Option<&str>, extra: &str| {
            LibSettings::prepare(Lib::Rx, Jdk::J17, (gc, extra), false, HEAP)
        };
        let e = prep(Some("zgc"), "").unwrap_err();
        assert!(e.contains("valid: g1, parallel, serial, g1-default, seed"), "{e}");
        let e = prep(Some("serial"), "-XX:+UseZGC").unwrap_err();
        assert!(e.contains("--jvm-gc"), "{e}");
        let s = prep(Some("serial"), "-Xmx2g").expect("RxJava is installed");
        assert!(s.flags.starts_with("-XX:+UseSerialGC") && s.flags.ends_with("-Xmx2g"));
        assert!(s.classpath.contains("rxjava-3.1.12.jar"), "{}", s.classpath);
        let s = LibSettings::prepare(Lib::Reactor, Jdk::J17, (None, ""), false, HEAP).unwrap();
        assert_eq!(s.flags, "-Xms512m -Xmx1g -XX:+UseG1GC", "the seed's flags by default");
        assert!(s.classpath.contains("reactor-core-3.8.8.jar"), "{}", s.classpath);
    }

    #[test]
    fn reactor_speaks_its_own_words_and_has_no_observable() {
        assert_eq!(Lib::Reactor.word("observe-on[computation]").unwrap(), "publish-on[parallel]");
        assert_eq!(Lib::Reactor.word("flowable-range").unwrap(), "flux-range");
        assert_eq!(Lib::Reactor.word("single-just").unwrap(), "mono-just");
        assert_eq!(Lib::Reactor.word("--case").unwrap(), "--case");
        assert_eq!(Lib::Reactor.word("observable (unbounded)"), None);
        assert_eq!(Lib::Rx.word("observable").unwrap(), "observable");
        assert_eq!(seed_flags(HEAP), "-Xms512m -Xmx1g -XX:+UseG1GC");
        assert_eq!(seed_flags(3 << 30), "-Xms512m -Xmx3072m -XX:+UseG1GC");
    }

    #[test]
    fn a_jdk_that_is_not_there_names_the_path_and_what_installs_it() {
        assert_eq!(Jdk::parse("8").unwrap_err(), "--jdk: unknown '8'; valid: 17, 25");
        assert_eq!(Jdk::parse("25").unwrap(), Jdk::J25);
    }
}
