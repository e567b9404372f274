//! (4) of the fleet benchmark, failover stalls: one writer appends ordinary records one at a
//! time to a shared session (3 nodes, 3 replicas, the position checked) while faults are
//! injected again and again, each kind `--faults` times: the stream's leader SIGKILLed and
//! restarted, a server that does not lead the stream SIGKILLed and restarted, and the
//! stream's leader paused with SIGSTOP and resumed once the writer goes on. A fault's stall is
//! the longest gap between two acknowledged appends from the last one before the fault to the
//! first one at least 2 s after it: the longest an append waits (an acknowledgement already on
//! its way when the fault struck does not end it). Then a new follower's copy is checked
//! against every acknowledged append.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use annal_bench::report::ms;
use annal_bench::{quantile, scratch_dir};
use annal_engine::{AppendError, Record};
use annal_fleet::{follow, FleetError, FollowOptions, SharedSession};
use annal_support::nats::Cluster;
use anyhow::{anyhow, ensure};

use crate::failover::stream_leader;
use crate::{connect, open_store, ordinary};

/// The fault kinds, in the order they run.
pub(crate) const KINDS: [&str; 3] = [
    "stream leader SIGKILLed, restarted",
    "another server SIGKILLed, restarted",
    "stream leader paused (SIGSTOP), resumed",
];

/// What (4) measured for one kind of fault.
#[derive(Debug)]
pub(crate) struct Stalls {
    pub(crate) kind: &'static str,
    pub(crate) sorted: Vec<Duration>,
}

/// What (4) measured in all.
#[derive(Debug)]
pub(crate) struct StallResult {
    pub(crate) kinds: Vec<Stalls>,
    pub(crate) acknowledged: usize,
    pub(crate) errors: usize,
    pub(crate) lost: usize,
    pub(crate) duplicated: usize,
}

/// The writer's acknowledgements as they come, for the fault loop to wait on.
#[derive(Default)]
struct Progress {
    acknowledged: Mutex<Vec<(String, Instant)>>,
    changed: Condvar,
    /// The writer's last error, for the line that says it is stuck.
    last_error: Mutex<Option<String>>,
}

impl Progress {
    /// The longest gap between acknowledgements from the last one before `from` to `to`.
    fn longest_gap(&self, from: Instant, to: Instant) -> Duration {
        let acknowledged = self.acknowledged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = acknowledged.iter().rposition(|(_, at)| *at <= from).unwrap_or(0);
        let times: Vec<Instant> =
            acknowledged[before..].iter().map(|(_, at)| *at).take_while(|at| *at <= to).collect();
        times.windows(2).map(|pair| pair[1] - pair[0]).max().unwrap_or_default()
    }

    /// The first acknowledgement after `since`, waited for up to `limit`.
    fn next_after(&self, since: Instant, limit: Duration) -> Option<Instant> {
        let deadline = Instant::now() + limit;
        let mut acknowledged = self.acknowledged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            if let Some(&(_, at)) = acknowledged.iter().rev().take_while(|(_, at)| *at > since).last() {
                return Some(at);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            acknowledged = self.changed.wait_timeout(acknowledged, left).ok()?.0;
        }
    }
}

fn writer(
    urls: &str,
    store_path: &Path,
    records: &[Record],
    progress: &Progress,
    stop: &AtomicBool,
) -> anyhow::Result<usize> {
    let store = open_store(store_path)?;
    let fleet = connect(urls, "STALLS", 3)?;
    let shared = SharedSession::new(&fleet, &store, "stalls");
    let (mut next, mut errors) = (0, 0);
    let mut records = records.iter();
    let mut pending = records.next();
    while let (Some(record), false) = (pending, stop.load(Ordering::Acquire)) {
        let outcome = shared.append(Some(next), vec![record.clone()]);
        let stored = match outcome {
            Ok(receipt) => Some(receipt.next),
            // Taken on an attempt whose acknowledgement was lost: the conflict brought it here.
            Err(FleetError::Append(AppendError::Conflict { actual, .. }))
                if store.snapshot()?.entry(&record.entry_id)?.is_some() =>
            {
                Some(actual)
            }
            Err(err) => {
                *progress.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(err.to_string());
                None
            }
        };
        match stored {
            Some(at) => {
                next = at;
                let mut acknowledged =
                    progress.acknowledged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                acknowledged.push((record.entry_id.clone(), Instant::now()));
                progress.changed.notify_all();
                pending = records.next();
            }
            None => errors += 1,
        }
    }
    fleet.close();
    Ok(errors)
}

