//! `disruptor-vs-lbq`'s plan: its options checked, the cells (variant × wait × allocator
//! × P), the baseline and the pairs its ratios are taken of.

use super::{allocators, collectors, inrun, DvlArgs, DvlKey, DEFAULT_HEAP_MESSAGES};
use crate::experiment::{CellPlan, Plan, Shared, Switch};
use crate::measure::harness::CellSpec;
use crate::measure::variants::{self, is_jvm, WAITS};
use crate::units::parse_list;
use serde_json::json;

fn chosen_variants(a: &DvlArgs, notes: &mut Vec<String>) -> Result<Vec<String>, String> {
    let explicit = a.variants.is_some();
    let requested: Vec<String> = match a.variants.as_deref() {
        Some("all") => variants::all()
            .into_iter()
            .filter(|v| !v.name.starts_with("fault-") && v.unavailable.is_none())
            .map(|v| v.name.to_string())
            .collect(),
        Some(list) => parse_list(list),
        None => vec!["locked".to_string(), "ring".to_string()],
    };
    if requested.is_empty() {
        return Err("--variants: no variant given".into());
    }
    let mut chosen = Vec::new();
    for name in &requested {
        let info = variants::find(name).ok_or_else(|| variants::unknown_variant(name))?;
        let missing = is_jvm(name).then(|| crate::measure::jvm::variant_unavailable(name));
        if let Some(Some(why)) = &missing {
            if a.variants.as_deref() != Some("all") {
                return Err(format!("variant '{name}' cannot run here: {why}"));
            }
            notes.push(format!("'{name}' was left out of `all`: {why}."));
            continue;
        }
        if let Some(why) = info.unavailable {
            if explicit {
                return Err(format!("variant '{name}' is unavailable in this build: {why}"));
            }
            notes.push(format!("'{name}' was left out of the defaults: {why}."));
            continue;
        }
        if !chosen.contains(name) {
            chosen.push(name.clone());
        }
    }
    if chosen.is_empty() {
        return Err("no runnable variant left (see `lab list`)".into());
    }
    Ok(chosen)
}

fn waits(a: &DvlArgs) -> Result<Vec<String>, String> {
    if a.wait == "all" {
        return Ok(WAITS.iter().map(|w| w.0.to_string()).collect());
    }
    let w = parse_list(&a.wait);
    for x in &w {
        variants::check_wait(x).map_err(|e| format!("--wait: {e}"))?;
    }
    if w.is_empty() {
        return Err("--wait: no wait strategy given".into());
    }
    Ok(w)
}

fn spread_note(messages: u64, producers: &[usize]) -> Option<String> {
    let uneven: Vec<usize> =
        producers.iter().copied().filter(|p| messages % *p as u64 != 0).collect();
    (!uneven.is_empty()).then(|| {
        let parts: Vec<String> = uneven
            .iter()
            .map(|&p| {
                let (q, rem) = (messages / p as u64, messages % p as u64);
                format!("P={p}: {rem} producer(s) send {} and {} send {q}", q + 1, p as u64 - rem)
            })
            .collect();
        format!(
            "{messages} messages do not divide evenly by every producer count, so they are \
             spread (the first producers send one more): {}.",
            parts.join("; ")
        )
    })
}

/// The settings every cell of the plan shares, checked.
struct Settings<'a> {
    a: &'a DvlArgs,
    shared: &'a Shared,
    ring_size: usize,
    heap_messages: u64,
    trace_messages: u64,
    waits: Vec<String>,
    allocs: Vec<&'static str>,
    several: bool,
    reference: &'static str,
    /// Each JVM variant's class path (compiled), when a JVM variant runs.
    classes: Vec<(String, String)>,
    /// The JVM rows' collector settings (`--jvm-gc`), each with its flags.
    gcs: Vec<(&'static str, String)>,
}

