//! Time threads spent on a CPU and waiting for one, read from Linux's `/proc` scheduler
//! statistics, to split a wall time into work, waiting for a CPU and waiting for the disk.
//!
//! A thread's `schedstat` gives, in nanoseconds, its time on a CPU (user and kernel time
//! together) and its time runnable but queued behind other threads. Where `/proc` is missing
//! (other systems), every reading is `None` and the split is not shown.

use std::path::Path;
use std::time::Duration;

/// A thread's time on a CPU and time queued for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sched {
    /// Time running on a CPU.
    pub on_cpu: Duration,
    /// Time runnable but waiting for a CPU.
    pub queued: Duration,
}

impl Sched {
    fn saturating_sub(self, earlier: Sched) -> Sched {
        Sched {
            on_cpu: self.on_cpu.saturating_sub(earlier.on_cpu),
            queued: self.queued.saturating_sub(earlier.queued),
        }
    }

    fn add(&mut self, other: Sched) {
        self.on_cpu += other.on_cpu;
        self.queued += other.queued;
    }
}

/// One thread's counters, from its `schedstat` file.
fn read_schedstat(path: &Path) -> Option<Sched> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    let on_cpu = fields.next()?.ok()?;
    let queued = fields.next()?.ok()?;
    Some(Sched { on_cpu: Duration::from_nanos(on_cpu), queued: Duration::from_nanos(queued) })
}

/// The calling thread's counters so far.
pub fn this_thread() -> Option<Sched> {
    read_schedstat(Path::new("/proc/thread-self/schedstat"))
}

/// The counters so far of every live thread of this process named `name` (the name a thread
/// was spawned with, as the kernel keeps it: up to 15 bytes), added up.
pub fn threads_named(name: &str) -> Option<Sched> {
    let mut total = Sched::default();
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let task = task.ok()?.path();
        let Ok(comm) = std::fs::read_to_string(task.join("comm")) else { continue };
        if comm.trim_end() == name {
            total.add(read_schedstat(&task.join("schedstat")).unwrap_or_default());
        }
    }
    Some(total)
}

/// The time every live thread of this process has spent on a CPU so far, added up: what a run
/// on threads that outlive it cost in all (the caller's and a store's own threads).
pub fn live_threads_on_cpu() -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let task = task.ok()?.path();
        total += read_schedstat(&task.join("schedstat")).unwrap_or_default().on_cpu;
    }
    Some(total)
}

/// Accumulates the calling thread's counters over several timed stretches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuClock {
    total: Option<Sched>,
    started: Option<Sched>,
}

impl CpuClock {
    /// Starts a stretch.
    pub fn start(&mut self) {
        self.started = this_thread();
    }

    /// Ends the stretch started last and adds it to the total.
    pub fn stop(&mut self) {
        if let (Some(started), Some(now)) = (self.started.take(), this_thread()) {
            self.total.get_or_insert_with(Sched::default).add(now.saturating_sub(started));
        }
    }

    /// The counters of all stretches; `None` where `/proc` is missing.
    pub fn total(&self) -> Option<Sched> {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_on_linux() {
        let mut clock = CpuClock::default();
        clock.start();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        clock.stop();
        if cfg!(target_os = "linux") {
            assert!(clock.total().is_some_and(|t| t.on_cpu > Duration::ZERO));
        }
    }
}
