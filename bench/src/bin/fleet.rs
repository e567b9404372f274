//! The fleet benchmark: annal-fleet's shared appends, a new follower's catch-up and appends
//! across a stream leader's loss, on real `nats-server` clusters on loopback.
//!
//! Four measurements, each printed as a Markdown table with its targets beside it: (1) the
//! latency of a checked append to a shared session (3 replicas, 1 replica, 3 replicas that
//! fsync every write) beside a local checked append and a bare JetStream publish, which split
//! it into the store's part and the servers' part; (2) a new follower's catch-up rate into
//! a plain store and into a search-ready one; (3) the longest pause of a writer while the
//! stream's leader is killed, and whether every acknowledged append survived; (4) the stalls
//! of a writer over repeated faults of three kinds (`fleet/stalls.rs`). Progress goes
//! to stderr; nothing asserts a timing.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal_bench::records::{generate, is_large, to_json, Workload};
use annal_bench::report::{ms, thousands};
use annal_bench::{core_count, quantile, scratch_dir};
use annal_engine::{AppendError, Record, Store, StoreOptions};
use annal_fleet::{
    follow, publish, Fleet, FleetError, FleetOptions, FollowOptions, PublishOptions, SharedSession,
};
use annal_query::{IndexOptions, SearchIndex};
use annal_support::calendar::today_utc;
use annal_support::nats::{Cluster, Sync};
use anyhow::{anyhow, ensure, Context as _};
use clap::Parser;

#[path = "fleet/stalls.rs"]
mod stalls;

/// Measures annal-fleet on local NATS JetStream clusters and prints Markdown tables.
#[derive(Debug, Parser)]
#[command(name = "fleet")]
struct Args {
    /// Checked appends timed per configuration in (1), one ordinary record each.
    #[arg(long, default_value_t = 2_000)]
    appends: usize,
    /// Appends made before timing starts in (1): connections, the stream's files and the
    /// store's pages are warm by then, as on a host that has been running.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Megabytes (10⁶ B) of payload text published for the follower in (2).
    #[arg(long, default_value_t = 100)]
    follow_mb: usize,
    /// Records per session in (2).
    #[arg(long, default_value_t = 500)]
    session_records: usize,
    /// Seconds the writer appends in (3) before the stream leader is killed.
    #[arg(long, default_value_t = 3)]
    before_kill: u64,
    /// Seconds the writer goes on appending in (3) after the kill.
    #[arg(long, default_value_t = 12)]
    after_kill: u64,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the servers' stream files and the stores go (default: the system temp folder).
    /// Point it at a real disk: on tmpfs an fsync costs nothing and the figures flatter.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Faults of each kind in (4).
    #[arg(long, default_value_t = 20)]
    faults: usize,
    /// Which measurements to run: any of `append`, `follow`, `failover`, `stalls`,
    /// comma-separated.
    #[arg(long, default_value = "append,follow,failover,stalls")]
    only: String,
}

/// The latencies of one configuration of (1).
#[derive(Debug)]
struct Latencies {
    label: String,
    sorted: Vec<Duration>,
    elapsed: Duration,
    /// Publishes the server refused as out of place though no one else wrote (raw rows).
    conflicts: usize,
}

impl Latencies {
    fn new(label: &str, mut samples: Vec<Duration>, elapsed: Duration) -> Latencies {
        samples.sort_unstable();
        Latencies { label: label.to_owned(), sorted: samples, elapsed, conflicts: 0 }
    }

    fn p50(&self) -> Duration {
        quantile(&self.sorted, 0.5)
    }

    fn p99(&self) -> Duration {
        quantile(&self.sorted, 0.99)
    }

    fn max(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }

