//! `--wait java-blocking`: the ring under a literal port of Java's BlockingWaitStrategy runs
//! a tiny `disruptor-vs-lbq` valid, beside the ring's own `blocking` in one table with the
//! pair (ring[blocking], ring[java-blocking]); jvm-disruptor under it runs the JVM's
//! BlockingWaitStrategy; bad names list it among the valid ones.

mod common;

use serde_json::Value;

fn results(out: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json exists");
    serde_json::from_str(&text).expect("results.json parses")
}

fn pairs(r: &Value) -> Vec<(String, String)> {
    r["ratios"]
        .as_array()
        .expect("ratios[]")
        .iter()
        .map(|x| (x["variant"].as_str().unwrap().into(), x["baseline"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn the_ring_under_java_blocking_runs_valid_beside_its_own_blocking() {
    let out = common::out_dir("java_blocking", "beside");
    let o = common::lab(
        &common::tiny_no_passes(
            "disruptor-vs-lbq",
            "2",
            &["--messages", "20000", "--producers", "1,2", "--min-fork-ms", "0"],
        )
        .into_iter()
        .chain(["--variants", "locked,ring", "--wait", "blocking,java-blocking"])
        .chain(["--out", out.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let r = results(&out);
    let rows = r["results"].as_array().expect("results[]");
    for p in [1, 2] {
        for (label, wait) in
            [("ring[blocking]", "blocking"), ("ring[java-blocking]", "java-blocking")]
        {
            let row = rows
                .iter()
                .find(|x| x["label"] == label && x["producers"] == p)
                .unwrap_or_else(|| panic!("no row {label} P={p}"));
            assert_eq!(row["status"], "OK", "{label} P={p}: {row}");
            assert_eq!(row["wait"], wait, "{label} P={p}: {row}");
            assert!(row["qps"].as_f64().is_some_and(|q| q > 0.0), "{label} P={p}: {row}");
        }
    }
    let pairs = pairs(&r);
    let want = ("ring[blocking]".to_string(), "ring[java-blocking]".to_string());
    assert!(pairs.contains(&want), "the ring's waiting against Java's: {pairs:?}");
    let verdict = |l: &&str| l.contains("- ring[blocking] ") && l.contains(" ring[java-blocking]");
    assert!(stdout.lines().any(|l| verdict(&l)), "a verdict line on the pair: {stdout}");
}

#[test]
fn jvm_disruptor_under_java_blocking_runs_blocking_wait_strategy() {
    let out = common::out_dir("java_blocking", "jvm");
    let o = common::lab(
        &common::tiny_no_passes(
            "disruptor-vs-lbq",
            "1",
            &["--messages", "20000", "--producers", "2", "--min-fork-ms", "0"],
        )
        .into_iter()
        .chain(["--jit-warmup", "1", "--variants", "ring,jvm-disruptor", "--wait", "java-blocking"])
        .chain(["--out", out.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    let all = common::text(&o);
    assert!(
        !all.contains("cannot run here"),
        "jvm-disruptor needs a JDK and Maven (bash scripts/setup-test-deps.sh): {all}"
    );
    assert_eq!(o.status.code(), Some(0), "{all}");
    let r = results(&out);
    let rows = r["results"].as_array().expect("results[]");
    let ring = rows.iter().find(|x| x["variant"] == "ring").expect("the ring row");
    assert_eq!((&ring["status"], &ring["wait"]), (&"OK".into(), &"java-blocking".into()));
    let jvm = rows.iter().find(|x| x["variant"] == "jvm-disruptor").expect("the JVM row");
    assert_eq!(jvm["status"], "OK", "{jvm}");
    assert_eq!(jvm["jvm"]["wait"], "blocking", "java-blocking pairs with BlockingWaitStrategy");
    let want = ("ring".to_string(), "jvm-disruptor".to_string());
    assert!(pairs(&r).contains(&want), "the port against its original: {:?}", pairs(&r));
}

#[test]
fn a_bad_wait_name_lists_java_blocking() {
    let o = common::lab(&["disruptor-vs-lbq", "--wait", "sometimes"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(&o));
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains("valid: blocking, sleeping, yielding, busy-spin, java-blocking"),
        "{stderr}"
    );
}
