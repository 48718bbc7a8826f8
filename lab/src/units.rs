//! Numbers as people write and read them: option values parsed (sizes `32Mi`, `1M`,
//! `65536`; producer lists `1,2,4`, `1..6`; errors name the bad value and say what is
//! accepted) and figures formatted for tables (`fmt_num`, `group`).

/// The one check of count options that must be positive: the first of `counts` (value,
/// its name as the user wrote it) that is 0, as "--x must be at least 1 (got 0)".
pub fn at_least_one(counts: &[(u64, &str)]) -> Result<(), String> {
    match counts.iter().find(|(v, _)| *v == 0) {
        Some((_, name)) => Err(format!("{name} must be at least 1 (got 0)")),
        None => Ok(()),
    }
}

/// Parses a count: a plain number (underscores allowed) with an optional suffix:
/// `K`/`k` (×10³), `M` (×10⁶), `G` (×10⁹), `Ki` (×2¹⁰), `Mi` (×2²⁰), `Gi` (×2³⁰).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let (digits, mult): (&str, u64) = if let Some(d) = t.strip_suffix("Ki") {
        (d, 1 << 10)
    } else if let Some(d) = t.strip_suffix("Mi") {
        (d, 1 << 20)
    } else if let Some(d) = t.strip_suffix("Gi") {
        (d, 1 << 30)
    } else if let Some(d) = t.strip_suffix(['K', 'k']) {
        (d, 1_000)
    } else if let Some(d) = t.strip_suffix('M') {
        (d, 1_000_000)
    } else if let Some(d) = t.strip_suffix('G') {
        (d, 1_000_000_000)
    } else {
        (t.as_str(), 1)
    };
    let n: u64 = digits.parse().map_err(|_| {
        format!(
            "'{s}' is not a size (use a number with an optional suffix K, M, G, Ki, Mi, Gi, \
             e.g. 32Mi, 1M, 65536)"
        )
    })?;
    n.checked_mul(mult).ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses a producer list: `1,2,4`, `1..6` (inclusive), `1..=6`, or a mix `1,3..5`.
/// Keeps the given order, drops repeats.
pub fn parse_producers(s: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("'{s}' is not a producer list (use e.g. 1,2,4 or 1..6)");
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once("..") {
            let b = b.strip_prefix('=').unwrap_or(b);
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if a > b {
                return Err(format!("'{part}': the range is empty ({a} > {b})"));
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    if out.contains(&0) {
        return Err("producer counts must be at least 1 (got 0)".to_string());
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(*p));
    Ok(out)
}

/// Splits a comma-separated list of names.
pub fn parse_list(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}

/// A number with sensible precision: 3 significant digits below 1000, grouped above.
pub fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a >= 1e5 {
        group(x)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// An integer with thousands separators: 12,345,678.
pub fn group(x: f64) -> String {
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32Mi").unwrap(), 33_554_432);
        assert_eq!(parse_size("1M").unwrap(), 1_000_000);
        assert_eq!(parse_size("64Ki").unwrap(), 65_536);
        assert_eq!(parse_size("20_000").unwrap(), 20_000);
        assert_eq!(parse_size("2k").unwrap(), 2_000);
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999Gi").is_err());
    }

    #[test]
    fn producers() {
        assert_eq!(parse_producers("1..6").unwrap(), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(parse_producers("1,2,4").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_producers("1..=3,2,8").unwrap(), vec![1, 2, 3, 8]);
        assert!(parse_producers("0").unwrap_err().contains("at least 1"));
        assert!(parse_producers("0..2").is_err());
        assert!(parse_producers("5..2").unwrap_err().contains("empty"));
        assert!(parse_producers("x").is_err());
    }
}
