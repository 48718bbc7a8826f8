//! Each experiment's `--help` against what it accepts: every name an option's help lists
//! is accepted by that option's parser, and every name the option accepts (the variant
//! registry, the ring's wait strategies, and any name another option knows) is listed;
//! the variants that need a JDK or are planted faults say so; every figure option states
//! its unit. The help is the built binary's; what is accepted comes from the library
//! (`lab::measure::variants`) and from the experiments' own parsers
//! (`lab::cli::command()`, parsed in this process without running anything).

mod common;

use common::{lab, text};
use lab::measure::variants::{self, VariantInfo, WAITS};
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Output};

/// One option in a help text: its long name, the names it lists, and its help text.
#[derive(Debug, Default)]
struct Opt {
    /// `--variants`.
    long: String,
    /// Whether it takes a value (`<X>` after the name).
    takes_value: bool,
    /// The names listed, in order (`[possible values: …]` or a `Possible values:` block).
    listed: Vec<String>,
    /// Everything under the option's line, joined.
    text: String,
}

/// The options of a long `--help`, by long name.
fn options(help: &str) -> BTreeMap<String, Opt> {
    let mut out = BTreeMap::new();
    let mut cur: Option<Opt> = None;
    let mut in_block = false;
    for line in help.lines() {
        let t = line.trim();
        let starts_option = line.starts_with("  ") && t.starts_with('-') && t.contains("--");
        if starts_option && !line.starts_with("          ") {
            if let Some(o) = cur.take() {
                out.insert(o.long.clone(), o);
            }
            let long = t.split("--").nth(1).unwrap_or("").split(' ').next().unwrap_or("");
            let mut o =
                Opt { long: format!("--{long}"), takes_value: t.contains('<'), ..Opt::default() };
            // The short form keeps the help on the option's own line, after its value.
            if let Some(rest) = t.split_once(">  ").map(|(_, r)| r) {
                read_line(&mut o, rest.trim());
            }
            cur = Some(o);
            in_block = false;
            continue;
        }
        let Some(o) = cur.as_mut() else { continue };
        if t == "Possible values:" {
            in_block = true;
            continue;
        }
        if in_block {
            if let Some(item) = t.strip_prefix("- ") {
                let name = item.split(':').next().unwrap_or("").trim();
                o.listed.push(name.to_string());
                o.text.push_str(&format!(" {t}"));
                continue;
            }
            in_block = false;
        }
        read_line(o, t);
    }
    if let Some(o) = cur.take() {
        out.insert(o.long.clone(), o);
    }
    out
}

/// One line of an option's help: its text, and the names of a `[possible values: …]`.
fn read_line(o: &mut Opt, t: &str) {
    if let Some(i) = t.find("[possible values: ") {
        let rest = &t[i + "[possible values: ".len()..];
        let list = &rest[..rest.find(']').expect("a closing bracket")];
        o.listed.extend(list.split(", ").map(str::to_string));
    }
    o.text.push_str(&format!(" {t}"));
}

/// `lab <exp> --help` with `LAB_FAULTS` set to `faults` (or unset).
fn help_of(exp: &str, faults: Option<&str>) -> String {
    let o: Output = match faults {
        None if std::env::var_os("LAB_FAULTS").is_none() => lab(&[exp, "--help"]),
        _ => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
            c.args([exp, "--help"]);
            match faults {
                Some(v) => c.env("LAB_FAULTS", v),
                None => c.env_remove("LAB_FAULTS"),
            };
            c.output().expect("run lab")
        }
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether `lab <exp> <long> <value>` gets through the experiment's parser (in this
/// process: clap and the option's value parser, no plan, nothing run).
fn accepts(exp: &str, long: &str, value: &str) -> bool {
    lab::cli::command().try_get_matches_from(["lab", exp, long, value]).is_ok()
}

fn experiments() -> Vec<&'static str> {
    lab::experiments::ALL.iter().map(|e| e.name()).collect()
}

/// Every name some option of some experiment lists, with the registries' own: the names
/// any option is probed with.
fn pool(helps: &BTreeMap<&str, BTreeMap<String, Opt>>) -> BTreeSet<String> {
    let mut p: BTreeSet<String> =
        helps.values().flat_map(|opts| opts.values()).flat_map(|o| o.listed.clone()).collect();
    p.extend(variants::registry().iter().map(|v| v.name.to_string()));
    p.extend(WAITS.iter().map(|w| w.0.to_string()));
    p.extend(["all", "inline", "nginx"].map(str::to_string));
    p
}

