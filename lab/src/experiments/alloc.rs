//! `alloc-pooled-vs-unpooled`: seed 004's `ByteBufAllocatorBenchmark` table, in ops/ms.
//!
//! For each size in `buffer_pool::SEED_SIZES` and each mode (pooled: a warm
//! `buffer_pool::Pool`; unpooled: a zeroed `Vec` from the global allocator), one child
//! process runs warm-up iterations, then measured iterations of N allocate + touch + free
//! cycles (`buffer_pool::run_cycles`), each timed with a nanosecond clock. The parent
//! reports JMH's columns: score (mean ops/ms) ± the 99.9% confidence half-width, min, max,
//! stdev. Each iteration's checksum is checked against the value it must have.

use super::common::{self, f64s, jmh, Opts, XResults, XSpec, XTable};
use crate::stats::Summary;
use buffer_pool::{Pool, SEED_SIZES};
use serde_json::{json, Value};
use std::time::Instant;

const DEFAULT_OPS: u64 = 100_000;
const MODES: &[&str] = &["pooled", "unpooled"];

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    let len = spec.param_u64("size")? as usize;
    let pooled = match spec.param_str("mode")? {
        "pooled" => true,
        "unpooled" => false,
        m => return Err(format!("mode '{m}'; valid: pooled, unpooled")),
    };
    let n = spec.elements;
    let pool = Pool::default();
    let mut warm = Vec::new();
    let mut runs = Vec::new();
    // Pooled, len > 0: one buffer circulates and its first byte counts the cycles (mod 256).
    let mut cycles_done = 0u64;
    for i in 0..spec.warmup + spec.runs {
        let t = Instant::now();
        let sum = buffer_pool::run_cycles(pooled.then_some(&pool), len, n);
        let ns = t.elapsed().as_nanos() as f64;
        let expected = match (len, pooled) {
            (0, _) => 0,
            (_, false) => n,
            (_, true) => (cycles_done..cycles_done + n).map(|k| (k + 1) % 256).sum(),
        };
        cycles_done += n;
        if sum != expected {
            return Err(format!("INVALID iteration {i}: checksum {sum}, expected {expected}"));
        }
        let ops_per_ms = n as f64 / (ns / 1e6);
        if i < spec.warmup {
            warm.push(ops_per_ms);
        } else {
            runs.push(ops_per_ms);
        }
    }
    Ok(json!({"warmup_ops_per_ms": warm, "ops_per_ms": runs, "pool_cached_after": pool.cached()}))
}

pub fn run(o: &Opts) -> Result<i32, String> {
    let n = o.elements.unwrap_or(DEFAULT_OPS);
    let (dir, default) = common::run_dir(o)?;
    let exe = common::lab_exe()?;
    let env = common::environment(o, n, "off", "off");
    let mut t = XTable::new(
        &format!(
            "Allocate + free, ops/ms (JMH style: {} warm-up and {} measured iterations of {n} \
             ops, one process per row)",
            o.warmup, o.runs
        ),
        &[
            "Benchmark",
            "size",
            "Mode",
            "Cnt",
            "Score",
            "Error (99.9%)",
            "Units",
            "min",
            "max",
            "stdev",
            "pooled/unpooled",
        ],
    );
    t.note = Some(
        "Pooled buffers are reused without zeroing (as Netty's); unpooled ones are zeroed \
         (vec![0; n], as Java's new byte[n]): zeroing is part of what the unpooled side pays."
            .into(),
    );
    let mut rows = Vec::new();
    let mut invalid = false;
    let total = SEED_SIZES.len() * MODES.len();
    let mut k = 0;
    for &size in &SEED_SIZES {
        let mut means = [None, None];
        let mut lines = Vec::new();
        for (mi, m) in MODES.iter().enumerate() {
            k += 1;
            let spec = XSpec {
                experiment: o.experiment.clone(),
                workload: format!("{m}-{size}"),
                elements: n,
                warmup: o.warmup,
                runs: o.runs,
                params: json!({"size": size, "mode": m}),
                trace_file: None,
                heap_file: None,
            };
            let name = format!("{m}Allocation");
            match common::run_child(&exe, "__xcell", &spec, o.timeout) {
                Ok(out) => {
                    let xs = f64s(&out["ops_per_ms"]);
                    let s = Summary::of(&xs).ok_or("no measured iteration")?;
                    means[mi] = Some(s.mean);
                    let [mean, ci, min, max, sd] = jmh(&s, 3);
                    common::progress(k, total, &spec.workload, &format!("{mean} ops/ms"));
                    lines.push(vec![
                        name,
                        size.to_string(),
                        "thrpt".into(),
                        s.n.to_string(),
                        mean,
                        ci.trim_start_matches("± ").to_string(),
                        "ops/ms".into(),
                        min,
                        max,
                        sd,
                    ]);
                    rows.push(json!({"mode": m, "size": size, "status": "ok", "ops_per_ms": xs,
                                     "warmup_ops_per_ms": out["warmup_ops_per_ms"],
                                     "summary": s, "pool_cached_after": out["pool_cached_after"]}));
                }
                Err(e) => {
                    invalid = true;
                    common::progress(k, total, &spec.workload, &e);
                    lines.push(vec![name, size.to_string(), format!("INVALID: {e}")]);
                    rows.push(json!({"mode": m, "size": size, "status": "invalid", "error": e}));
                }
            }
        }
        let ratio = match means {
            [Some(p), Some(u)] if u > 0.0 => format!("{:.2}×", p / u),
            _ => "-".into(),
        };
        for mut l in lines {
            if l.len() > 3 {
                l.push(ratio.clone());
            }
            t.rows.push(l);
        }
    }
    let r = XResults {
        experiment: o.experiment.clone(),
        status: if invalid { "invalid".into() } else { "complete".into() },
        environment: env,
        config: json!({"ops_per_iteration": n, "warmup_iterations": o.warmup,
                       "measured_iterations": o.runs, "sizes": SEED_SIZES,
                       "pool_limit_per_class": 64, "timeout_s": o.timeout.as_secs()}),
        rows,
        tables: vec![t],
        targets: Vec::new(),
        files: Vec::new(),
        method: vec![
            "One child process per size × mode (JMH's fork); warm-up iterations are \
             discarded; each measured iteration's ops/ms = ops / elapsed (Instant, ns)."
                .into(),
            "Score = mean of the measured iterations; Error = half-width of the 99.9% \
             confidence interval (Student's t, n − 1 degrees of freedom), as JMH prints it."
                .into(),
            "Each iteration's checksum (the touched first byte of every buffer) must equal \
             its closed form, or the row is INVALID."
                .into(),
            "The criterion bench of the same cycles is crates/buffer-pool/benches.".into(),
        ],
        notes: Vec::new(),
    };
    common::finish(&dir, default, &r, "")
}