    fn rate(&self) -> f64 {
        self.sorted.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One follower run of (2).
#[derive(Debug)]
struct Catchup {
    label: String,
    records: u64,
    bytes: u64,
    follow: Duration,
    index: Duration,
}

impl Catchup {
    fn total(&self) -> Duration {
        self.follow + self.index
    }

    fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.total().as_secs_f64().max(1e-9)
    }
}

/// What (2) measured.
#[derive(Debug)]
struct FollowResult {
    sessions: usize,
    workload: Workload,
    publish_records: u64,
    publish_bytes: u64,
    publish_time: Duration,
    /// Appending the same records to the source store, 1,000 per call.
    source_time: Duration,
    runs: Vec<Catchup>,
}

/// What (3) measured.
#[derive(Debug)]
struct FailoverResult {
    leader_before: String,
    leader_after: String,
    acknowledged: usize,
    errors: usize,
    first_error: Option<String>,
    longest_gap: Duration,
    /// When the longest gap began, in ms after the kill (negative: before it).
    gap_after_kill_ms: f64,
    kill_to_next: Option<Duration>,
    followed: usize,
    lost: usize,
    duplicates: usize,
    unacknowledged_present: usize,
    out_of_order: bool,
    writing_to: String,
}

/// Ordinary records of the workload (no 45–55 KB outputs): the appends of (1) and (3) are one
/// turn of an agent, and a tool output's size would measure the disk, not the round trip.
fn ordinary(count: usize, seed: u64) -> anyhow::Result<Vec<Record>> {
    // About 2% are large; ask for enough that `count` ordinary ones remain.
    let records = generate(count + count / 10 + 100, seed);
    let picked: Vec<Record> = records.into_iter().filter(|record| !is_large(record)).take(count).collect();
    ensure!(picked.len() == count, "the generator gave {} ordinary records, not {count}", picked.len());
    Ok(picked)
}

fn open_store(path: &Path) -> anyhow::Result<Store> {
    Store::open(path, StoreOptions::default())
        .with_context(|| format!("cannot open a store at {}", path.display()))
}

fn connect(urls: &str, stream: &str, replicas: usize) -> anyhow::Result<Fleet> {
    let mut options = FleetOptions::from_urls(urls)?;
    options.stream = stream.to_owned();
    // Streams on one cluster may not share subjects: each scenario its own prefix as well.
    options.prefix = format!("bench-{}", stream.to_lowercase());
    options.replicas = replicas;
    Ok(Fleet::connect(options)?)
}

/// (1) on a fleet: `warmup` then `records.len()` checked appends of one record each to one
/// shared session, each timed from the call to its return.
fn shared_appends(
    dir: &Path,
    urls: &str,
    stream: &str,
    replicas: usize,
    label: &str,
    warmup: &[Record],
    records: &[Record],
) -> anyhow::Result<Latencies> {
    let scratch = scratch_dir(Some(dir), "fleet-append")?;
    let store = open_store(&scratch.path().join("annal.redb"))?;
    let fleet = connect(urls, stream, replicas)?;
    let shared = SharedSession::new(&fleet, &store, "shared");
    let mut next = 0;
    for record in warmup {
        next = shared.append(Some(next), vec![record.clone()])?.next;
    }
    let mut samples = Vec::with_capacity(records.len());
    let started = Instant::now();
    for record in records {
        let at = Instant::now();
        let receipt = shared.append(Some(next), vec![record.clone()])?;
        samples.push(at.elapsed());
        next = receipt.next;
    }
    let elapsed = started.elapsed();
    let writing_to = shared.writing_to()?;
    ensure!(writing_to == "shared", "{label}: appends went to the offline fork {writing_to:?}");
    fleet.close();
    store.close().map_err(|err| anyhow!("closing the store: {err}"))?;
    eprintln!("(1) {label}: {} appends in {:.2} s", records.len(), elapsed.as_secs_f64());
    Ok(Latencies::new(label, samples, elapsed))
}

/// (1) without annal: the same records' JSON published straight to a stream of the same
/// cluster with async-nats, each checked against the subject's last sequence and awaited.
/// What the servers and the round trip cost, so the rest of a shared append is annal's.
fn raw_publishes(
    urls: &str,
    stream: &str,
    replicas: usize,
    label: &str,
    warmup: &[Record],
    records: &[Record],
) -> anyhow::Result<Latencies> {
    use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage, stream::Config};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let servers: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let payloads: Vec<Vec<u8>> =
        warmup.iter().chain(records).map(|record| to_json(record).into_bytes()).collect();
    let subject = format!("raw-{}.s.one", stream.to_lowercase());
    let mut conflicts = 0;
    let samples = runtime.block_on(async {
        let client = async_nats::connect(servers).await?;
        let js = jetstream::new(client);
        let config = Config {
            name: stream.to_owned(),
            subjects: vec![subject.clone()],
            num_replicas: replicas,
            ..Default::default()
        };
        // A new stream elects its leader first; until then publishes are not answered.
        let deadline = Instant::now() + Duration::from_secs(20);
        let handle = loop {
            if let Ok(mut handle) = js.get_or_create_stream(config.clone()).await {
                if handle
                    .info()
                    .await
                    .is_ok_and(|info| info.cluster.as_ref().is_none_or(|c| c.leader.is_some()))
                {
                    break handle;
                }
            }
            ensure!(Instant::now() < deadline, "stream {stream} has no leader after 20 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let mut last = 0;
        let mut samples = Vec::with_capacity(records.len());
        for (i, payload) in payloads.into_iter().enumerate() {
            let at = Instant::now();
            let message =
                PublishMessage::build().payload(payload.into()).expected_last_subject_sequence(last);
            match js.send_publish(subject.clone(), message).await?.await {
                Ok(ack) => last = ack.sequence,
                Err(err) if err.kind() == PublishErrorKind::WrongLastSequence => {
                    // No other writer: the server's answer disagrees with its own last ack.
                    // Say so, take its last sequence, and go on to the next record.
                    let held = handle.get_last_raw_message_by_subject(&subject).await?.sequence;
                    eprintln!(
                        "{label}: publish {i} expected last {last}, the stream's last is {held}: {err}"
                    );
                    conflicts += 1;
                    last = held;
                }
                Err(err) => return Err(err.into()),
            }
            if i >= warmup.len() {
                samples.push(at.elapsed());
            }
        }
        Ok::<_, anyhow::Error>(samples)
    })?;
    let elapsed = samples.iter().sum();
    eprintln!("(1) {label}: {} publishes in {:.2} s", samples.len(), Duration::as_secs_f64(&elapsed));
    let mut latencies = Latencies::new(label, samples, elapsed);
    latencies.conflicts = conflicts;
    Ok(latencies)
}

/// (1) on one host: the same checked appends to a local store, no fleet. With `cursor`, each
/// append is followed by a durable cursor write, as a shared append saves the fleet's cursors
/// beside the record: the local part of a shared append's cost.
fn local_appends(
    dir: &Path,
    warmup: &[Record],
    records: &[Record],
    cursor: bool,
) -> anyhow::Result<Latencies> {
    let scratch = scratch_dir(Some(dir), "fleet-local")?;
    let store = open_store(&scratch.path().join("annal.redb"))?;
    let append = |next: u64, record: &Record| -> anyhow::Result<u64> {
        let receipt = store.append("local", Some(next), vec![record.clone()])?;
        if cursor {
            store.put_cursors(vec![("bench:seq".to_owned(), Some(receipt.next.to_le_bytes().to_vec()))])?;
        }
        Ok(receipt.next)
    };
    let mut next = 0;
    for record in warmup {
        next = append(next, record)?;
    }
    let mut samples = Vec::with_capacity(records.len());
    let started = Instant::now();
    for record in records {
        let at = Instant::now();
        next = append(next, record)?;
        samples.push(at.elapsed());
    }
    let elapsed = started.elapsed();
    store.close().map_err(|err| anyhow!("closing the store: {err}"))?;
    let label = if cursor {
        "local `Store::append`, then `put_cursors` (both durable), no fleet"
    } else {
        "local `Store::append`, no fleet"
    };
    eprintln!("(1) {label}: {} appends in {:.2} s", records.len(), elapsed.as_secs_f64());
    Ok(Latencies::new(label, samples, elapsed))
}

/// (2): fills a store with sessions of the workload until `payload_bytes` of payload text,
/// publishes it, then follows the stream into empty stores: plain, and made search-ready.
fn follow_scenario(dir: &Path, urls: &str, args: &Args) -> anyhow::Result<FollowResult> {
    let scratch = scratch_dir(Some(dir), "fleet-follow")?;
    let source = open_store(&scratch.path().join("source.redb"))?;
    let target = args.follow_mb * 1_000_000;
    let mut all = Workload { records: 0, payload_bytes: 0, large: 0, ordinary_payload_bytes: 0 };
    let mut sessions = 0;
    let mut source_time = Duration::ZERO;
    while all.payload_bytes < target {
        // Each session its own seed: distinct entryIds and text, as separate agent runs are.
        let records = generate(args.session_records, args.seed + 1_000 + sessions as u64);
        let workload = Workload::of(&records);
        all.records += workload.records;
        all.payload_bytes += workload.payload_bytes;
        all.large += workload.large;
        all.ordinary_payload_bytes += workload.ordinary_payload_bytes;
        let started = Instant::now();
        for chunk in records.chunks(1_000) {
            source.append(&format!("s{sessions:05}"), None, chunk.to_vec())?;
        }
        // The same records into the same kind of store, locally: what the store alone takes.
        source_time += started.elapsed();
        sessions += 1;
    }
    eprintln!(
        "(2) source store: {sessions} sessions, {} records in {:.2} s",
        all.records,
        source_time.as_secs_f64()
    );

    let fleet = connect(urls, "FOLLOW", 3)?;
    let started = Instant::now();
    let published = publish(&fleet, &source, &PublishOptions::default())?;
    let publish_time = started.elapsed();
    ensure!(
        published.records == all.records as u64,
        "published {} of {} records",
        published.records,
        all.records
    );
    eprintln!(
        "(2) published {} records, {:.1} MB in {:.1} s",
        published.records,
        published.bytes as f64 / 1e6,
        publish_time.as_secs_f64()
    );
    fleet.close();
    source.close().map_err(|err| anyhow!("closing the source store: {err}"))?;

    let mut runs = Vec::new();
    // Plain; the index built after the follow; the index open while following, as
    // `annal fleet follow` does (then waited for).
    for (indexed, during) in [(false, false), (true, false), (true, true)] {
        let label = match (indexed, during) {
            (false, _) => "into a plain store",
            (true, false) => "into a store, then its search index built",
            (true, true) => "into a store with its search index open, indexing as records arrive",
        };
        let scratch = scratch_dir(Some(dir), "fleet-follower")?;
        let store = Arc::new(open_store(&scratch.path().join("annal.redb"))?);
        // A new host: its own connection, nothing followed yet.
        let fleet = connect(urls, "FOLLOW", 3)?;
        let open_early =
            if during { Some(SearchIndex::open(Arc::clone(&store), IndexOptions::default())?) } else { None };
        let started = Instant::now();
        let report = follow(&fleet, &store, &FollowOptions::default(), &|| true)?;
        let follow_time = started.elapsed();
        ensure!(
            report.records == all.records as u64,
            "followed {} of {} records",
            report.records,
            all.records
        );
        ensure!(report.stopped.is_empty(), "sessions stopped: {:?}", report.stopped);
        let index_time = if indexed {
            // What a host running `annal` with search does: the indexer catches up with the
            // journal from its last commit (none yet, or what it indexed while records arrived),
            // and the store is searchable once it has.
            let started = Instant::now();
            let index = match open_early {
                Some(index) => index,
                None => SearchIndex::open(Arc::clone(&store), IndexOptions::default())?,
            };
            index.wait_searchable(Duration::from_secs(3_600))?;
            let elapsed = started.elapsed();
            index.close()?;
            elapsed
        } else {
            Duration::ZERO
        };
        fleet.close();
        eprintln!(
            "(2) {label}: {} records, {:.1} MB, follow {:.2} s, index {:.2} s",
            report.records,
            report.bytes as f64 / 1e6,
            follow_time.as_secs_f64(),
            index_time.as_secs_f64()
        );
        runs.push(Catchup {
            label: label.to_owned(),
            records: report.records,
            bytes: report.bytes,
            follow: follow_time,
            index: index_time,
        });
        // Dropped, not closed: closing needs the only handle, and the index may keep one.
        drop(store);
    }
    Ok(FollowResult {
        sessions,
        workload: all,
        publish_records: published.records,
        publish_bytes: published.bytes,
        publish_time,
        source_time,
        runs,
    })
}

/// The server that leads `stream`'s replicas now, asked of the cluster directly: the fleet's
/// API does not say, and (3) must kill that one.
fn stream_leader(runtime: &tokio::runtime::Runtime, urls: &str, stream: &str) -> anyhow::Result<String> {
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
struct Writer {
    /// The entryIds acknowledged, in order.
    acknowledged: Vec<String>,
    /// When each acknowledgement returned.
    at: Vec<Instant>,
    errors: usize,
    first_error: Option<String>,
    writing_to: String,
}

/// (3)'s writer: appends one record at a time with the position checked until `stop`; after
/// an error it retries the same record at the same position, as a caller that must not lose
/// a turn would (the entryId makes a retry of a stored record a no-op).
fn write_until(
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
fn failover_scenario(dir: &Path, cluster: &mut Cluster, args: &Args) -> anyhow::Result<FailoverResult> {
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

/// The label of the rows without annal, under the shared append they compare with.
const RAW_LABEL: &str = "↳ same cluster, the record's JSON published with async-nats alone";

fn met(ok: bool) -> &'static str {
    if ok {
        "**met**"
    } else {
        "**missed**"
    }
}

fn row(out: &mut String, cells: &[&str]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

fn append_table(out: &mut String, rows: &[Latencies], args: &Args, payload_mean: usize) {
    let _ = writeln!(
        out,
        "(1) Checked appends, one writer, one ordinary record (mean {payload_mean} B of payload text) per \
         call, {} calls timed after {} untimed.",
        thousands(args.appends as u64),
        args.warmup
    );
    let _ = writeln!(out);
    row(out, &["configuration", "p50", "p99", "max", "appends/s", "target", "result"]);
    row(out, &["---", "--:", "--:", "--:", "--:", "---", "---"]);
    for latencies in rows {
        let (target, result) = if latencies.label.starts_with("3 nodes, 3 replicas, server defaults") {
            let ok =
                latencies.p50() <= Duration::from_millis(2) && latencies.p99() <= Duration::from_millis(20);
            ("p50 ≤ 2 ms, p99 ≤ 20 ms", met(ok))
        } else {
            ("–", "–")
        };
        row(
            out,
            &[
                &latencies.label,
                &ms(latencies.p50()),
                &ms(latencies.p99()),
                &ms(latencies.max()),
                &thousands(latencies.rate().round() as u64),
                target,
                result,
            ],
        );
    }
    let _ = writeln!(out);
    for (i, latencies) in rows.iter().enumerate() {
        if latencies.conflicts > 0 {
            let above = i.checked_sub(1).map_or("", |j| rows[j].label.as_str());
            let _ = writeln!(
                out,
                "The async-nats row under \"{above}\": {} publishes refused as \"wrong last sequence\" \
                 with no other writer (their time is in the figures).",
                latencies.conflicts
            );
            let _ = writeln!(out);
        }
    }
}

fn follow_table(out: &mut String, result: &FollowResult) {
    let w = &result.workload;
    let _ = writeln!(
        out,
        "(2) A new follower catching up: {} sessions, {} records, {} B of payload text ({} tool outputs \
         of 45–55 KB), published to a 3-replica stream in {} ({:.1} MB/s of record JSON, {} records/s).",
        thousands(result.sessions as u64),
        thousands(w.records as u64),
        thousands(w.payload_bytes as u64),
        thousands(w.large as u64),
        seconds(result.publish_time),
        result.publish_bytes as f64 / 1e6 / result.publish_time.as_secs_f64().max(1e-9),
        thousands(
            (result.publish_records as f64 / result.publish_time.as_secs_f64().max(1e-9)).round() as u64
        ),
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "For scale: the same records went into the publisher's store with `Store::append`, 1,000 per \
         call, in {} ({:.1} MB/s of the follower's record JSON).",
        seconds(result.source_time),
        result
            .runs
            .first()
            .map_or(0.0, |run| run.bytes as f64 / 1e6 / result.source_time.as_secs_f64().max(1e-9)),
    );
    let _ = writeln!(out);
    row(
        out,
        &["follower", "records", "MB of record JSON", "follow", "index", "total", "MB/s", "target", "result"],
    );
    row(out, &["---", "--:", "--:", "--:", "--:", "--:", "--:", "---", "---"]);
    for run in &result.runs {
        let indexed = run.label.contains("search index");
        let target = if indexed { "≥ 50 MB/s into a search-ready store" } else { "–" };
        let result = if indexed { met(run.mb_per_s() >= 50.0) } else { "–" };
        row(
            out,
            &[
                &run.label,
                &thousands(run.records),
                &format!("{:.1}", run.bytes as f64 / 1e6),
                &seconds(run.follow),
                &if indexed { seconds(run.index) } else { "–".to_owned() },
                &seconds(run.total()),
                &format!("{:.1}", run.mb_per_s()),
                target,
                result,
            ],
        );
    }
    let _ = writeln!(out);
}

fn failover_table(out: &mut String, r: &FailoverResult, args: &Args) {
    let _ = writeln!(
        out,
        "(3) One writer appending to a shared session on 3 nodes, 3 replicas; the stream leader \
         ({}) SIGKILLed after {} s, appends going on for {} s more; {} took over.",
        r.leader_before, args.before_kill, args.after_kill, r.leader_after
    );
    let _ = writeln!(out);
    row(out, &["measure", "value", "target", "result"]);
    row(out, &["---", "--:", "---", "---"]);
    row(out, &["appends acknowledged", &thousands(r.acknowledged as u64), "–", "–"]);
    row(out, &["errors returned (each retried)", &thousands(r.errors as u64), "–", "–"]);
    row(
        out,
        &[
            "longest gap between acknowledged appends",
            &ms(r.longest_gap),
            "≤ 5 s",
            met(r.longest_gap <= Duration::from_secs(5)),
        ],
    );
    let began = if r.gap_after_kill_ms < 0.0 {
        format!("{:.0} ms before the kill", -r.gap_after_kill_ms)
    } else {
        format!("{:.0} ms after the kill", r.gap_after_kill_ms)
    };
    row(out, &["the longest gap began", &began, "–", "–"]);
    let kill = r.kill_to_next.map_or_else(|| "none".to_owned(), ms);
    row(out, &["kill → next acknowledged append", &kill, "–", "–"]);
    row(out, &["records a new follower read", &thousands(r.followed as u64), "–", "–"]);
    row(out, &["acknowledged but missing", &thousands(r.lost as u64), "0", met(r.lost == 0)]);
    row(out, &["duplicated entryIds", &thousands(r.duplicates as u64), "0", met(r.duplicates == 0)]);
    row(
        out,
        &["acknowledged out of order", if r.out_of_order { "yes" } else { "no" }, "no", met(!r.out_of_order)],
    );
    row(out, &["stored but not acknowledged", &thousands(r.unacknowledged_present as u64), "–", "–"]);
    let fork = r.writing_to != "failover";
    row(out, &["writes went to an offline fork", if fork { "yes" } else { "no" }, "no", met(!fork)]);
    let _ = writeln!(out);
    if let Some(error) = &r.first_error {
        let _ = writeln!(out, "First error: `{error}`");
        let _ = writeln!(out);
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(args.appends > 0 && args.follow_mb > 0 && args.session_records > 0, "counts must be positive");
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir(),
    };
    ensure!(dir.is_dir(), "{} is not a folder", dir.display());
    let only: Vec<&str> = args.only.split(',').map(str::trim).collect();
    for name in &only {
        ensure!(
            matches!(*name, "append" | "follow" | "failover" | "stalls"),
            "--only: unknown measurement {name:?}"
        );
    }
    let wanted = |name: &str| only.contains(&name);

    let mut out = String::new();
    let _ = writeln!(
        out,
        "Run on {}, {} cores; `nats-server` {} on loopback, stream files and stores under the same folder.",
        today_utc(),
        core_count(),
        server_version()
    );
    let _ = writeln!(out);

    let all = ordinary(args.warmup + args.appends, args.seed)?;
    let (warmup, timed) = all.split_at(args.warmup);
    let payload_mean = Workload::of(timed).payload_bytes / timed.len().max(1);

    let mut cluster = Cluster::start(3, Sync::Default, Some(&dir));
    let urls = cluster.urls();
    let mut latencies = Vec::new();
    if wanted("append") {
        latencies.push(local_appends(&dir, warmup, timed, false)?);
        latencies.push(local_appends(&dir, warmup, timed, true)?);
        let label = "3 nodes, 3 replicas, server defaults";
        latencies.push(shared_appends(&dir, &urls, "APPEND", 3, label, warmup, timed)?);
        latencies.push(raw_publishes(&urls, "RAW", 3, RAW_LABEL, warmup, timed)?);
    }
    let follow_result = if wanted("follow") { Some(follow_scenario(&dir, &urls, &args)?) } else { None };
    let failover =
        if wanted("failover") { Some(failover_scenario(&dir, &mut cluster, &args)?) } else { None };
    let stall_result =
        if wanted("stalls") { Some(stalls::run(&dir, &mut cluster, args.faults, args.seed)?) } else { None };
    drop(cluster);

    if wanted("append") {
        let single = Cluster::start(1, Sync::Default, Some(&dir));
        let label = "1 node, 1 replica, server defaults";
        latencies.push(shared_appends(&dir, &single.urls(), "APPEND", 1, label, warmup, timed)?);
        latencies.push(raw_publishes(&single.urls(), "RAW", 1, RAW_LABEL, warmup, timed)?);
        drop(single);
        let always = Cluster::start(3, Sync::Always, Some(&dir));
        let label = "3 nodes, 3 replicas, every write fsync'd (`sync_interval: always`)";
        latencies.push(shared_appends(&dir, &always.urls(), "APPEND", 3, label, warmup, timed)?);
        latencies.push(raw_publishes(&always.urls(), "RAW", 3, RAW_LABEL, warmup, timed)?);
        drop(always);
        append_table(&mut out, &latencies, &args, payload_mean);
    }
    if let Some(result) = &follow_result {
        follow_table(&mut out, result);
    }
    if let Some(result) = &failover {
        failover_table(&mut out, result, &args);
    }
    if let Some(result) = &stall_result {
        stalls::table(&mut out, result, args.faults);
    }
    print!("{out}");
    Ok(())
}

/// The servers' version, for the report's first line.
fn server_version() -> String {
    let output = std::process::Command::new(annal_support::nats::server_binary()).arg("--version").output();
    match output {
        Ok(output) => {
            String::from_utf8_lossy(&output.stdout).trim().trim_start_matches("nats-server: ").to_owned()
        }
        Err(_) => "(version unknown)".to_owned(),
    }
}