impl Settings<'_> {
    /// A cell's label without its allocator, from its key: the variant, its wait strategy
    /// when several ran, and a JVM row's message form when not the default and its
    /// collector when several ran.
    fn stem(&self, k: &DvlKey) -> String {
        let wait = k.wait.as_deref().filter(|_| self.waits.len() > 1);
        if is_jvm(&k.variant) {
            collectors::label(&k.variant, wait, self.a.jvm_message.name(), k.jvm_gc.as_deref())
        } else {
            wait.map_or(k.variant.clone(), |w| format!("{}[{w}]", k.variant))
        }
    }

    /// A cell's label, from its key: its stem, and its allocator when several ran.
    fn label(&self, k: &DvlKey) -> String {
        let stem = self.stem(k);
        k.allocator.as_ref().map_or(stem.clone(), |al| format!("{stem}@{al}"))
    }
}

/// Checks the options, chooses the variants (their notes into `notes`), and resolves the
/// settings the cells share.
/// A contract loop stands between a row and its own loop, so our rows get one only beside
/// their own loops: asking for contract loops without them, with one of ours chosen, would
/// silently give those rows none.
fn contract_needs_own(a: &DvlArgs, chosen: &[String]) -> Result<(), String> {
    use crate::experiment::Switch;
    let ours: Vec<&str> = chosen
        .iter()
        .filter(|v| crate::measure::variants::find(v).is_some_and(|v| v.ours))
        .map(String::as_str)
        .collect();
    if a.contract_loops == Switch::On && a.own_loops == Switch::Off && !ours.is_empty() {
        return Err(format!(
            "--contract-loops on needs --own-loops on for our rows ({}): a contract loop splits \
             a row's gap to its own loop; choose --own-loops on, or --contract-loops off",
            ours.join(", ")
        ));
    }
    Ok(())
}

