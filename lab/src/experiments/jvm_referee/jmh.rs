//! Running a JMH benchmark of tools/jvm's `jmh` module and reading its result back: JMH's
//! own runner (`org.openjdk.jmh.Main`) with the forks, iterations and JVM flags the lab
//! asks for, its JSON result file parsed into the score, JMH's error and every measured
//! iteration, so that the lab can pool the iterations of several runs as JMH pools forks.

use crate::measure::jvm_program::JvmProgram;
use crate::protocol::Ctx;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// What one JMH invocation is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JmhSpec {
    /// The benchmark, fully qualified (`lab.referee.RxReferee.singleJust`).
    pub benchmark: String,
    /// `-p name=value` parameters.
    pub params: Vec<(String, String)>,
    /// Forks (`-f`), each a fresh JVM.
    pub forks: u64,
    /// Warm-up iterations per fork (`-wi`).
    pub warmup_iterations: u64,
    /// Measured iterations per fork (`-i`).
    pub iterations: u64,
    /// Seconds per iteration, warm-up and measured (`-w`, `-r`).
    pub iteration_s: u64,
    /// Flags of the forked JVMs (`-jvmArgsAppend`): the lab's row's own.
    pub jvm_flags: Vec<String>,
    /// The class path of the `jmh` module.
    pub class_path: String,
    /// The `java` that runs JMH and its forks (`-jvm`): the lab row's own JDK.
    pub java: String,
    /// Threads per subgroup of an asymmetric (`@Group`) benchmark (`-tg`, e.g. `4,1`: the
    /// subgroups in the order of their methods' names); `None`: the benchmark's own.
    #[serde(default)]
    pub thread_groups: Option<String>,
    /// The method of a group whose score is the figure (`take`: JMH's secondary metric of
    /// that name); `None`: the primary metric.
    #[serde(default)]
    pub metric: Option<String>,
}

/// What JMH measured.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct JmhScore {
    /// JMH's score (the mean over every measured iteration of every fork).
    pub score: f64,
    /// JMH's error: the half-width of its 99.9% confidence interval (NaN-free: `None`
    /// when JMH gave none, as with a single iteration).
    pub error: Option<f64>,
    /// The unit (`ns/op`, `ops/ms`).
    pub unit: String,
    /// Every measured iteration, fork by fork.
    pub iterations: Vec<Vec<f64>>,
    /// The JVM JMH forked (its `jvm` and `vmVersion` fields).
    pub jvm: String,
}

/// Reads JMH's JSON result (`-rf json`): the first benchmark's primary metric, or with
/// `metric` the secondary metric of that name (one method of a group).
pub fn parse(json: &str, metric: Option<&str>) -> Result<JmhScore, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("JMH's JSON result: {e}"))?;
    let b = v.as_array().and_then(|a| a.first()).ok_or(
        "JMH's JSON result holds no benchmark (did the benchmark fail? its output is above)",
    )?;
    let (m, name) = match metric {
        None => (&b["primaryMetric"], "primaryMetric".to_string()),
        Some(k) => (&b["secondaryMetrics"][k], format!("secondaryMetrics.{k}")),
    };
    if m.is_null() {
        return Err(format!("JMH's result has no {name}"));
    }
    let score = m["score"].as_f64().ok_or_else(|| format!("JMH's result has no {name}.score"))?;
    let iterations: Vec<Vec<f64>> = m["rawData"]
        .as_array()
        .ok_or_else(|| format!("JMH's result has no {name}.rawData"))?
        .iter()
        .map(|fork| fork.as_array().into_iter().flatten().filter_map(Value::as_f64).collect())
        .collect();
    Ok(JmhScore {
        score,
        error: m["scoreError"].as_f64().filter(|e| e.is_finite()),
        unit: m["scoreUnit"].as_str().unwrap_or("?").to_string(),
        iterations,
        jvm: format!(
            "{} {}",
            b["jvm"].as_str().unwrap_or("?"),
            b["vmVersion"].as_str().unwrap_or("")
        )
        .trim()
        .to_string(),
    })
}

