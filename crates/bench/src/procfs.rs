//! What Linux's `/proc` says about a process (CPU time, resident memory) and about the machine.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

/// `pid` itself; `0` stands for this process.
fn proc_dir(pid: u32) -> String {
    if pid == 0 {
        "/proc/self".to_owned()
    } else {
        format!("/proc/{pid}")
    }
}

/// Clock ticks per second of `/proc/*/stat` times (`getconf CLK_TCK`, 100 on Linux).
fn clock_ticks() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|t| *t > 0)
            .unwrap_or(100)
    })
}

/// User plus system CPU time of every thread of `pid` so far (`0`: this process), if readable.
pub(crate) fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("{}/stat", proc_dir(pid))).ok()?;
    // Fields after the parenthesised command name start at field 3 (state); utime and stime
    // are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = clock_ticks();
    Some(Duration::from_micros((utime + stime) * 1_000_000 / ticks))
}

/// Resident set size of `pid` in KiB (`VmRSS`), if readable.
pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmRSS:")
}

/// Peak resident set size of `pid` in KiB (`VmHWM`), if readable.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmHWM:")
}

fn status_field(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("{}/status", proc_dir(pid))).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// The child processes of `pid` (found by scanning `/proc/*/stat` for their parent), e.g. the
/// gateway's stdio backends.
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| parent(*child) == Some(pid))
        .collect()
}

fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name: state, then ppid.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The machine the numbers were taken on.
pub(crate) fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown", |(_, v)| v.trim());
    let mem_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_owned();
            line["MemTotal:".len()..]
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    json!({
        "nproc": std::thread::available_parallelism().map_or(0, usize::from),
        "cpu": cpu,
        "memory_gib": (mem_kib as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        "kernel": kernel.trim(),
        "git_commit": git_commit(),
    })
}

fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::procs::workspace_root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_cpu_and_memory() {
        assert!(cpu_time(0).is_some());
        assert!(rss_kib(0).is_some_and(|kib| kib > 0));
        assert!(peak_rss_kib(0).is_some());
        let child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        assert!(children(std::process::id()).contains(&child.id()));
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
    }
}
