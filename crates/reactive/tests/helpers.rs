//! The public seed-000 helpers compute what they claim.

mod common;

use reactive::bench::*;
use std::time::Duration;

#[test]
fn helpers_return_checked_values() {
    let n = if cfg!(miri) { 50 } else { 100_000 };
    assert_eq!(range_sum(n), expected_range_sum(n));
    assert_eq!(mono_just_subscribe(n), n);
    assert_eq!(hand_written_subscribe(n), n);
    // The publish_on helpers take any `&Scheduler`: every pooled one.
    for p in common::pools() {
        let s = p.build();
        let sum = publish_on_sum(n, &s, 256, Duration::from_secs(30));
        assert_eq!(sum, Ok(expected_range_sum(n)), "{p}");
        let m = n / 10;
        for source in [LatencySource::Range, LatencySource::Iter] {
            for (prefetch, one_by_one) in [(256, false), (256, true), (1, true)] {
                let what = format!("{p}: {source:?} prefetch {prefetch} one_by_one {one_by_one}");
                let r = publish_on_latency(
                    source,
                    m,
                    &s,
                    prefetch,
                    one_by_one,
                    Duration::from_secs(30),
                )
                .unwrap();
                let mut lat = r.lat;
                assert_eq!(lat.len() as u64, m, "{what}");
                // from_iter never travels: every element crosses to the worker. A range
                // emits its first prefetch on this thread (more if the worker's request
                // beats its hand-over), then travels to the worker. Whether it travels at
                // all depends on timing, with bulk demand and one by one alike: the
                // worker's replenish requests can keep reaching the range while it is still
                // emitting here (seen on parallel(2) on the 2-core VM, one by one under CI's
                // load). The travel itself is checked in publish_on.rs
                // (`range_travels_to_the_worker_with_its_demand`).
                match source {
                    LatencySource::Iter => assert_eq!(r.crossed, m, "{what}"),
                    LatencySource::Range => {
                        let c = r.crossed;
                        assert!(c >= prefetch as u64 && c <= m, "{what}: {c}");
                    }
                }
                lat.sort_unstable();
                let p50 = percentile(&lat, 50.0).unwrap();
                let max = percentile(&lat, 100.0).unwrap();
                assert!(p50 <= max && max == *lat.last().unwrap());
            }
        }
        common::dispose(&p.to_string(), &s);
    }
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[1, 2, 3, 4], 50.0), Some(2));
    assert_eq!(percentile(&[1, 2, 3, 4], 99.0), Some(4));
}