fn settings<'a>(
    a: &'a DvlArgs,
    shared: &'a Shared,
    notes: &mut Vec<String>,
) -> Result<(Settings<'a>, Vec<String>), String> {
    crate::units::at_least_one(&[(a.messages, "--messages")])?;
    let ring_size = a.ring_size as usize;
    if !ring_size.is_power_of_two() {
        return Err(format!(
            "--ring-size must be a power of two (got {ring_size}); e.g. 65536, 64Ki, 32Mi"
        ));
    }
    if a.capacity == Some(0) {
        return Err("--capacity must be at least 1 (got 0); omit it for unbounded".into());
    }
    crate::units::at_least_one(&[(a.batch(), "--batch")])?;
    let heap_messages = a.heap_messages.unwrap_or(a.messages.min(DEFAULT_HEAP_MESSAGES));
    let trace_messages = a.trace_messages.unwrap_or(a.messages);
    crate::units::at_least_one(&[
        (heap_messages, "--heap-messages"),
        (trace_messages, "--trace-messages"),
    ])?;
    let waits = waits(a)?;
    let chosen = chosen_variants(a, notes)?;
    contract_needs_own(a, &chosen)?;
    let allocs = allocators::expand(&a.allocator);
    let several = allocs.len() > 1;
    let reference = allocators::reference(&allocs);
    let classes = chosen
        .iter()
        .filter(|v| is_jvm(v))
        .map(|v| Ok((v.clone(), crate::measure::jvm::class_path(v)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let gcs = jvm_gcs(a)?;
    let s = Settings {
        a,
        shared,
        ring_size,
        heap_messages,
        trace_messages,
        waits,
        allocs,
        several,
        reference,
        classes,
        gcs,
    };
    Ok((s, chosen))
}

/// The collector settings of `--jvm-gc` with their flags (the collector's, then
/// `--jvm-flags`), the heap sized for this run's messages.
fn jvm_gcs(a: &DvlArgs) -> Result<Vec<(&'static str, String)>, String> {
    use crate::measure::jvm;
    if let Some(why) = jvm::check_extra_flags(&a.jvm_flags) {
        return Err(why);
    }
    let message = a.jvm_message.name();
    let heap = jvm::heap_bytes(a.messages, a.ring_size, a.payload, message, jvm::heap_cap());
    Ok(collectors::expand(&a.jvm_gc)
        .into_iter()
        .map(|g| {
            let flags = jvm::gc_flags(g, heap).expect("every --jvm-gc name has flags");
            (g, format!("{flags} {}", a.jvm_flags).trim().to_string())
        })
        .collect())
}

/// The most messages `v`'s consumer takes per receive: `--batch` where the variant has a
/// batch receive of its own, else 1 (the channel peers receive one at a time, as their own
/// API does; see [`variants::VariantInfo::batches`]).
pub fn consumer_batch(v: &str, batch: u64) -> usize {
    if variants::registry().iter().any(|i| i.name == v && !i.batches) {
        1
    } else {
        batch as usize
    }
}

/// What one cell runs: variant `v` with wait `w` on allocator `al` (a Rust row) or
/// collector setting `gc` (a JVM row), `p` producers, `pairs` sampled/unsampled pairs per
/// fork.
fn spec(
    s: &Settings<'_>,
    v: &str,
    w: &Option<String>,
    (al, gc): (Option<&str>, Option<&(&'static str, String)>),
    p: usize,
    pairs: usize,
) -> CellSpec {
    let a = s.a;
    CellSpec {
        variant: v.to_string(),
        wait: w.clone(),
        producers: p,
        messages: a.messages,
        warmup: s.shared.warmup as usize,
        runs: s.shared.runs as usize,
        ring_size: s.ring_size,
        capacity: a.capacity.map(|c| c as usize),
        prefetch: 256,
        payload: a.payload,
        sample_every: a.sample_every,
        batch: consumer_batch(v, a.batch()),
        sampling_ab_pairs: pairs,
        heap_messages: s.heap_messages,
        trace_messages: s.trace_messages,
        min_measure_ms: a.min_fork_ms as f64,
        spread_measure_ms: a.spread_fork_ms as f64,
        in_run_trace: None,
        jvm: s.classes.iter().find(|c| c.0 == v).map(|c| &c.1).zip(gc).map(|(c, (gc, flags))| {
            crate::measure::harness::JvmSettings {
                classes: c.clone(),
                flags: flags.clone(),
                message: a.jvm_message.name().to_string(),
                gc: gc.to_string(),
                wait: match a.jvm_wait.as_str() {
                    "matching" => {
                        crate::measure::jvm::matching_wait(w.as_deref().unwrap_or("blocking"))
                            .to_string()
                    }
                    other => other.to_string(),
                },
                jit_warmup: a.jit_warmup,
                drop_one: v.starts_with("fault-jvm-"),
            }
        }),
        allocator: al.map(str::to_string),
        placement: a.placement,
        calibration: None,
    }
}

/// The cells: per P, per variant, per wait strategy and allocator it takes.
fn cells(s: &Settings<'_>, chosen: &[String]) -> Vec<CellPlan<CellSpec>> {
    let (a, several) = (s.a, s.several);
    let mut cells = Vec::new();
    let mut first_ring = true;
    for &p in &a.producers.0 {
        for v in chosen {
            let takes_wait = variants::find(v).is_some_and(|i| i.takes_wait);
            let ws: Vec<Option<String>> =
                if takes_wait { s.waits.iter().cloned().map(Some).collect() } else { vec![None] };
            // The JVM rows run on the JVM's own allocator, one row per collector; the Rust
            // rows one per allocator.
            type Dim<'b> = (Option<&'static str>, Option<&'b (&'static str, String)>);
            let dims: Vec<Dim<'_>> = if is_jvm(v) {
                s.gcs.iter().map(|g| (None, Some(g))).collect()
            } else {
                s.allocs.iter().map(|al| (Some(*al), None)).collect()
            };
            for (w, (al, gc)) in ws.iter().flat_map(|w| dims.iter().map(move |d| (w.clone(), *d))) {
                let several_gcs = s.gcs.len() > 1;
                // One sampled/unsampled pair per fork of the first ring cell measures
                // what latency sampling costs, over as many forks as there are rounds.
                let pairs = usize::from(v == "ring" && first_ring && a.sample_every > 0);
                first_ring &= pairs == 0;
                let key = DvlKey {
                    variant: v.clone(),
                    producers: p as u64,
                    wait: w.clone(),
                    allocator: al.filter(|_| several).map(str::to_string),
                    jvm_gc: gc.filter(|_| several_gcs).map(|g| g.0.to_string()),
                    ..DvlKey::default()
                };
                let label = s.label(&key);
                let mut c =
                    CellPlan::new(spec(s, v, &w, (al, gc), p, pairs), label, format!("P={p}"))
                        .keyed(&key);
                c.binary = al.and_then(allocators::binary);
                // dhat counts the same allocations under every allocator: one heap pass
                // (the reference allocator's) per variant and P is enough.
                c.heap &= al.is_none_or(|al| al == s.reference);
                c.file_stem =
                    format!("{}-p{p}", c.file_stem.replace('@', "-").replace(['(', ')'], ""));
                c.threads = p + 1;
                // The JVM's own instruments stand for the heap pass (dhat cannot listen
                // to it); its trace pass records with Java Flight Recorder instead of the
                // Rust recorder (`crate::profile::jfr`).
                c.heap &= !is_jvm(v);
                cells.push(c);
            }
        }
    }
    cells
}

/// The baseline (`None`: one per allocator), its name for the config, whether it is per
/// allocator, and the pairs: each row against its allocator's baseline, and each port
/// against its JVM original.
type Baselines = (Option<String>, String, bool, Vec<(String, String)>);

/// A planned cell as the pairing sees it: its label and its key.
type Keyed = (String, DvlKey);

fn baselines(s: &Settings<'_>, cells: &[Keyed]) -> Result<Baselines, String> {
    let a = s.a;
    let labels: Vec<&str> = cells.iter().map(|c| c.0.as_str()).collect();
    // With several allocators a plain baseline (`locked`) means one per allocator:
    // every row is paired with the baseline of its own allocator.
    let per_allocator =
        s.several && !a.baseline.as_ref().is_some_and(|b| labels.contains(&b.as_str()));
    let (baseline, baseline_name, mut pairs) = if per_allocator {
        let (b, pairs) = own_baselines(s, cells, a.baseline.as_deref())?;
        (None, b, pairs)
    } else {
        let baseline = match &a.baseline {
            Some(b) if labels.contains(&b.as_str()) => b.clone(),
            Some(b) => {
                let mut valid: Vec<&str> = labels.to_vec();
                valid.dedup();
                return Err(format!(
                    "--baseline '{b}' is not a row of this run; valid: {}",
                    valid.join(", ")
                ));
            }
            None if labels.contains(&"locked") => "locked".into(),
            None => labels[0].to_string(),
        };
        (Some(baseline.clone()), baseline, Vec::new())
    };
    for pair in original_pairs(s, cells).into_iter().chain(java_wait_pairs(cells)) {
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    Ok((baseline, baseline_name, per_allocator, pairs))
}

/// With several allocators and a plain baseline name (`locked`, the default; `None`: locked
/// or the first cell's): that name and the pairs (cell, the baseline under its allocator),
/// e.g. (`ring@mimalloc`, `locked@mimalloc`).
fn own_baselines(
    s: &Settings<'_>,
    cells: &[Keyed],
    baseline: Option<&str>,
) -> Result<(String, Vec<(String, String)>), String> {
    let stems: Vec<String> = cells.iter().map(|c| s.stem(&c.1)).collect();
    let b = match baseline {
        Some(b) if stems.iter().any(|x| x == b) => b.to_string(),
        Some(b) => {
            let mut valid: Vec<&str> = Vec::new();
            for l in stems.iter().chain(cells.iter().map(|c| &c.0)) {
                if !valid.contains(&l.as_str()) {
                    valid.push(l);
                }
            }
            return Err(format!(
                "--baseline '{b}' is not a row of this run; valid: {}",
                valid.join(", ")
            ));
        }
        None if stems.iter().any(|x| x == "locked") => "locked".into(),
        None => stems[0].clone(),
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (l, k) in cells.iter().filter(|c| c.1.allocator.is_some()) {
        let base =
            cells.iter().zip(&stems).find(|(c, stem)| **stem == b && c.1.allocator == k.allocator);
        if let Some(((base, _), _)) = base {
            if l != base && !pairs.iter().any(|(x, _)| x == l) {
                pairs.push((l.clone(), base.clone()));
            }
        }
    }
    Ok((b, pairs))
}

/// Each port against its JVM original, cell by cell: `locked` against `jvm-lbq`, the ring
/// against `jvm-disruptor` (4.0 and 3.4) and `jvm-jctools` (the JVM's bounded MPSC queue),
/// under the wait strategy the labels show (when several ran), any allocator against the
/// reference collector (when several ran).
fn original_pairs(s: &Settings<'_>, cells: &[Keyed]) -> Vec<(String, String)> {
    let gc_names: Vec<&str> = s.gcs.iter().map(|g| g.0).collect();
    let gc = (gc_names.len() > 1).then(|| collectors::reference(&gc_names).to_string());
    let shown = |k: &DvlKey| k.wait.clone().filter(|_| s.waits.len() > 1);
    let originals = [
        ("locked", "jvm-lbq"),
        ("ring", "jvm-disruptor"),
        ("ring", "jvm-disruptor-3.4"),
        ("ring", "jvm-jctools"),
    ];
    let mut pairs = Vec::new();
    for (port, orig) in originals {
        for (l, k) in cells.iter().filter(|c| c.1.variant == port) {
            let o = cells
                .iter()
                .find(|(_, ko)| ko.variant == orig && shown(ko) == shown(k) && ko.jvm_gc == gc);
            if let Some((o, _)) = o {
                pairs.push((l.clone(), o.clone()));
            }
        }
    }
    pairs
}

/// With the ring under Java's own wait strategy beside the ring under others (`--wait
/// blocking,java-blocking`): each other ring cell against `ring[java-blocking]` of its
/// allocator, the same code but for its waiting. Beside `ring[java-blocking]` against
/// `jvm-disruptor[java-blocking]` (the same algorithm in Java), it separates what the port
/// gains from the language from what it gains from waiting differently.
fn java_wait_pairs(cells: &[Keyed]) -> Vec<(String, String)> {
    let java = Some("java-blocking");
    let mut pairs = Vec::new();
    for (l, k) in cells.iter().filter(|c| c.1.variant == "ring" && c.1.wait.is_some()) {
        let j = cells.iter().find(|(_, kj)| {
            kj.variant == "ring" && kj.wait.as_deref() == java && kj.allocator == k.allocator
        });
        match j {
            Some((j, _)) if k.wait.as_deref() != java => pairs.push((l.clone(), j.clone())),
            _ => {}
        }
    }
    pairs
}

pub(super) fn plan(a: &DvlArgs, shared: &Shared) -> Result<Plan<CellSpec>, String> {
    let mut notes = Vec::new();
    let (s, chosen) = settings(a, shared, &mut notes)?;
    let cells = cells(&s, &chosen);
    let keyed: Vec<Keyed> = cells.iter().map(|c| (c.label.clone(), c.key_as())).collect();
    let (baseline, baseline_name, per_allocator, pairs) = baselines(&s, &keyed)?;
    notes.extend(spread_note(a.messages, &a.producers.0));
    if shared.heap == Switch::On && (s.several || s.allocs != ["system"]) {
        notes.push(format!(
            "Heap passes run in lab-heap under dhat whatever the allocator (dhat counts \
             allocations, not allocator speed){}.",
            if s.several {
                format!("; only the {} rows get one, the counts being the same code's", s.reference)
            } else {
                String::new()
            }
        ));
    }
    let mut plan = Plan {
        cells,
        baseline,
        pairs,
        config: json!({"variants": chosen, "waits": s.waits, "heap_messages": s.heap_messages,
                       "trace_messages": s.trace_messages, "baseline": baseline_name,
                       "batch": a.batch(),
                       "baseline_per_allocator": per_allocator,
                       "allocators": s.allocs,
                       "jvm_gcs": s.gcs.iter().map(|g| json!({"name": g.0, "flags": g.1}))
                           .collect::<Vec<_>>(),
                       "jvm_message": a.jvm_message.name()}),
        input_size: a.messages,
        notes,
    };
    inrun::twins(shared.trace, &mut plan);
    let on = |s: crate::experiment::Switch| s == crate::experiment::Switch::On;
    super::calibration::cells(&mut plan, on(a.own_loops), on(a.contract_loops));
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::{consumer_batch, plan};
    use crate::experiment::Shared;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: super::DvlArgs,
    }

    /// The plan's pairs (row, baseline) of `args`, or its error.
    fn pairs(args: &[&str]) -> Result<Vec<(String, String)>, String> {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        plan(&cli.a, &Shared::for_tests()).map(|p| p.pairs)
    }

    #[test]
    fn contract_loops_without_own_loops_are_refused_when_one_of_ours_is_chosen() {
        let asked = |variants: &str| {
            let args = ["--variants", variants, "--producers", "1"];
            pairs(&[&args[..], &["--contract-loops", "on", "--own-loops", "off"]].concat())
        };
        let e = asked("ring,crossbeam").unwrap_err();
        assert!(e.contains("--own-loops on") && e.contains("ring"), "{e}");
        let peers =
            asked("crossbeam").expect("peers keep their contract loops without our own loops");
        assert!(has(&peers, "crossbeam/contract-loop", "crossbeam/own-loop"), "{peers:?}");
    }

    fn has(pairs: &[(String, String)], a: &str, b: &str) -> bool {
        pairs.iter().any(|(x, y)| x == a && y == b)
    }

    #[test]
    fn rows_pair_by_their_keys_with_their_allocators_baseline_and_java_waiting() {
        let base = ["--variants", "locked,ring", "--producers", "1", "--own-loops", "off"];
        let args: Vec<&str> =
            base.iter().copied().chain(["--allocator", "system,mimalloc"]).collect();
        let p = pairs(&args).expect("a plan");
        assert!(has(&p, "ring@system", "locked@system"), "{p:?}");
        assert!(has(&p, "ring@mimalloc", "locked@mimalloc"), "{p:?}");
        assert!(!has(&p, "ring@mimalloc", "locked@system"), "{p:?}");
        let bad: Vec<&str> = args.iter().copied().chain(["--baseline", "nope"]).collect();
        let e = pairs(&bad).unwrap_err();
        assert!(
            e.ends_with(
                "valid: locked, ring, locked@system, locked@mimalloc, ring@system, ring@mimalloc"
            ),
            "{e}"
        );
        let waits: Vec<&str> =
            base.iter().copied().chain(["--wait", "blocking,java-blocking"]).collect();
        let p = pairs(&waits).expect("a plan");
        assert!(has(&p, "ring[blocking]", "ring[java-blocking]"), "{p:?}");
        assert!(!has(&p, "ring[java-blocking]", "ring[java-blocking]"), "{p:?}");
    }

    #[test]
    fn contract_loops_stand_between_each_rust_row_and_its_own_loop_when_asked() {
        use crate::results::Role;
        let args = ["--variants", "ring,crossbeam,jvm-lbq", "--producers", "1"];
        let cli = Cli::try_parse_from(std::iter::once("x").chain(args)).expect("args");
        let p = plan(&cli.a, &Shared::for_tests()).expect("a plan");
        assert!(p.cells.iter().all(|c| c.role != Role::ContractLoop), "off by default");
        let on: Vec<&str> = args.iter().copied().chain(["--contract-loops", "on"]).collect();
        let cli = Cli::try_parse_from(std::iter::once("x").chain(on)).expect("args");
        let p = plan(&cli.a, &Shared::for_tests()).expect("a plan");
        let contract: Vec<(&str, Option<&str>, Option<&str>)> = p
            .cells
            .iter()
            .filter(|c| c.role == Role::ContractLoop)
            .map(|c| (c.label.as_str(), c.beside.as_deref(), c.cell.calibration.as_deref()))
            .collect();
        // The JVM rows do not go through the contract.
        assert_eq!(
            contract,
            [
                ("ring/contract-loop", Some("ring"), Some("contract-loop")),
                ("crossbeam/contract-loop", Some("crossbeam"), Some("contract-loop")),
            ]
        );
        for v in ["ring", "crossbeam"] {
            let (row, con, own) =
                (v.to_string(), format!("{v}/contract-loop"), format!("{v}/own-loop"));
            assert!(has(&p.pairs, &row, &con) && has(&p.pairs, &con, &own), "{:?}", p.pairs);
            assert!(has(&p.pairs, &row, &own), "{:?}", p.pairs);
        }
        assert!(!p.pairs.iter().any(|(a, _)| a == "jvm-lbq/contract-loop"));
    }

    #[test]
    fn only_variants_with_a_batch_receive_take_the_batch() {
        for v in ["locked", "ring", "reactive", "naive", "disruptor-rs"] {
            assert_eq!(consumer_batch(v, 1024), 1024, "{v}");
        }
        for v in ["crossbeam", "std-mpsc", "fault-slow-crossbeam"] {
            assert_eq!(consumer_batch(v, 1024), 1, "{v}");
        }
        assert_eq!(consumer_batch("ring", 1), 1);
    }
}