fn names(list: &[VariantInfo]) -> BTreeSet<String> {
    list.iter().map(|v| v.name.to_string()).collect()
}

/// The variants this process offers, as the registry has them (fault-* with LAB_FAULTS=1).
fn offered(faults: bool) -> Vec<VariantInfo> {
    variants::registry().into_iter().filter(|v| faults || !v.is_fault()).collect()
}

#[test]
fn every_listed_name_is_accepted_and_every_accepted_name_is_listed() {
    let faults = lab::measure::faults::enabled();
    let helps: BTreeMap<&str, BTreeMap<String, Opt>> = experiments()
        .into_iter()
        .map(|e| (e, options(&help_of(e, faults.then_some("1")))))
        .collect();
    let pool = pool(&helps);
    for (exp, opts) in &helps {
        for o in opts.values().filter(|o| o.takes_value) {
            for name in &o.listed {
                assert!(
                    accepts(exp, &o.long, name),
                    "{exp} {} lists '{name}' but refuses it",
                    o.long
                );
            }
            // A figure option takes any number: only names are probed there.
            let figure = accepts(exp, &o.long, "12345");
            let hidden: Vec<&String> = pool
                .iter()
                .filter(|n| !(figure && n.parse::<f64>().is_ok()))
                .filter(|n| !o.listed.contains(n) && accepts(exp, &o.long, n))
                .collect();
            let free_text = accepts(exp, &o.long, "no-such-name-at-all");
            assert!(
                free_text || hidden.is_empty(),
                "{exp} {} accepts {hidden:?} but its --help does not list them (listed: {:?})",
                o.long,
                o.listed
            );
        }
    }
}

#[test]
fn variant_lists_match_the_registry_with_and_without_faults() {
    for faults in [false, true] {
        let env = if faults { "1" } else { "0" };
        let mut want = names(&offered(faults));
        let dvl = options(&help_of("disruptor-vs-lbq", Some(env)));
        let listed: BTreeSet<String> = dvl["--variants"].listed.iter().cloned().collect();
        want.insert("all".into());
        assert_eq!(listed, want, "disruptor-vs-lbq --variants, LAB_FAULTS={env}");
        let echo = options(&help_of("echo-server", Some(env)));
        let listed: BTreeSet<String> = echo["--variants"].listed.iter().cloned().collect();
        let mut want: BTreeSet<String> = offered(faults)
            .iter()
            .filter(|v| !variants::is_jvm(v.name))
            .map(|v| v.name.to_string())
            .collect();
        want.insert("inline".into());
        // The JVM servers (and their planted faults when faults are on), listed whether or
        // not this machine can run them (the help says what each needs).
        for (name, _, _) in lab::experiments::ECHO_JVM_SERVERS {
            want.insert(name.into());
            if faults {
                want.insert(format!("fault-{name}"));
            }
        }
        assert_eq!(listed, want, "echo-server --variants, LAB_FAULTS={env}");
        for (exp, opts) in [("disruptor-vs-lbq", &dvl), ("echo-server", &echo)] {
            let waits: BTreeSet<&str> = opts["--wait"].listed.iter().map(String::as_str).collect();
            for (w, _) in WAITS {
                assert!(waits.contains(w), "{exp} --wait does not list {w}: {waits:?}");
            }
        }
    }
}

#[test]
fn jvm_variants_say_what_they_need_and_faults_are_marked_test_only() {
    let dvl = options(&help_of("disruptor-vs-lbq", Some("1")));
    let text = &dvl["--variants"].text;
    for v in offered(true) {
        if let Some(needs) = v.needs {
            assert!(
                text.contains(&format!("- {}:", v.name))
                    && text.contains(&format!("needs {needs}")),
                "--variants does not say {} needs {needs}: {text}",
                v.name
            );
        }
        if v.is_fault() {
            assert!(v.help().contains("test only"), "{}: {}", v.name, v.help());
        }
    }
    let jvm: Vec<VariantInfo> =
        offered(false).into_iter().filter(|v| variants::is_jvm(v.name)).collect();
    assert!(!jvm.is_empty() && jvm.iter().all(|v| v.needs.is_some()), "{jvm:?}");
}