/// Runs (4): `faults` faults of each kind, `quiet` of undisturbed appends before each.
pub(crate) fn run(
    dir: &Path,
    cluster: &mut Cluster,
    faults: usize,
    seed: u64,
) -> anyhow::Result<StallResult> {
    let urls = cluster.urls();
    let scratch = scratch_dir(Some(dir), "fleet-stalls")?;
    let store_path = scratch.path().join("writer.redb");
    let records = ordinary(faults * KINDS.len() * 4_000 + 10_000, seed + 11)?;
    connect(&urls, "STALLS", 3)?.close();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (progress, stop) = (Progress::default(), AtomicBool::new(false));
    let quiet = Duration::from_millis(1500);
    let (kinds, errors) = std::thread::scope(|scope| {
        let handle = scope.spawn(|| writer(&urls, &store_path, &records, &progress, &stop));
        let measured = (|| -> anyhow::Result<Vec<Stalls>> {
            let mut kinds = Vec::new();
            for (kind_index, kind) in KINDS.iter().enumerate() {
                let mut stalls = Vec::with_capacity(faults);
                for fault in 0..faults {
                    let started = Instant::now();
                    progress
                        .next_after(started, Duration::from_secs(60))
                        .ok_or_else(|| anyhow!("the writer is stuck"))?;
                    std::thread::sleep(quiet);
                    let leader = stream_leader(&runtime, &urls, "STALLS")?;
                    let leader = cluster
                        .nodes
                        .iter()
                        .position(|node| node.name == leader)
                        .ok_or_else(|| anyhow!("leader {leader:?} unknown"))?;
                    let victim = if kind_index == 1 { (leader + 1) % cluster.nodes.len() } else { leader };
                    let injected = Instant::now();
                    if kind_index == 2 {
                        cluster.pause(victim, true)
                    } else {
                        cluster.kill(victim)
                    }
                    let resumed =
                        progress.next_after(injected + Duration::from_secs(2), Duration::from_secs(60));
                    if kind_index == 2 {
                        cluster.pause(victim, false)
                    } else {
                        cluster.restart(victim)
                    }
                    let resumed = resumed.ok_or_else(|| {
                        let last =
                            progress.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        anyhow!(
                            "{kind}: no append acknowledged within 60 s; the writer's last error: {last:?}"
                        )
                    })?;
                    let stall = progress.longest_gap(injected, resumed);
                    stalls.push(stall);
                    eprintln!("(4) {kind} #{}: {:.0} ms", fault + 1, stall.as_secs_f64() * 1e3);
                }
                stalls.sort_unstable();
                kinds.push(Stalls { kind, sorted: stalls });
            }
            Ok(kinds)
        })();
        stop.store(true, Ordering::Release);
        let errors = handle.join().map_err(|_| anyhow!("the writer thread panicked"))?;
        Ok::<_, anyhow::Error>((measured?, errors?))
    })?;

    // A new host follows through every server; each acknowledged append is there once.
    let follower = open_store(&scratch.path().join("follower.redb"))?;
    let fleet = connect(&urls, "STALLS", 3)?;
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true)?;
    ensure!(report.stopped.is_empty(), "the follower stopped: {:?}", report.stopped);
    fleet.close();
    let snapshot = follower.snapshot()?;
    let mut counts: HashMap<String, usize> = HashMap::new();
    for guard in snapshot.records("stalls", 0..u64::MAX)? {
        *counts.entry(guard?.view()?.entry_id().to_owned()).or_default() += 1;
    }
    let acknowledged = progress.acknowledged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let lost = acknowledged.iter().filter(|(id, _)| !counts.contains_key(id)).count();
    let duplicated = counts.values().map(|&n| n.saturating_sub(1)).sum();
    Ok(StallResult { kinds, acknowledged: acknowledged.len(), errors, lost, duplicated })
}

/// The table of (4).
pub(crate) fn table(out: &mut String, result: &StallResult, faults: usize) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "(4) One writer appending to a shared session on 3 nodes, 3 replicas, {faults} faults of each kind one after another, each after 1.5 s of undisturbed appends; {} appends acknowledged, {} errors retried, {} acknowledged but missing on a new follower, {} duplicated.",
        result.acknowledged, result.errors, result.lost, result.duplicated
    );
    let _ = writeln!(out);
    crate::tables::row(out, &["fault", "faults", "stall p50", "stall p99", "stall max", "target", "result"]);
    crate::tables::row(out, &["---", "--:", "--:", "--:", "--:", "---", "---"]);
    for stalls in &result.kinds {
        let p99 = quantile(&stalls.sorted, 0.99);
        let (target, result) = if stalls.kind == KINDS[0] {
            ("p99 ≤ 5 s", crate::tables::met(p99 <= Duration::from_secs(5)))
        } else {
            ("–", "–")
        };
        crate::tables::row(
            out,
            &[
                stalls.kind,
                &stalls.sorted.len().to_string(),
                &ms(quantile(&stalls.sorted, 0.5)),
                &ms(p99),
                &ms(stalls.sorted.last().copied().unwrap_or_default()),
                target,
                result,
            ],
        );
    }
    let _ = writeln!(out);
}
