//! Tracepoint ids and record layouts, from tracefs's `events/<group>/<name>/format`.
//!
//! A tracepoint is opened with `perf_event_open(type = PERF_TYPE_TRACEPOINT, config = id)`,
//! and the id is only published by tracefs. The look-up tries, in order:
//! 1. `/sys/kernel/tracing` (the tracefs mount point since Linux 4.1),
//! 2. `/sys/kernel/debug/tracing` (debugfs's automount of tracefs),
//! 3. any `tracefs` (or `debugfs` + `/tracing`) mount listed in `/proc/self/mounts`,
//! 4. mounting tracefs ourselves, when the kernel permits it (root / CAP_SYS_ADMIN), on a
//!    fresh private directory under the temp dir; the formats are read, then it is
//!    unmounted (`MNT_DETACH`) and the directory removed, so nothing is left behind.
//!    `perf` itself does the same at `/sys/kernel/tracing` and leaves it mounted (seen
//!    with strace: `mount(NULL, "/sys/kernel/tracing", "tracefs", 0, NULL)`, then it reads
//!    `events/sched/sched_switch/format`, whose `ID:` line is the id).
//!
//! The first dir that has both `sched_switch` and `sched_wakeup` is used, and
//! `sched_waking` is read from that same dir (and the same private mount); a kernel without
//! it (before Linux 4.3) still gives the other two.
//!
//! The result is cached for the process: ids don't change while the kernel runs.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One field of a tracepoint record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldFormat {
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

/// A parsed `format` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracepointFormat {
    pub name: String,
    pub id: u64,
    pub fields: BTreeMap<String, FieldFormat>,
}

/// Parses tracefs's `format` text (`name:`, `ID:`, then `field:TYPE NAME[N]; offset:O;
/// size:S; signed:B;` lines).
pub fn parse_format(text: &str) -> Result<TracepointFormat, String> {
    let mut name = None;
    let mut id = None;
    let mut fields = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("name:") {
            name = Some(rest.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("ID:") {
            id =
                Some(rest.trim().parse::<u64>().map_err(|e| format!("bad ID line {line:?}: {e}"))?);
        } else if let Some(rest) = line.strip_prefix("field:") {
            let mut decl = None;
            let (mut offset, mut size, mut signed) = (None, None, false);
            for (i, part) in rest.split(';').map(str::trim).enumerate() {
                if i == 0 {
                    decl = Some(part);
                } else if let Some(v) = part.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = part.strip_prefix("size:") {
                    size = v.parse().ok();
                } else if let Some(v) = part.strip_prefix("signed:") {
                    signed = v == "1";
                }
            }
            let decl = decl.unwrap_or_default();
            let field_name =
                decl.rsplit(' ').next().unwrap_or_default().split('[').next().unwrap_or_default();
            match (field_name.is_empty(), offset, size) {
                (false, Some(offset), Some(size)) => {
                    fields.insert(field_name.to_string(), FieldFormat { offset, size, signed });
                }
                _ => return Err(format!("bad field line {line:?}")),
            }
        }
    }
    Ok(TracepointFormat {
        name: name.ok_or("no name: line")?,
        id: id.ok_or("no ID: line")?,
        fields,
    })
}

/// The formats of `sched:sched_switch`, `sched:sched_wakeup` and `sched:sched_waking`, and
/// where they were read.
#[derive(Debug, Clone)]
pub struct SchedFormats {
    pub switch: TracepointFormat,
    pub wakeup: TracepointFormat,
    /// `sched_waking` (Linux ≥ 4.3), read from the same `events` dir as the other two; `Err`
    /// says why it is missing, and the recorder then works with the other two alone.
    pub waking: Result<TracepointFormat, String>,
    /// Which route of the module doc found them, in words.
    pub route: String,
}

/// The three formats of one `events` dir; `Err` unless `sched_switch` and `sched_wakeup`
/// are both there (`sched_waking` is optional).
fn read_sched(events_dir: &Path) -> Result<SchedFormats, String> {
    let read = |name: &str| {
        let path = events_dir.join("sched").join(name).join("format");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        parse_format(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    Ok(SchedFormats {
        switch: read("sched_switch")?,
        wakeup: read("sched_wakeup")?,
        waking: read("sched_waking"),
        route: String::new(),
    })
}

/// Looks the formats up once per process (see the module doc for the routes).
pub fn sched_formats() -> Result<&'static SchedFormats, String> {
    static CACHE: OnceLock<Result<SchedFormats, String>> = OnceLock::new();
    CACHE.get_or_init(look_up).as_ref().map_err(Clone::clone)
}

fn look_up() -> Result<SchedFormats, String> {
    let mut candidates: Vec<PathBuf> =
        vec!["/sys/kernel/tracing/events".into(), "/sys/kernel/debug/tracing/events".into()];
    if let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") {
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 3 {
                match f[2] {
                    "tracefs" => candidates.push(Path::new(f[1]).join("events")),
                    "debugfs" => candidates.push(Path::new(f[1]).join("tracing/events")),
                    _ => {}
                }
            }
        }
    }
    for dir in &candidates {
        if let Ok(formats) = read_sched(dir) {
            return Ok(SchedFormats { route: format!("read from {}", dir.display()), ..formats });
        }
    }
    let (formats, mount_point) = with_private_tracefs(read_sched).map_err(|e| {
        format!("tracepoint ids not found: tracefs is not mounted at /sys/kernel/tracing and {e}")
    })?;
    Ok(SchedFormats {
        route: format!(
            "tracefs was not mounted: mounted it at {} for the look-up, then unmounted it",
            mount_point.display()
        ),
        ..formats
    })
}

