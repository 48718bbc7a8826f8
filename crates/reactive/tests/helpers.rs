//! The public seed-000 helpers compute what they claim.

use reactive::bench::*;
use reactive::Scheduler;
use std::time::Duration;

#[test]
fn helpers_return_checked_values() {
    let n = if cfg!(miri) { 50 } else { 100_000 };
    assert_eq!(range_sum(n), expected_range_sum(n));
    assert_eq!(mono_just_subscribe(n), n);
    assert_eq!(hand_written_subscribe(n), n);
    let s = Scheduler::single();
    assert_eq!(publish_on_sum(n, &s, 256, Duration::from_secs(30)), Ok(expected_range_sum(n)));
    let m = n / 10;
    for source in [LatencySource::Range, LatencySource::Iter] {
        for (prefetch, one_by_one) in [(256, false), (256, true), (1, true)] {
            let what = format!("{source:?} prefetch {prefetch} one_by_one {one_by_one}");
            let r =
                publish_on_latency(source, m, &s, prefetch, one_by_one, Duration::from_secs(30))
                    .unwrap();
            let mut lat = r.lat;
            assert_eq!(lat.len() as u64, m, "{what}");
            // from_iter never travels: every element crosses to the worker. A range emits
            // its first prefetch on this thread (more if the worker's request beats its
            // hand-over), then travels to the worker.
            match source {
                LatencySource::Iter => assert_eq!(r.crossed, m, "{what}"),
                LatencySource::Range => {
                    assert!(r.crossed >= prefetch as u64 && r.crossed < m, "{what}: {}", r.crossed)
                }
            }
            lat.sort_unstable();
            let p50 = percentile(&lat, 50.0).unwrap();
            let max = percentile(&lat, 100.0).unwrap();
            assert!(p50 <= max && max == *lat.last().unwrap());
        }
    }
    s.dispose().unwrap();
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[1, 2, 3, 4], 50.0), Some(2));
    assert_eq!(percentile(&[1, 2, 3, 4], 99.0), Some(4));
}
