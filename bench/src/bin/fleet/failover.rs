//! (3) of the fleet benchmark: a writer's longest pause while the stream's leader is killed,
//! and whether every acknowledged append survived; and how the stream's leader is found.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use annal_bench::scratch_dir;
use annal_engine::{AppendError, Record};
use annal_fleet::{follow, FleetError, FollowOptions, SharedSession};
use annal_support::nats::Cluster;
use anyhow::{anyhow, ensure};

use crate::{connect, open_store, ordinary, Args};

/// What (3) measured.
#[derive(Debug)]
pub(crate) struct FailoverResult {
    pub(crate) leader_before: String,
    pub(crate) leader_after: String,
    pub(crate) acknowledged: usize,
    pub(crate) errors: usize,
    pub(crate) first_error: Option<String>,
    pub(crate) longest_gap: Duration,
    /// When the longest gap began, in ms after the kill (negative: before it).
    pub(crate) gap_after_kill_ms: f64,
    pub(crate) kill_to_next: Option<Duration>,
    pub(crate) followed: usize,
    pub(crate) lost: usize,
    pub(crate) duplicates: usize,
    pub(crate) unacknowledged_present: usize,
    pub(crate) out_of_order: bool,
    pub(crate) writing_to: String,
}

/// The server that leads `stream`'s replicas now, asked of the cluster directly: the fleet's
/// API does not say, and (3) must kill that one.
pub(crate) fn stream_leader(
    runtime: &tokio::runtime::Runtime,
    urls: &str,
    stream: &str,
) -> anyhow::Result<String> {
    let servers: Vec<String> = urls.split(',').map(str::to_owned).collect();
    runtime.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let asked = async {
                let client = async_nats::connect(servers.clone()).await?;
                let js = async_nats::jetstream::new(client);
                let mut handle = js.get_stream(stream).await?;
                let info = handle.info().await?;
                Ok::<_, anyhow::Error>(info.cluster.as_ref().and_then(|cluster| cluster.leader.clone()))
            };
            // An election leaves the stream without a leader for a moment: ask again.
            if let Ok(Ok(Some(leader))) = tokio::time::timeout(Duration::from_secs(2), asked).await {
                return Ok(leader);
            }
            if Instant::now() >= deadline {
                return Err(anyhow!("stream {stream} has no leader after 20 s"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// What the writer thread of (3) saw.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// The entryIds acknowledged, in order.
    pub(crate) acknowledged: Vec<String>,
    /// When each acknowledgement returned.
    pub(crate) at: Vec<Instant>,
    pub(crate) errors: usize,
    pub(crate) first_error: Option<String>,
    pub(crate) writing_to: String,
}

/// (3)'s writer: appends one record at a time with the position checked until `stop`; after
/// an error it retries the same record at the same position, as a caller that must not lose
/// a turn would (the entryId makes a retry of a stored record a no-op).
pub(crate) fn write_until(
    urls: &str,
    store_path: &Path,
    records: &[Record],
    stop: &AtomicBool,
) -> anyhow::Result<Writer> {
    let store = open_store(store_path)?;
    let fleet = connect(urls, "FAILOVER", 3)?;
    let shared = SharedSession::new(&fleet, &store, "failover");
    let mut writer = Writer::default();
    let mut next = 0;
    let mut records = records.iter();
    let mut pending = records.next();
    while let Some(record) = pending {
        if stop.load(Ordering::Acquire) {
            break;
        }
        match shared.append(Some(next), vec![record.clone()]) {
            Ok(receipt) => {
                writer.at.push(Instant::now());
                writer.acknowledged.push(record.entry_id.clone());
                next = receipt.next;
                pending = records.next();
            }
            Err(err) => {
                writer.errors += 1;
                if writer.first_error.is_none() {
                    writer.first_error = Some(err.to_string());
                }
                if let FleetError::Append(AppendError::Conflict { actual, .. }) = err {
                    // The session moved past the position: the stream took this record on an
                    // attempt whose acknowledgement was lost, and the conflict brought it here.
                    // It is stored, and this writer now knows it: it counts as acknowledged.
                    let held = store.snapshot()?.entry(&record.entry_id)?;
                    ensure!(
                        held.is_some_and(|location| location.session == "failover"),
                        "a conflict with no other writer, and the record is not held: {err}"
                    );
                    writer.at.push(Instant::now());
                    writer.acknowledged.push(record.entry_id.clone());
                    next = actual;
                    pending = records.next();
                    continue;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    writer.writing_to = shared.writing_to()?;
    fleet.close();
    store.close().map_err(|err| anyhow!("closing the writer's store: {err}"))?;
    Ok(writer)
}

/// (3): a writer appending while the stream leader is SIGKILLed, then a fresh follower's copy
/// of the session checked against what the writer was told was stored.
pub(crate) fn failover_scenario(
    dir: &Path,
    cluster: &mut Cluster,
    args: &Args,
) -> anyhow::Result<FailoverResult> {
    let urls = cluster.urls();
    let scratch = scratch_dir(Some(dir), "fleet-failover")?;
    let store_path = scratch.path().join("writer.redb");
    // More records than the writer can append in the time given.
    let records =
        ordinary(((args.before_kill + args.after_kill) as usize * 1_000).max(5_000), args.seed + 7)?;
    // The stream exists before the writer starts, so its leader can be asked.
    connect(&urls, "FAILOVER", 3)?.close();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let stop = AtomicBool::new(false);
    let (writer, leader_before, leader_after, killed_at) = std::thread::scope(|scope| {
        let handle = scope.spawn(|| write_until(&urls, &store_path, &records, &stop));
        let outcome = (|| -> anyhow::Result<(String, String, Instant)> {
            std::thread::sleep(Duration::from_secs(args.before_kill));
            let leader = stream_leader(&runtime, &urls, "FAILOVER")?;
            let index = cluster
                .nodes
                .iter()
                .position(|node| node.name == leader)
                .ok_or_else(|| anyhow!("the leader {leader:?} is no node of the cluster"))?;
            cluster.kill(index);
            let killed_at = Instant::now();
            eprintln!("(3) killed {leader}, the stream leader");
            let alive: Vec<String> =
                cluster.nodes.iter().filter(|node| node.is_running()).map(|node| node.url()).collect();
            let after = stream_leader(&runtime, &alive.join(","), "FAILOVER")?;
            std::thread::sleep(Duration::from_secs(args.after_kill));
            Ok((leader, after, killed_at))
        })();
        stop.store(true, Ordering::Release);
        let writer = handle.join().map_err(|_| anyhow!("the writer thread panicked"))?;
        let (before, after, killed_at) = outcome?;
        Ok::<_, anyhow::Error>((writer?, before, after, killed_at))
    })?;
    eprintln!("(3) {} appends acknowledged, {} errors retried", writer.acknowledged.len(), writer.errors);

    let gaps = writer.at.windows(2).map(|pair| (pair[1] - pair[0], pair[0]));
    let (longest_gap, gap_start) = gaps.max_by_key(|(gap, _)| *gap).unwrap_or((Duration::ZERO, killed_at));
    // Where the pause fell: before the kill it would be the store or the machine, not failover.
    let gap_after_kill_ms = if gap_start >= killed_at {
        (gap_start - killed_at).as_secs_f64() * 1e3
    } else {
        -(killed_at - gap_start).as_secs_f64() * 1e3
    };
    let kill_to_next = writer.at.iter().find(|&&at| at > killed_at).map(|&at| at - killed_at);

    // A new host follows the stream through the surviving servers.
    let alive: Vec<String> =
        cluster.nodes.iter().filter(|node| node.is_running()).map(|node| node.url()).collect();
    let follower_path = scratch.path().join("follower.redb");
    let follower = open_store(&follower_path)?;
    let fleet = connect(&alive.join(","), "FAILOVER", 3)?;
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true)?;
    ensure!(report.stopped.is_empty(), "the follower stopped: {:?}", report.stopped);
    fleet.close();
    let snapshot = follower.snapshot()?;
    let len = snapshot.session("failover")?.map_or(0, |info| info.len);
    let mut followed = Vec::with_capacity(len as usize);
    for guard in snapshot.records("failover", 0..len)? {
        followed.push(guard?.view()?.entry_id().to_owned());
    }
    drop(snapshot);
    follower.close().map_err(|err| anyhow!("closing the follower's store: {err}"))?;

    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in &followed {
        *counts.entry(id.as_str()).or_default() += 1;
    }
    let duplicates = counts.values().map(|&n| n.saturating_sub(1)).sum();
    let present: BTreeSet<&str> = counts.keys().copied().collect();
    let acknowledged: BTreeSet<&str> = writer.acknowledged.iter().map(String::as_str).collect();
    let lost = acknowledged.difference(&present).count();
    let unacknowledged_present = present.difference(&acknowledged).count();
    // Acknowledged appends must also be in the order they were acknowledged.
    let positions: HashMap<&str, usize> =
        followed.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let order: Vec<usize> =
        writer.acknowledged.iter().filter_map(|id| positions.get(id.as_str()).copied()).collect();
    let out_of_order = order.windows(2).any(|pair| pair[0] >= pair[1]);

    Ok(FailoverResult {
        leader_before,
        leader_after,
        acknowledged: writer.acknowledged.len(),
        errors: writer.errors,
        first_error: writer.first_error,
        longest_gap,
        gap_after_kill_ms,
        kill_to_next,
        followed: followed.len(),
        lost,
        duplicates,
        unacknowledged_present,
        out_of_order,
        writing_to: writer.writing_to,
    })
}
