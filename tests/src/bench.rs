//! What the benchmarks share: reading sizes from the environment, latency summaries and the
//! process's resident memory.

use std::time::Duration;

/// A size from the environment, or `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Prints count, mean, p50, p99 and max of latency samples.
pub fn summary(label: &str, mut samples: Vec<Duration>) {
    if samples.is_empty() {
        println!("{label}: no samples");
        return;
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    println!(
        "{label}: n={} mean={:.2}ms p50={:.2}ms p99={:.2}ms max={:.2}ms",
        samples.len(),
        mean.as_secs_f64() * 1e3,
        pick(0.5).as_secs_f64() * 1e3,
        pick(0.99).as_secs_f64() * 1e3,
        pick(1.0).as_secs_f64() * 1e3
    );
}

/// Resident set size in MiB, from /proc (Linux; 0 elsewhere).
pub fn rss_mib() -> f64 {
    rss_mib_of("self")
}

/// The resident memory of the process `pid` (a number, or `self`), in MiB; 0 when unknown.
pub fn rss_mib_of(pid: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Hands the heap memory freed so far back to the system (glibc keeps freed pages mapped), so
/// that RSS measured afterwards is what the process holds now rather than its high-water mark:
/// the scale benchmark seeds its history in-process, which the server never does.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The context switches of every thread of this process so far (voluntary, involuntary), from
/// `/proc/self/task/*/status`: how often threads went to sleep and were woken, e.g. the blocking
/// pool's handing of each request to a thread and back. Threads that have exited are not counted.
pub fn context_switches() -> (u64, u64) {
    let mut total = (0, 0);
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return total;
    };
    for task in tasks.flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        for line in status.lines() {
            let value = |l: &str| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if line.starts_with("voluntary_ctxt_switches:") {
                total.0 += value(line);
            } else if line.starts_with("nonvoluntary_ctxt_switches:") {
                total.1 += value(line);
            }
        }
    }
    total
}
