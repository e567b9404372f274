//! (2) of the fleet benchmark: a new follower's catch-up, into a plain store and into a
//! search-ready one.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal_bench::records::{generate, Workload};
use annal_bench::scratch_dir;
use annal_fleet::{follow, publish, FollowOptions, PublishOptions};
use annal_query::{IndexOptions, SearchIndex};
use anyhow::{anyhow, ensure};

use crate::{connect, open_store, Args};

/// One follower run of (2).
#[derive(Debug)]
pub(crate) struct Catchup {
    pub(crate) label: String,
    pub(crate) records: u64,
    pub(crate) bytes: u64,
    pub(crate) follow: Duration,
    pub(crate) index: Duration,
}

impl Catchup {
    pub(crate) fn total(&self) -> Duration {
        self.follow + self.index
    }

    pub(crate) fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.total().as_secs_f64().max(1e-9)
    }
}

/// What (2) measured.
#[derive(Debug)]
pub(crate) struct FollowResult {
    pub(crate) sessions: usize,
    pub(crate) workload: Workload,
    pub(crate) publish_records: u64,
    pub(crate) publish_bytes: u64,
    pub(crate) publish_time: Duration,
    /// Appending the same records to the source store, 1,000 per call.
    pub(crate) source_time: Duration,
    pub(crate) runs: Vec<Catchup>,
}

/// (2): fills a store with sessions of the workload until `payload_bytes` of payload text,
/// publishes it, then follows the stream into empty stores: plain, and made search-ready.
pub(crate) fn follow_scenario(dir: &Path, urls: &str, args: &Args) -> anyhow::Result<FollowResult> {
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
