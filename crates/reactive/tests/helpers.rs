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
    for one_by_one in [false, true] {
        let mut lat =
            publish_on_latency(n / 10, &s, 256, one_by_one, Duration::from_secs(30)).unwrap();
        assert_eq!(lat.len() as u64, n / 10);
        lat.sort_unstable();
        let p50 = percentile(&lat, 50.0).unwrap();
        let max = percentile(&lat, 100.0).unwrap();
        assert!(p50 <= max && max == *lat.last().unwrap());
    }
    s.dispose().unwrap();
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[1, 2, 3, 4], 50.0), Some(2));
    assert_eq!(percentile(&[1, 2, 3, 4], 99.0), Some(4));
}
