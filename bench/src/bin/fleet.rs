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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use annal_bench::core_count;
use annal_bench::records::{generate, is_large, Workload};
use annal_engine::{Record, Store, StoreOptions};
use annal_fleet::{Fleet, FleetOptions};
use annal_support::calendar::today_utc;
use annal_support::nats::{Cluster, Sync};
use anyhow::{ensure, Context as _};
use clap::Parser;

#[path = "fleet/append.rs"]
mod append;
#[path = "fleet/failover.rs"]
mod failover;
#[path = "fleet/follow.rs"]
mod follow;
#[path = "fleet/stalls.rs"]
mod stalls;
#[path = "fleet/tables.rs"]
mod tables;

use append::{local_appends, raw_publishes, shared_appends};
use failover::failover_scenario;
use follow::follow_scenario;
use tables::{append_table, failover_table, follow_table, RAW_LABEL};

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
