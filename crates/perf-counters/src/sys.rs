//! The `perf_event_open(2)` layer: the attribute struct, the constants of the events this
//! crate and `sched-recorder` open, the syscall and ioctl wrappers, and the page size, the
//! online CPUs and the effective uid they need. Values are those of
//! `include/uapi/linux/perf_event.h`. Public for `sched-recorder`, which opens its
//! tracepoints and mmap rings through it; the counting API is the crate root.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;

pub const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
pub const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
pub const PERF_COUNT_HW_CACHE_REFERENCES: u64 = 2;
pub const PERF_COUNT_HW_CACHE_MISSES: u64 = 3;
pub const PERF_COUNT_HW_BRANCH_MISSES: u64 = 5;

pub const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
pub const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
pub const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
pub const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;

pub const PERF_SAMPLE_TID: u64 = 1 << 1;
pub const PERF_SAMPLE_TIME: u64 = 1 << 2;
pub const PERF_SAMPLE_CPU: u64 = 1 << 7;
pub const PERF_SAMPLE_RAW: u64 = 1 << 10;

pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;

// Bits of the attribute's flag word, in the order of the C bitfield.
pub const ATTR_DISABLED: u64 = 1 << 0;
pub const ATTR_INHERIT: u64 = 1 << 1;
pub const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const ATTR_EXCLUDE_HV: u64 = 1 << 6;
pub const ATTR_WATERMARK: u64 = 1 << 14;
pub const ATTR_SAMPLE_ID_ALL: u64 = 1 << 18;
pub const ATTR_USE_CLOCKID: u64 = 1 << 25;
pub const ATTR_CONTEXT_SWITCH: u64 = 1 << 26;

pub const PERF_RECORD_LOST: u32 = 2;
pub const PERF_RECORD_THROTTLE: u32 = 5;
pub const PERF_RECORD_UNTHROTTLE: u32 = 6;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_SWITCH: u32 = 14;
/// `misc` bit of a `PERF_RECORD_SWITCH`: switch-out (else switch-in).
pub const PERF_RECORD_MISC_SWITCH_OUT: u16 = 1 << 13;

pub const PERF_COUNT_SW_DUMMY: u64 = 9;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

// _IO('$', n): no argument; _IO('$', 5) takes an fd as its integer argument.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_RESET: libc::c_ulong = 0x2403;
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;

/// `struct perf_event_attr` up to `sig_data` (`PERF_ATTR_SIZE_VER7`, 128 bytes). Kernels
/// older than the struct accept it as long as the fields they don't know are zero.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    /// `wakeup_events` or, with `ATTR_WATERMARK`, `wakeup_watermark` (bytes).
    pub wakeup: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
}

const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 128);

impl PerfEventAttr {
    pub fn new(type_: u32, config: u64) -> Self {
        PerfEventAttr {
            type_,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config,
            ..Default::default()
        }
    }
}

/// `perf_event_open(attr, pid, cpu, -1, FD_CLOEXEC)`.
pub fn perf_event_open(attr: &PerfEventAttr, pid: i32, cpu: i32) -> io::Result<OwnedFd> {
    let mut attr = *attr;
    let attr_ptr: *mut PerfEventAttr = &mut attr;
    // SAFETY: `attr_ptr` points to a live, initialised `perf_event_attr` whose `size` field
    // is its real size, so the kernel reads (and on E2BIG writes back `size`) only inside
    // it; the remaining arguments are plain integers.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr_ptr,
            pid as libc::c_long,
            cpu as libc::c_long,
            -1 as libc::c_long,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall returned a fresh file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(ret as libc::c_int) })
}

fn ioctl(fd: &impl AsRawFd, request: libc::c_ulong, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: the perf ioctls used here take an integer argument (or none) and touch no
    // user memory; `fd` is an open descriptor borrowed for the call.
    let ret = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub fn enable(fd: &impl AsRawFd) -> io::Result<()> {
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)
}

pub fn disable(fd: &impl AsRawFd) -> io::Result<()> {
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0)
}

pub fn reset(fd: &impl AsRawFd) -> io::Result<()> {
    ioctl(fd, PERF_EVENT_IOC_RESET, 0)
}

/// Sends `fd`'s samples into `target`'s ring buffer (same CPU, same clock).
pub fn set_output(fd: &impl AsRawFd, target: &impl AsRawFd) -> io::Result<()> {
    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, target.as_raw_fd() as libc::c_ulong)
}

/// The effective uid (perf's permission checks name it in their messages).
pub fn euid() -> u32 {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// The page size (a perf ring is one control page and `2^n` data pages).
pub fn page_size() -> usize {
    // SAFETY: sysconf only reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-3,6`).
pub fn online_cpus() -> io::Result<Vec<u32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    parse_cpu_list(&text)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("cpu list {text:?}")))
}

/// Parses a kernel CPU list (`0-3,6`); `None` if malformed.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// Reads one `u64`-array record from a counter fd.
pub(crate) fn read_u64s<const N: usize>(file: &File) -> io::Result<[u64; N]> {
    use std::io::Read;
    let mut bytes = [0u8; 64];
    let want = N * 8;
    let got = (&*file).read(&mut bytes[..want])?;
    if got != want {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("read {got} of {want} bytes"),
        ));
    }
    let mut out = [0u64; N];
    for (i, v) in out.iter_mut().enumerate() {
        *v = u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("0,2-4,7"), Some(vec![0, 2, 3, 4, 7]));
        assert_eq!(parse_cpu_list("0-x"), None);
    }
}
