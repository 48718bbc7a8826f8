//! The Netty rows of `alloc-pooled-vs-unpooled`: seed 004's own subject, Netty 4.2's
//! `PooledByteBufAllocator` and `UnpooledByteBufAllocator` with heap and direct buffers, run
//! by `tools/jvm/netty/src/main/java/NettyAlloc.java` (JVM module `netty`, Netty 4.2 from Maven Central).
//!
//! A Netty cell is a fork like the Rust ones: the lab's child starts `java … NettyAlloc`
//! as its own child, relays its heartbeats, counts its threads' perf events between its
//! run marks ([`crate::measure::jvm_probes`]) and turns its outcome into the experiment's
//! [`AllocOutcome`], so the rows land in the same tables, rounds and paired ratios as the
//! Rust pool and the global allocator. NettyAlloc is the plain loop itself (the
//! allocator's API as a user calls it, nothing between): no calibration row is needed to
//! show that the harness slows it down.
//!
//! The check is the Rust rows' kind, recomputed here rather than taken from the JVM: each
//! iteration's checksum of the bytes written and read back must be the closed form for the
//! cycles it ran ([`super::first_bytes`]), and every buffer must have been released.

use super::{AllocOutcome, Cell, Iteration, Mode};
use crate::measure::jvm::Seen;
use crate::measure::jvm_probes::Probes;
use crate::profile::counters::RunCounters;
use crate::protocol::Ctx;
use crate::results::{Results, Status, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::process::Command;

/// The JVM group whose jars the Netty rows need.
pub const GROUP: &str = "netty";

/// The JVM flags of every Netty fork: the lab's default collector (serial, see
/// tools/jvm/README.md) with a fixed 1 GiB heap, and Netty's leak detector off, as seed
/// 004's benchmark ran it (`-Dio.netty.noResourceLeakDetection` in its JMH arguments): the
/// detector samples allocations, which the Rust pool has nothing like. No pre-touch: on
/// these VMs it costs seconds a fork, and the JIT warm-up has touched the young generation
/// before the first iteration.
pub const FLAGS: [&str; 4] =
    ["-XX:+UseSerialGC", "-Xms1g", "-Xmx1g", "-Dio.netty.leakDetection.level=disabled"];

/// What a Netty cell needs to start its JVM.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JvmCell {
    /// The class path (`measure::jvm::build_group`).
    pub classpath: String,
    /// JVM flags.
    pub flags: Vec<String>,
    /// JIT warm-up before the warm-up iterations, ms.
    pub jit_warmup_ms: u64,
}

impl JvmCell {
    /// NettyAlloc as the launcher starts it: the default JDK, these flags, this class path.
    pub fn program(&self) -> crate::measure::jvm_program::JvmProgram {
        crate::measure::jvm_program::JvmProgram {
            java: crate::measure::jvm_program::DEFAULT_JAVA.to_string(),
            flags: self.flags.clone(),
            class_path: self.classpath.clone(),
            main_class: "NettyAlloc".to_string(),
        }
    }
}

/// The JVM's side of a Netty fork.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NettyReport {
    /// `PooledByteBufAllocator` or `UnpooledByteBufAllocator`.
    pub allocator_class: String,
    /// The buffer class it handed out (e.g. `PooledUnsafeHeapByteBuf`).
    pub buffer_class: String,
    /// Netty's version, from its jar.
    pub netty_version: Option<String>,
    /// Whether Netty uses `sun.misc.Unsafe`.
    pub has_unsafe: bool,
    /// Whether unpooled direct buffers skip the JDK's Cleaner (needs reflective access the
    /// JDK 17 default does not grant: `false` means `ByteBuffer.allocateDirect`).
    pub direct_no_cleaner: bool,
    /// The JIT warm-up: ms and cycles.
    pub jit_warmup_ms: f64,
    /// See `jit_warmup_ms`.
    pub jit_warmup_cycles: u64,
    /// The planted fault, if any.
    pub fault: Option<String>,
    /// The JVM (version, flags, collectors), as NettyAlloc reports it.
    pub jvm: Value,
    /// Per measured iteration: collections, collection ms, bytes the `alloc` thread
    /// allocated on the heap per op, its CPU ms.
    pub gc_count: Vec<u64>,
    /// See `gc_count`.
    pub gc_ms: Vec<f64>,
    /// See `gc_count`.
    pub allocated_bytes_per_op: Vec<f64>,
    /// See `gc_count`.
    pub cpu_ms: Vec<f64>,
    /// perf counters per op, per measured iteration (or one for the whole JVM), the process
    /// and its threads by kind (`alloc`, GC, JIT compiler, other).
    pub counters: Vec<RunCounters>,
}