/// Mounts tracefs on a new private directory, runs `f` on its `events` dir, unmounts.
fn with_private_tracefs<T>(
    f: impl FnOnce(&Path) -> Result<T, String>,
) -> Result<(T, PathBuf), String> {
    let dir = std::env::temp_dir().join(format!("perf-counters-tracefs-{}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let c_dir = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    let result = mount_tracefs(&c_dir)
        .map_err(|e| format!("mounting it was refused: mount(tracefs): {e}"))
        .and_then(|()| {
            let read = f(&dir.join("events"));
            // SAFETY: `c_dir` is a NUL-terminated path; umount2 reads it only.
            unsafe { libc::umount2(c_dir.as_ptr(), libc::MNT_DETACH) };
            read
        });
    let _ = std::fs::remove_dir(&dir);
    result.map(|t| (t, dir))
}

fn mount_tracefs(target: &CString) -> std::io::Result<()> {
    let source = c"nodev";
    let fstype = c"tracefs";
    // SAFETY: all strings are NUL-terminated and live across the call; no data argument.
    let ret = unsafe {
        libc::mount(source.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null())
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Linux 6.18's `events/sched/sched_switch/format`, as read on the lab VM.
    pub(crate) const SWITCH_FORMAT: &str = "name: sched_switch
ID: 372
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm
";

    /// Linux 6.18's `events/sched/sched_wakeup/format`.
    pub(crate) const WAKEUP_FORMAT: &str = "name: sched_wakeup
ID: 374
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;

print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu
";

    /// Linux 6.18's `events/sched/sched_waking/format`: the fields of `sched_wakeup`.
    pub(crate) const WAKING_FORMAT: &str = "name: sched_waking
ID: 375
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;

print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu
";

    #[test]
    fn parses_sched_switch_format() {
        let f = parse_format(SWITCH_FORMAT).unwrap();
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.id, 372);
        assert_eq!(f.fields["prev_comm"], FieldFormat { offset: 8, size: 16, signed: false });
        assert_eq!(f.fields["prev_state"], FieldFormat { offset: 32, size: 8, signed: true });
        assert_eq!(f.fields["next_pid"].offset, 56);
        assert_eq!(f.fields["common_type"].size, 2);
        assert_eq!(f.fields.len(), 11);
    }

    #[test]
    fn parses_sched_wakeup_format() {
        let f = parse_format(WAKEUP_FORMAT).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_wakeup", 374));
        assert_eq!(f.fields["target_cpu"].offset, 32);
        assert_eq!(f.fields["pid"].size, 4);
    }

    #[test]
    fn parses_sched_waking_format() {
        let f = parse_format(WAKING_FORMAT).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_waking", 375));
        let wakeup = parse_format(WAKEUP_FORMAT).unwrap();
        assert_eq!(f.fields, wakeup.fields, "the same record layout as sched_wakeup");
    }

    /// A dir with `sched_switch` and `sched_wakeup` but no `sched_waking` (Linux < 4.3) still
    /// gives the two; one without `sched_wakeup` gives nothing.
    #[test]
    fn sched_waking_is_optional() {
        let root = std::env::temp_dir().join(format!("tracefs-test-{}", std::process::id()));
        let put = |name: &str, text: &str| {
            let d = root.join("sched").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("format"), text).unwrap();
        };
        put("sched_switch", SWITCH_FORMAT);
        assert!(read_sched(&root).is_err());
        put("sched_wakeup", WAKEUP_FORMAT);
        let f = read_sched(&root).unwrap();
        assert_eq!((f.switch.id, f.wakeup.id), (372, 374));
        let why = f.waking.unwrap_err();
        assert!(why.contains("sched_waking/format"), "{why}");
        put("sched_waking", WAKING_FORMAT);
        assert_eq!(read_sched(&root).unwrap().waking.map(|w| w.id), Ok(375));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn rejects_broken_formats() {
        assert!(parse_format("name: x\n").is_err());
        assert!(parse_format("name: x\nID: y\n").is_err());
        assert!(parse_format("name: x\nID: 1\n\tfield:int a;\tsize:4;\n").is_err());
        let data_loc =
            "name: x\nID: 1\n\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n";
        assert_eq!(parse_format(data_loc).unwrap().fields["name"].offset, 8);
    }
}