/// Figure options and a word of their unit, as their help must state it (`*`: every
/// experiment with that option).
const UNITS: &[(&str, &str, &str)] = &[
    ("*", "--rounds", "count"),
    ("*", "--runs", "per fork"),
    ("*", "--warmup", "per fork"),
    ("*", "--timeout", "seconds"),
    ("disruptor-vs-lbq", "--messages", "Messages per run"),
    ("disruptor-vs-lbq", "--producers", "threads"),
    ("disruptor-vs-lbq", "--ring-size", "slots"),
    ("disruptor-vs-lbq", "--capacity", "elements"),
    ("disruptor-vs-lbq", "--payload", "bytes"),
    ("disruptor-vs-lbq", "--heap-messages", "Messages per heap run"),
    ("disruptor-vs-lbq", "--trace-messages", "Messages per trace run"),
    ("disruptor-vs-lbq", "--sample-every", "in messages"),
    ("disruptor-vs-lbq", "--batch", "messages"),
    ("disruptor-vs-lbq", "--min-fork-ms", "Milliseconds"),
    ("disruptor-vs-lbq", "--spread-fork-ms", "Milliseconds"),
    ("disruptor-vs-lbq", "--jit-warmup", "passes"),
    ("subscribe-overhead", "--elements", "count"),
    ("subscribe-overhead", "--workers", "threads"),
    ("publish-on-latency", "--elements", "Elements per run"),
    ("publish-on-latency", "--workers", "threads"),
    ("backpressure-buffer", "--elements", "Elements per grid run"),
    ("backpressure-buffer", "--capacities", "in elements"),
    ("backpressure-buffer", "--rates", "multiples"),
    ("heap-growth", "--messages", "messages"),
    ("heap-growth", "--work", "multiply-adds"),
    ("alloc-pooled-vs-unpooled", "--ops", "cycles per iteration"),
    ("alloc-pooled-vs-unpooled", "--sizes", "bytes"),
    ("alloc-pooled-vs-unpooled", "--jvm-jit-warmup-ms", "milliseconds"),
    ("echo-server", "--requests", "Requests per run"),
    ("echo-server", "--concurrency", "in flight"),
    ("echo-server", "--workers", "threads"),
    ("echo-server", "--port", "port"),
    ("trace-overhead", "--messages", "Messages per run"),
    ("handoff-latency", "--round-trips", "a count"),
    ("handoff-latency", "--rates", "messages per second"),
    ("handoff-latency", "--producers", "threads"),
    ("handoff-latency", "--duration-ms", "Milliseconds"),
    ("handoff-latency", "--rate-runs", "a count"),
    ("handoff-latency", "--p99-bound-us", "Microseconds"),
    ("handoff-latency", "--sweep-from", "messages per second"),
    ("handoff-latency", "--sweep-steps", "a count"),
    ("handoff-latency", "--sweep-step-ms", "Milliseconds"),
    ("handoff-latency", "--pipeline-rate", "messages per second"),
    ("handoff-latency", "--pipeline-ms", "Milliseconds"),
    ("handoff-latency", "--ring-size", "slots"),
    ("jvm-referee", "--size", "bytes"),
    ("jvm-referee", "--ops", "a count"),
    ("jvm-referee", "--jmh-forks", "fresh JVM"),
    ("jvm-referee", "--jmh-warmup-iterations", "per fork"),
    ("jvm-referee", "--jmh-iterations", "per fork"),
    ("jvm-referee", "--jmh-iteration-s", "Seconds"),
    ("jvm-referee", "--producers", "threads"),
    ("jvm-referee", "--messages", "messages per lab run"),
];

/// Options whose value is neither a name from a list nor a figure.
const FREE: &[&str] = &["--out", "--baseline", "--jvm-flags"];

#[test]
fn every_figure_option_states_its_unit() {
    for exp in experiments() {
        for o in options(&help_of(exp, None)).values() {
            if !o.takes_value || !o.listed.is_empty() && o.long != "--payload" {
                continue;
            }
            if FREE.contains(&o.long.as_str()) {
                continue;
            }
            let unit = UNITS
                .iter()
                .find(|(e, l, _)| (*e == exp || *e == "*") && *l == o.long)
                .unwrap_or_else(|| panic!("{exp} {}: a figure option missing from UNITS", o.long));
            assert!(
                o.text.contains(unit.2),
                "{exp} {}: '{}' not in its help: {}",
                o.long,
                unit.2,
                o.text
            );
        }
    }
}