/// A Netty row's JVM side in results.json: its forks' reports gathered (the valid forks).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NettyRow {
    /// As [`NettyReport`] (the first fork's; every fork runs the same classes).
    pub allocator_class: String,
    /// See `allocator_class`.
    pub buffer_class: String,
    /// See `allocator_class`.
    pub netty_version: Option<String>,
    /// See `allocator_class`.
    pub has_unsafe: bool,
    /// See `allocator_class`.
    pub direct_no_cleaner: bool,
    /// See `allocator_class`.
    pub jvm: Value,
    /// Per fork: the JIT warm-up's ms and cycles.
    pub jit_warmup_ms: Vec<f64>,
    /// See `jit_warmup_ms`.
    pub jit_warmup_cycles: Vec<u64>,
    /// Every measured iteration of every valid fork, as in [`NettyReport`].
    pub gc_count: Vec<u64>,
    /// See `gc_count`.
    pub gc_ms: Vec<f64>,
    /// See `gc_count`.
    pub allocated_bytes_per_op: Vec<f64>,
    /// See `gc_count`.
    pub cpu_ms: Vec<f64>,
    /// See `gc_count`.
    pub counters: Vec<RunCounters>,
}

impl NettyRow {
    /// The forks' reports gathered; `None` without any.
    pub fn of<'a>(reports: impl Iterator<Item = &'a NettyReport>) -> Option<NettyRow> {
        let mut row: Option<NettyRow> = None;
        for r in reports {
            let x = row.get_or_insert_with(|| NettyRow {
                allocator_class: r.allocator_class.clone(),
                buffer_class: r.buffer_class.clone(),
                netty_version: r.netty_version.clone(),
                has_unsafe: r.has_unsafe,
                direct_no_cleaner: r.direct_no_cleaner,
                jvm: r.jvm.clone(),
                ..Default::default()
            });
            x.jit_warmup_ms.push(r.jit_warmup_ms);
            x.jit_warmup_cycles.push(r.jit_warmup_cycles);
            x.gc_count.extend(&r.gc_count);
            x.gc_ms.extend(&r.gc_ms);
            x.allocated_bytes_per_op.extend(&r.allocated_bytes_per_op);
            x.cpu_ms.extend(&r.cpu_ms);
            x.counters.extend(r.counters.iter().cloned());
        }
        row
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct JavaIteration {
    ops_per_ms: f64,
    first_cycle: u64,
    checksum: u64,
    released: u64,
    #[serde(default)]
    cpu_ms: f64,
    #[serde(default)]
    allocated_bytes_per_op: f64,
    #[serde(default)]
    gc_count: u64,
    #[serde(default)]
    gc_ms: f64,
}

#[derive(Debug, Deserialize)]
struct JavaOutcome {
    size: usize,
    ops: u64,
    allocator_class: String,
    buffer_class: String,
    netty_version: Option<String>,
    has_unsafe: bool,
    direct_no_cleaner: bool,
    jit_warmup_ms: f64,
    jit_warmup_cycles: u64,
    fault: Option<String>,
    jvm: Value,
    warmup: Vec<JavaIteration>,
    runs: Vec<JavaIteration>,
}

/// The lab's own view of a JVM iteration: its expected checksum computed here.
fn iteration(j: &JavaIteration, size: usize, ops: u64) -> Iteration {
    Iteration {
        ops_per_ms: j.ops_per_ms,
        checksum: j.checksum,
        expected: if size == 0 { 0 } else { super::first_bytes(j.first_cycle, ops) },
        released: Some(j.released),
        ops,
    }
}

/// The command line of a Netty cell's JVM (flags of `probes` included).
fn command(cell: &Cell, j: &JvmCell, probes: &Probes) -> Result<Command, String> {
    let (allocator, memory) =
        cell.mode.netty().ok_or_else(|| format!("not a Netty row: {}", cell.mode.name()))?;
    let mut cmd =
        j.program().command(Some(probes), &["--allocator", allocator, "--memory", memory]);
    cmd.args(["--size", &cell.size.to_string(), "--ops", &cell.ops.to_string()])
        .args(["--warmup", &cell.warmup.to_string(), "--runs", &cell.runs.to_string()])
        .args(["--jit-warmup-ms", &j.jit_warmup_ms.to_string()]);
    if cell.mode.is_fault() {
        cmd.args(["--fault", "leak-one"]);
    }
    Ok(cmd)
}

/// Runs a Netty cell: NettyAlloc with the cell's settings, heartbeats relayed, counters
/// read by run mark.
pub fn run(cell: &Cell, ctx: &mut Ctx) -> Result<AllocOutcome, String> {
    let j = cell.jvm.as_ref().ok_or("a Netty cell without its JVM settings")?;
    let mut probes = Probes::prepare(&ctx.pass)?;
    let mut cmd = command(cell, j, &probes)?;
    probes.launching();
    let outcome = crate::measure::jvm::converse(&mut cmd, ctx, "the JVM", |seen| match seen {
        Seen::Started(pid) => probes.started(pid),
        Seen::Line(l) => probes.line(l),
    })?;
    let o: JavaOutcome =
        serde_json::from_value(outcome).map_err(|e| format!("unreadable JVM outcome: {e}"))?;
    if (o.size, o.ops) != (cell.size, cell.ops) {
        return Err(format!(
            "NettyAlloc ran size {} × {} ops where the cell asked for {} × {}",
            o.size, o.ops, cell.size, cell.ops
        ));
    }
    let all_runs = o.warmup.len() + o.runs.len();
    let all_ops = o.jit_warmup_cycles + all_runs as u64 * o.ops;
    let report = NettyReport {
        allocator_class: o.allocator_class,
        buffer_class: o.buffer_class,
        netty_version: o.netty_version,
        has_unsafe: o.has_unsafe,
        direct_no_cleaner: o.direct_no_cleaner,
        jit_warmup_ms: o.jit_warmup_ms,
        jit_warmup_cycles: o.jit_warmup_cycles,
        fault: o.fault,
        jvm: o.jvm,
        gc_count: o.runs.iter().map(|r| r.gc_count).collect(),
        gc_ms: o.runs.iter().map(|r| r.gc_ms).collect(),
        allocated_bytes_per_op: o.runs.iter().map(|r| r.allocated_bytes_per_op).collect(),
        cpu_ms: o.runs.iter().map(|r| r.cpu_ms).collect(),
        counters: probes.counters(o.runs.len(), all_runs, o.ops, all_ops),
    };
    Ok(AllocOutcome {
        warmup: o.warmup.iter().map(|r| iteration(r, o.size, o.ops)).collect(),
        runs: o.runs.iter().map(|r| iteration(r, o.size, o.ops)).collect(),
        pool_cached_after: 0,
        jvm: Some(report),
    })
}

/// Which rows run: the named ones (`None`: the default set; `all`: the same), given why
/// the Netty rows cannot run here (`netty_missing`) and whether planted faults are offered.
/// A Netty row named while its jars are missing is bad input naming the install command;
/// left out of the default set, the second value says so (for stderr and the notes).
pub fn chosen_modes(
    requested: Option<&str>,
    netty_missing: Option<&str>,
    faults: bool,
) -> Result<(Vec<Mode>, Option<String>), String> {
    let defaults = requested.is_none_or(|r| r.trim() == "all");
    let names: Vec<&str> = match requested {
        Some(r) if !defaults => r.split(',').map(str::trim).filter(|x| !x.is_empty()).collect(),
        _ => Mode::ALL.iter().filter(|m| !m.is_fault()).map(|m| m.name()).collect(),
    };
    let mut modes = Vec::new();
    let mut left_out = None;
    for name in names {
        let mode = Mode::ALL
            .into_iter()
            .find(|m| m.name() == name && (faults || !m.is_fault()))
            .ok_or_else(|| {
                let valid: Vec<&str> =
                    Mode::ALL.iter().filter(|m| !m.is_fault()).map(|m| m.name()).collect();
                format!("--modes: unknown mode '{name}'; valid: {}, all", valid.join(", "))
            })?;
        if let (true, Some(why)) = (mode.netty().is_some(), netty_missing) {
            if !defaults {
                return Err(format!("mode '{name}' cannot run here: {why}"));
            }
            left_out = Some(format!("the Netty rows were left out of the default modes: {why}"));
            continue;
        }
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if modes.is_empty() {
        return Err("--modes: no mode given".into());
    }
    Ok((modes, left_out))
}

/// The Netty rows' JVM evidence: medians over the measured iterations of every valid fork.
pub fn jvm_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Netty rows: the JVM's side (median over the measured iterations of every valid fork)",
        &[
            "row",
            "size",
            "buffer class",
            "heap B/op (alloc thread)",
            "GCs/iteration",
            "GC ms/iteration",
            "task-clock ns/op: alloc",
            "GC threads",
            "VM thread",
            "JIT threads",
            "other JVM threads",
            "process",
            "JIT warm-up ms",
        ],
    );
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let d = super::detail(x);
        let Some(j) = d.jvm else { continue };
        let med =
            |v: Vec<f64>| crate::stats::median(&v).map_or("–".into(), |m| format!("{m:.1}"));
        let clock = |thread: Option<&str>| {
            med(j
                .counters
                .iter()
                .filter_map(|c| match thread {
                    Some(k) => c.threads.get(k)?.get("task-clock").copied().flatten(),
                    None => c.process.get("task-clock").copied().flatten(),
                })
                .collect())
        };
        t.rows.push(vec![
            x.label.clone(),
            d.size.to_string(),
            j.buffer_class.clone(),
            med(j.allocated_bytes_per_op),
            med(j.gc_count.iter().map(|&c| c as f64).collect()),
            med(j.gc_ms),
            clock(Some("alloc")),
            clock(Some("GC threads")),
            clock(Some("VM thread")),
            clock(Some("JIT compiler threads")),
            clock(Some("other JVM threads")),
            clock(None),
            med(j.jit_warmup_ms),
        ]);
    }
    t.note = Some(
        "Per op: bytes the alloc thread allocated on the Java heap (ThreadMXBean), perf's \
         task-clock of the java process's threads by kind between NettyAlloc's run marks (the \
         serial collector works in the VM thread, a column of its own); per \
         iteration: collections and their time (GarbageCollectorMXBeans). Direct buffers' \
         memory is off the heap and not in the bytes."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MISSING: &str = "no Maven: `mvn` is not on PATH (apt-get install maven)";

    #[test]
    fn default_modes_include_netty_only_where_it_is_installed() {
        let (m, note) = chosen_modes(None, None, false).unwrap();
        assert_eq!(m.len(), 6, "{m:?}");
        assert_eq!(note, None);
        let (m, note) = chosen_modes(None, Some(MISSING), false).unwrap();
        assert_eq!(m, [Mode::Pooled, Mode::Unpooled]);
        assert!(note.unwrap().contains("apt-get install maven"));
        let (m, _) = chosen_modes(Some("all"), Some(MISSING), false).unwrap();
        assert_eq!(m, [Mode::Pooled, Mode::Unpooled]);
    }

    /// Named without its jars: the one-line error (exit 2 through `Error::Usage`, as
    /// every plan error) names the install command.
    #[test]
    fn a_netty_row_named_without_its_jars_is_bad_input_naming_the_install() {
        let e = chosen_modes(Some("pooled,netty-pooled-heap"), Some(MISSING), false).unwrap_err();
        assert!(e.contains("'netty-pooled-heap'") && e.contains("apt-get install maven"));
        assert_eq!(e.lines().count(), 1);
        let e = chosen_modes(Some("pooled,nope"), None, false).unwrap_err();
        assert!(e.contains("unknown mode 'nope'") && e.contains("netty-unpooled-direct"), "{e}");
        let e = chosen_modes(Some("fault-netty-pooled-heap"), None, false).unwrap_err();
        assert!(e.contains("unknown mode"), "faults only with LAB_FAULTS=1: {e}");
        let (m, _) = chosen_modes(Some("fault-netty-pooled-heap"), None, true).unwrap();
        assert_eq!(m, [Mode::FaultNettyPooledHeap]);
    }

    #[test]
    fn the_jvm_checksum_is_recomputed_by_the_lab() {
        let j = JavaIteration {
            ops_per_ms: 1.0,
            first_cycle: 255,
            checksum: 256,
            released: 3,
            cpu_ms: 0.0,
            allocated_bytes_per_op: 0.0,
            gc_count: 0,
            gc_ms: 0.0,
        };
        // Cycles 255, 256, 257 write 0, 1, 2.
        let it = iteration(&j, 16, 3);
        assert_eq!(it.expected, 3);
        assert!(!it.check().valid, "a checksum the closed form does not give");
        let ok = iteration(&JavaIteration { checksum: 3, ..j }, 16, 3);
        assert!(ok.check().valid);
        let leak = iteration(&JavaIteration { checksum: 3, released: 2, ..j }, 16, 3);
        assert_eq!(leak.check().verdict, "released 2 of 3 buffers");
    }
}
