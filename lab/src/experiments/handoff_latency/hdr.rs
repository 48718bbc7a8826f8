//! HdrHistogram in the formats other tools read: the percentile distribution (`.hgrm`, as
//! Java's `outputPercentileDistribution` prints it and HdrHistogram's plotter opens it), the
//! V2 interval log (`.hlog`, what `HistogramLogProcessor` and the plotter read), and the
//! compressed V2 encoding a child sends its histogram back in.
//!
//! Every histogram here counts nanoseconds from 1 ns to [`HIGHEST_NS`] with 3 significant
//! digits: a value is kept within 0.1% of what was recorded.

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::time::Duration;

/// The largest latency a histogram holds, ns (100 s): a run that takes longer than this to
/// deliver a message is far past any bound, and its value is clamped here (saturating).
pub const HIGHEST_NS: u64 = 100_000_000_000;

/// An empty histogram of nanoseconds.
pub fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid bounds")
}

/// Records `ns` (0 counts as 1 ns, the histogram's lowest; above [`HIGHEST_NS`] as that).
#[inline]
pub fn record(h: &mut Histogram<u64>, ns: u64) {
    h.saturating_record(ns.max(1));
}

/// The percentiles a row reports, ns (and the mean).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    /// Values recorded.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile.
    pub p9999: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
}

