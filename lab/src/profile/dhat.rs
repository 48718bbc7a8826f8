//! Reads a dhat heap profile (`dhatFileVersion` 2, as dh_view.html loads it): program
//! points `pps` with total bytes `tb`, total blocks `tbk`, bytes at the global peak `gb`,
//! and frame indices `fs` into the frame table `ftbl`. Gives the top allocation sites.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One allocation site (a program point with its call stack).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Site {
    /// Bytes allocated there over the run.
    pub total_bytes: u64,
    /// Allocations there over the run.
    pub total_blocks: u64,
    /// Bytes from there live at the global peak.
    pub at_peak_bytes: u64,
    /// The innermost frames of the lab's and the variants' own code (allocator frames left
    /// out), innermost first.
    pub frames: Vec<String>,
}

#[derive(Deserialize)]
struct RawPp {
    tb: u64,
    tbk: u64,
    #[serde(default)]
    gb: u64,
    fs: Vec<usize>,
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(rename = "dhatFileVersion")]
    version: u64,
    pps: Vec<RawPp>,
    ftbl: Vec<String>,
}

/// Whether a frame belongs to the allocator or the standard library rather than to the
/// code that asked for memory (the lab, a variant, a dependency).
fn is_plumbing(frame: &str) -> bool {
    let func =
        frame.split_once(": ").map_or(
            frame,
            |(addr, rest)| {
                if addr.starts_with("0x") {
                    rest
                } else {
                    frame
                }
            },
        );
    const SKIP: &[&str] = &[
        "[root]",
        "dhat::",
        "<dhat::",
        "__rust_",
        "alloc::",
        "<alloc::",
        "core::",
        "<core::",
        "std::",
        "<std::",
        "<T as alloc::",
    ];
    SKIP.iter().any(|s| func.starts_with(s))
}

/// Shortens `0x1234: path::to::fn (src/file.rs:10:5)` to `path::to::fn (file.rs:10:5)`.
fn tidy(frame: &str) -> String {
    let f = frame.split_once(": ").map_or(
        frame,
        |(addr, rest)| {
            if addr.starts_with("0x") {
                rest
            } else {
                frame
            }
        },
    );
    match f.rsplit_once(" (") {
        Some((func, loc)) => {
            let loc = loc.trim_end_matches(')');
            let short = loc.rsplit('/').next().unwrap_or(loc);
            format!("{func} ({short})")
        }
        None => f.to_string(),
    }
}

/// The `top` sites by total bytes, with up to `depth` frames each.
pub fn top_sites(path: &Path, top: usize, depth: usize) -> Result<Vec<Site>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let raw: RawFile = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a dhat file: {e}", path.display()))?;
    if raw.version != 2 {
        return Err(format!("{}: dhatFileVersion {} (expected 2)", path.display(), raw.version));
    }
    let mut pps = raw.pps;
    pps.sort_by_key(|p| std::cmp::Reverse(p.tb));
    Ok(pps
        .into_iter()
        .take(top)
        .map(|pp| Site {
            total_bytes: pp.tb,
            total_blocks: pp.tbk,
            at_peak_bytes: pp.gb,
            frames: pp
                .fs
                .iter()
                .filter_map(|&i| raw.ftbl.get(i))
                .filter(|f| !is_plumbing(f))
                .take(depth)
                .map(|f| tidy(f))
                .collect(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sites_in_order_of_bytes() {
        let dir = std::env::temp_dir().join(format!("lab-dhat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.dhat-heap.json");
        std::fs::write(
            &f,
            r#"{"dhatFileVersion":2,"mode":"rust-heap","pps":[
              {"tb":10,"tbk":1,"gb":0,"fs":[1,2]},
              {"tb":900,"tbk":30,"gb":64,"fs":[1,3,4]}],
             "ftbl":["[root]","0x1: alloc::boxed::box_new_uninit (boxed.rs:248:18)",
                     "0x2: lab::a (lab/src/a.rs:3:4)","0x3: locked_queue::Node::new (crates/locked-queue/src/queue.rs:9:1)",
                     "0x4: lab::measure::harness::run_once"]}"#,
        )
        .unwrap();
        let sites = top_sites(&f, 5, 3).unwrap();
        assert_eq!(sites.len(), 2);
        assert_eq!(
            (sites[0].total_bytes, sites[0].total_blocks, sites[0].at_peak_bytes),
            (900, 30, 64)
        );
        assert_eq!(sites[0].frames[0], "locked_queue::Node::new (queue.rs:9:1)");
        assert_eq!(sites[0].frames[1], "lab::measure::harness::run_once");
        std::fs::write(&f, r#"{"dhatFileVersion":1,"pps":[],"ftbl":[]}"#).unwrap();
        assert!(top_sites(&f, 5, 3).unwrap_err().contains("expected 2"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
