//! The append scenarios, written once against [`System`] so annal and SQLite run the same code.
//!
//! Every call is timed from just before it starts until it returns durable. Records are cloned
//! into per-call batches before the clock starts, so both systems receive owned records the way
//! an application would hand them over; each system's own encoding (JSON for SQLite, hashing
//! and rkyv for annal) is inside the timed call.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use annal_engine::Record;

use crate::cputime::live_threads_on_cpu;
use crate::quantile;

/// A database under test.
pub trait System: Sync {
    /// A per-thread handle that appends.
    type Writer<'a>: Writer
    where
        Self: 'a;

    /// Opens a writer; called on the thread that will use it.
    ///
    /// # Errors
    /// If the system cannot give out a writer (for SQLite: cannot open a connection).
    fn writer(&self) -> anyhow::Result<Self::Writer<'_>>;
}

/// Appends records to a session, durable when the call returns.
pub trait Writer {
    /// Appends `records` at the end of `session` as one atomic, durable call.
    ///
    /// # Errors
    /// Whatever the system reports; the benchmark stops on the first error.
    fn append(&mut self, session: &str, records: Vec<Record>) -> anyhow::Result<()>;
}

/// What one scenario measured on one system.
#[derive(Clone, Debug)]
pub struct Run {
    /// Records appended.
    pub records: usize,
    /// Calls made.
    pub calls: usize,
    /// Wall time from the first call to the last return.
    pub elapsed: Duration,
    /// Each call's latency, sorted.
    pub latencies: Vec<Duration>,
    /// CPU time of every thread of the process over the run, where it can be read and every
    /// thread that worked outlives the run (one caller; not the threaded scenario).
    pub cpu: Option<Duration>,
    /// Writes the disk completed over the run (every process's; see
    /// [`crate::physical::disk_writes`]), where they can be counted; set by the caller.
    pub disk_writes: Option<u64>,
}

impl Run {
    fn new(records: usize, elapsed: Duration, mut latencies: Vec<Duration>) -> Run {
        latencies.sort_unstable();
        Run { records, calls: latencies.len(), elapsed, latencies, cpu: None, disk_writes: None }
    }

    /// Records per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.records as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// The median call latency.
    pub fn p50(&self) -> Duration {
        quantile(&self.latencies, 0.50)
    }

    /// The 99th percentile call latency.
    pub fn p99(&self) -> Duration {
        quantile(&self.latencies, 0.99)
    }

    /// The slowest call (in a long enough append run, a checkpoint on both systems).
    pub fn slowest(&self) -> Duration {
        self.latencies.last().copied().unwrap_or_default()
    }
}

/// Of several runs of the same scenario, the one with the median throughput.
pub fn median_run(mut runs: Vec<Run>) -> Option<Run> {
    runs.sort_by(|a, b| a.throughput().total_cmp(&b.throughput()));
    let middle = runs.len() / 2;
    runs.into_iter().nth(middle)
}

/// Splits `records` into calls of up to `per_call` records each (cloned, outside any timing).
pub fn batches(records: &[Record], per_call: usize) -> Vec<Vec<Record>> {
    records.chunks(per_call.max(1)).map(<[Record]>::to_vec).collect()
}

/// Appends each batch with one call from one thread, to one session.
///
/// # Errors
/// The first append error.
pub fn sequential(system: &impl System, session: &str, calls: Vec<Vec<Record>>) -> anyhow::Result<Run> {
    let mut writer = system.writer()?;
    let records = calls.iter().map(Vec::len).sum();
    let mut latencies = Vec::with_capacity(calls.len());
    let cpu_before = live_threads_on_cpu();
    let started = Instant::now();
    for batch in calls {
        let call = Instant::now();
        writer.append(session, batch)?;
        latencies.push(call.elapsed());
    }
    let elapsed = started.elapsed();
    let cpu = cpu_before.zip(live_threads_on_cpu()).map(|(before, after)| after.saturating_sub(before));
    Ok(Run { cpu, ..Run::new(records, elapsed, latencies) })
}

/// `threads` threads, each appending its share of `records` one record per call to its own
/// session (`{session}-{thread}`), all started together.
///
/// # Errors
/// The first append error of any thread.
pub fn concurrent(
    system: &impl System,
    session: &str,
    records: &[Record],
    threads: usize,
) -> anyhow::Result<Run> {
    let threads = threads.max(1);
    // Thread t gets records t, t + threads, …: every thread sees the same mix of sizes.
    let shares: Vec<Vec<Vec<Record>>> = (0..threads)
        .map(|t| records.iter().skip(t).step_by(threads).map(|r| vec![r.clone()]).collect())
        .collect();
    let start = Barrier::new(threads + 1);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(t, calls)| {
                let start = &start;
                scope.spawn(move || -> anyhow::Result<Vec<Duration>> {
                    let name = format!("{session}-{t}");
                    let writer = system.writer();
                    start.wait();
                    let mut writer = writer?;
                    let mut latencies = Vec::with_capacity(calls.len());
                    for batch in calls {
                        let call = Instant::now();
                        writer.append(&name, batch)?;
                        latencies.push(call.elapsed());
                    }
                    Ok(latencies)
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (started.elapsed(), joined)
    });
    let (elapsed, joined) = results;
    let mut latencies = Vec::with_capacity(records.len());
    for result in joined {
        let thread_latencies = result.map_err(|_| anyhow::anyhow!("an appending thread panicked"))??;
        latencies.extend(thread_latencies);
    }
    Ok(Run::new(records.len(), elapsed, latencies))
}