/// The command line of `spec`, writing its result to `result`.
pub fn command(spec: &JmhSpec, result: &std::path::Path) -> Command {
    // JMH's own runner, through the lab's one launcher; its forks get the row's flags.
    let runner = JvmProgram {
        java: spec.java.clone(),
        flags: Vec::new(),
        class_path: spec.class_path.clone(),
        main_class: "org.openjdk.jmh.Main".to_string(),
    };
    let mut cmd = runner.command(None, &["-jvm", &spec.java]);
    cmd.arg(format!("^{}$", regex_escape(&spec.benchmark)));
    for (k, v) in &spec.params {
        cmd.arg("-p").arg(format!("{k}={v}"));
    }
    cmd.args(["-f", &spec.forks.to_string()])
        .args(["-wi", &spec.warmup_iterations.to_string()])
        .args(["-i", &spec.iterations.to_string()])
        .args(["-w", &format!("{}s", spec.iteration_s)])
        .args(["-r", &format!("{}s", spec.iteration_s)])
        .args(["-rf", "json"])
        // A benchmark that throws (a referee's failed check) fails the run, not just its row.
        .args(["-foe", "true"])
        .arg("-rff")
        .arg(result);
    if let Some(tg) = &spec.thread_groups {
        cmd.args(["-tg", tg]);
    }
    if !spec.jvm_flags.is_empty() {
        cmd.arg("-jvmArgsAppend").arg(spec.jvm_flags.join(" "));
    }
    cmd
}

/// `s` with the regex metacharacters JMH's benchmark filter would read escaped (a
/// benchmark name has dots).
fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = ".$^()[]{}*+?|\\".contains(c);
            special.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}

/// Runs `spec`: JMH's output goes to stderr line by line (the child's stdout is the lab's
/// protocol), a heartbeat per iteration JMH reports; the parsed result.
pub fn run(spec: &JmhSpec, ctx: &mut Ctx) -> Result<JmhScore, String> {
    let result = std::env::temp_dir().join(format!(
        "lab-jmh-{}-{}.json",
        std::process::id(),
        spec.benchmark.replace('.', "_")
    ));
    let mut cmd = command(spec, &result);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start JMH (java): {e}"))?;
    let out = child.stdout.take().ok_or("JMH's stdout")?;
    let mut tail: Vec<String> = Vec::new();
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| format!("reading JMH's output: {e}"))?;
        if line.contains("Iteration") && line.contains(':') {
            ctx.heartbeat();
        }
        eprintln!("jmh: {line}");
        tail.push(line);
        if tail.len() > 20 {
            tail.remove(0);
        }
    }
    let status = child.wait().map_err(|e| format!("waiting for JMH: {e}"))?;
    let json = std::fs::read_to_string(&result);
    let _ = std::fs::remove_file(&result);
    if !status.success() {
        // JMH takes one lock per machine: a second JMH at once is refused, and must say so.
        if let Some(l) = tail.iter().find(|l| l.contains("Unable to acquire the JMH lock")) {
            return Err(format!("another JMH is running on this machine: {}", l.trim()));
        }
        return Err(format!(
            "JMH exited with {status}: {}",
            tail.iter().rev().find(|l| !l.trim().is_empty()).map_or("", |l| l.trim())
        ));
    }
    let json = json.map_err(|e| format!("JMH wrote no result ({}): {e}", result.display()))?;
    parse(&json, spec.metric.as_deref())
}

/// JMH's score and error over `iterations` pooled (JMH pools the iterations of its forks
/// the same way): the mean and the half-width of the 99.9% Student-t interval.
pub fn pooled(iterations: &[f64]) -> Option<(f64, Option<f64>)> {
    let n = iterations.len();
    if n == 0 {
        return None;
    }
    let mean = iterations.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some((mean, None));
    }
    let var = iterations.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = student_t_999(n - 1);
    Some((mean, Some(t * (var / n as f64).sqrt())))
}