impl Tail {
    /// The percentiles of `h` (all zero when it is empty).
    pub fn of(h: &Histogram<u64>) -> Tail {
        if h.is_empty() {
            return Tail::default();
        }
        Tail {
            count: h.len(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            p9999: h.value_at_quantile(0.9999),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

/// `h` in HdrHistogram's compressed V2 encoding, base64 (as a V2 log line carries it).
pub fn encode(h: &Histogram<u64>) -> Result<String, String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).map_err(|e| format!("histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The histogram [`encode`] wrote.
pub fn decode(b64: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|e| format!("histogram base64: {e}"))?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram: {e:?}"))?;
    // Widen to the lab's bounds, so that any two decoded histograms add.
    let mut out = hist();
    out.add(&h).map_err(|e| format!("histogram: {e:?}"))?;
    Ok(out)
}

/// Ticks per half distance of the percentile distribution, as HdrHistogram's tools default.
const TICKS_PER_HALF: u32 = 5;

/// The percentile distribution of `h` as HdrHistogram's `outputPercentileDistribution`
/// prints it, values divided by `scale` (1000: ns → µs), the file HdrHistogram's plotter
/// opens.
pub fn hgrm(h: &Histogram<u64>, scale: f64) -> String {
    let mut s = String::from("       Value     Percentile TotalCount 1/(1-Percentile)\n\n");
    if h.is_empty() {
        return s;
    }
    let mut total = 0u64;
    for v in h.iter_quantiles(TICKS_PER_HALF) {
        let q = v.quantile_iterated_to();
        let value = v.value_iterated_to() as f64 / scale;
        total += v.count_since_last_iteration();
        if q < 1.0 {
            let _ = writeln!(s, "{value:12.3} {q:2.12} {total:10} {:14.2}", 1.0 / (1.0 - q));
        } else {
            let _ = writeln!(s, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    let _ = writeln!(
        s,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / scale,
        h.stdev() / scale
    );
    let _ = writeln!(
        s,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / scale,
        h.len()
    );
    let _ = writeln!(
        s,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        (2 * 10u64.pow(u32::from(h.sigfig()))).next_power_of_two()
    );
    s
}

/// The rows of an `.hgrm` text: (value in its unit, percentile as a quantile, total count).
pub fn parse_hgrm(text: &str) -> Vec<(f64, f64, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let v = it.next()?.parse().ok()?;
            let q = it.next()?.parse().ok()?;
            let n = it.next()?.parse().ok()?;
            Some((v, q, n))
        })
        .collect()
}

/// The value the distribution gives at quantile `q`: the first row at or past it.
#[cfg(test)]
pub fn hgrm_value_at(rows: &[(f64, f64, u64)], q: f64) -> Option<f64> {
    rows.iter().find(|r| r.1 >= q).map(|r| r.0)
}

/// One interval of a V2 log.
#[derive(Debug)]
pub struct Interval<'a> {
    /// Its tag (no spaces, commas or colons: HdrHistogram's rule).
    pub tag: &'a str,
    /// When it started, since the log's start.
    pub start: Duration,
    /// How long it lasted.
    pub length: Duration,
    /// What it recorded, ns.
    pub hist: &'a Histogram<u64>,
}

/// A V2 interval log of `intervals` (max values shown in µs, as the histograms hold ns).
pub fn v2_log(comment: &str, intervals: &[Interval<'_>]) -> Result<String, String> {
    let mut out = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment(comment).with_max_value_divisor(1000.0);
        let mut w = b.begin_log_with(&mut out, &mut ser).map_err(|e| format!("log: {e}"))?;
        for i in intervals {
            let tag = Tag::new(i.tag).ok_or_else(|| format!("bad log tag '{}'", i.tag))?;
            w.write_histogram(i.hist, i.start, i.length, Some(tag))
                .map_err(|e| format!("log: {e:?}"))?;
        }
    }
    String::from_utf8(out).map_err(|e| format!("log: {e}"))
}

/// A log's interval: its tag and histogram.
pub type Tagged = (Option<String>, Histogram<u64>);

/// The tagged histograms of a V2 log, in order.
pub fn read_v2_log(text: &str) -> Result<Vec<Tagged>, String> {
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        match entry.map_err(|e| format!("log: {e:?}"))? {
            LogEntry::Interval(i) => {
                let tag = i.tag().map(|t| t.as_str().to_string());
                out.push((tag, decode(i.encoded_histogram())?));
            }
            LogEntry::StartTime(_) | LogEntry::BaseTime(_) => {}
        }
    }
    Ok(out)
}

/// A row's merged histogram and its forks' own (with their wall time), from the valid forks.
pub struct Merged {
    /// All forks together.
    pub all: Histogram<u64>,
    /// Per fork: (round, wall seconds, histogram).
    pub forks: Vec<(usize, f64, Histogram<u64>)>,
    /// All forks, from the actual send.
    pub uncorrected: Option<Histogram<u64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Histogram<u64> {
        let mut h = hist();
        for i in 1..=100_000u64 {
            record(&mut h, 100 + (i * 7919) % 50_000);
        }
        record(&mut h, 10_000_000);
        h
    }

    #[test]
    fn the_encoding_round_trips() {
        let h = sample();
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(Tail::of(&back), Tail::of(&h));
    }

    #[test]
    fn the_hgrm_file_gives_the_histograms_percentiles() {
        let h = sample();
        let rows = parse_hgrm(&hgrm(&h, 1000.0));
        assert!(rows.len() > 20, "{} rows", rows.len());
        assert_eq!(rows.last().unwrap().2, h.len());
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            let from_file = hgrm_value_at(&rows, q).unwrap();
            let from_hist = h.value_at_quantile(q) as f64 / 1000.0;
            // The file lists ticks: the first at or past q may be the next distinct value.
            let next = h.next_non_equivalent(h.value_at_quantile(q)) as f64 / 1000.0;
            assert!(from_file >= from_hist - 0.0005 && from_file <= next + 0.0005, "q {q}");
        }
        assert!((rows.last().unwrap().0 - h.max() as f64 / 1000.0).abs() < 0.001);
    }

    #[test]
    fn the_v2_log_is_read_back_with_the_same_percentiles() {
        let (a, mut b) = (sample(), hist());
        for i in 0..1000 {
            record(&mut b, 5_000 + i);
        }
        let text = v2_log(
            "test",
            &[
                Interval {
                    tag: "a",
                    start: Duration::ZERO,
                    length: Duration::from_secs(1),
                    hist: &a,
                },
                Interval {
                    tag: "b",
                    start: Duration::from_secs(1),
                    length: Duration::from_secs(1),
                    hist: &b,
                },
            ],
        )
        .unwrap();
        let back = read_v2_log(&text).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].0.as_deref(), Some("a"));
        assert_eq!(Tail::of(&back[0].1), Tail::of(&a));
        assert_eq!(Tail::of(&back[1].1), Tail::of(&b));
    }
}