/// The two-sided 99.9% quantile of Student's t with `df` degrees of freedom (JMH's
/// `scoreError` confidence), from statrs.
fn student_t_999(df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df as f64).map_or(f64::NAN, |t| t.inverse_cdf(1.0 - 0.001 / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULT: &str = r#"[{"jmhVersion":"1.37","benchmark":"lab.referee.RxReferee.singleJust",
        "mode":"avgt","threads":1,"forks":1,"jvm":"/usr/bin/java","vmVersion":"17.0.15",
        "primaryMetric":{"score":95.67,"scoreError":"NaN","scoreUnit":"ns/op",
        "rawData":[[159.12,32.22]]}}]"#;

    #[test]
    fn jmhs_json_result_is_read_back() {
        let s = parse(RESULT, None).unwrap();
        assert_eq!(s.score, 95.67);
        assert_eq!(s.error, None, "JMH's NaN error (one fork, two iterations) is no error");
        assert_eq!(s.unit, "ns/op");
        assert_eq!(s.iterations, vec![vec![159.12, 32.22]]);
        assert!(parse("[]", None).unwrap_err().contains("no benchmark"));
        let err = parse(RESULT, Some("take")).unwrap_err();
        assert!(err.contains("no secondaryMetrics.take"), "{err}");
    }

    /// A group's method is read from its secondary metric, not the group's sum.
    #[test]
    fn a_groups_method_is_read_back_by_name() {
        let json = r#"[{"jvm":"java","vmVersion":"17","primaryMetric":{"score":14.5,
            "scoreError":0.5,"scoreUnit":"ops/us","rawData":[[14.0,15.0]]},
            "secondaryMetrics":{"put":{"score":7.6,"scoreError":0.1,"scoreUnit":"ops/us",
            "rawData":[[7.5,7.7]]},"take":{"score":6.9,"scoreError":0.2,"scoreUnit":"ops/us",
            "rawData":[[6.8,7.0]]}}}]"#;
        let s = parse(json, Some("take")).unwrap();
        assert_eq!((s.score, s.iterations.clone()), (6.9, vec![vec![6.8, 7.0]]));
        assert_eq!(parse(json, None).unwrap().score, 14.5);
    }

    #[test]
    fn pooled_iterations_give_jmhs_interval() {
        // JMH's formula: t(0.9995, n - 1) · s / √n, with t = 8.610 at 4 degrees of freedom.
        let (mean, err) = pooled(&[9.0, 10.0, 11.0, 10.0, 10.0]).unwrap();
        assert!((mean - 10.0).abs() < 1e-12);
        let e = err.unwrap();
        assert!((e - 8.610 * (0.5f64 / 5.0).sqrt()).abs() < 0.01, "{e}");
        assert_eq!(pooled(&[3.0]), Some((3.0, None)));
        assert_eq!(pooled(&[]), None);
    }

    #[test]
    fn the_benchmark_is_matched_exactly() {
        let spec = JmhSpec {
            benchmark: "lab.referee.Seed000Referee.just".into(),
            params: vec![("size".into(), "1024".into())],
            forks: 1,
            warmup_iterations: 2,
            iterations: 3,
            iteration_s: 1,
            jvm_flags: vec!["-XX:+UseSerialGC".into(), "-Xmx1g".into()],
            class_path: "cp".into(),
            java: "/usr/bin/java".into(),
            thread_groups: Some("4,1".into()),
            metric: None,
        };
        let cmd = command(&spec, std::path::Path::new("/tmp/r.json"));
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert!(args.contains(&r"^lab\.referee\.Seed000Referee\.just$".to_string()), "{args:?}");
        assert!(args.windows(2).any(|w| w == ["-jvm", "/usr/bin/java"]), "{args:?}");
        assert!(args.windows(2).any(|w| w == ["-p", "size=1024"]), "{args:?}");
        assert!(args.windows(2).any(|w| w == ["-jvmArgsAppend", "-XX:+UseSerialGC -Xmx1g"]));
        assert!(args.windows(2).any(|w| w == ["-tg", "4,1"]), "{args:?}");
        assert!(args.windows(2).any(|w| w == ["-foe", "true"]), "{args:?}");
    }
}
