//! The fleet under faults, in the style of Jepsen: a real 3-node JetStream cluster on loopback;
//! writers on two shared sessions (three library writers, with and without an expected
//! position, and a writer of `annal append --fleet` processes, some killed mid-append), a
//! publisher that reads `status`, and a follower, each on a host with its own proxies; a
//! nemesis injecting faults at moments drawn from a printed seed; and a checker over the whole
//! history once the faults are healed. Not part of `cargo test` (test = false): CI runs it
//! on its own, and so can anyone:
//!
//! ```text
//! cargo test -p annal-cli --test fleet_chaos                    # 60 s of faults, a new seed
//! cargo test -p annal-cli --test fleet_chaos -- --seed 1234     # the run of that seed again
//! cargo test -p annal-cli --test fleet_chaos -- --soak 30       # 30 minutes of faults
//! ```
//!
//! The same seed draws the same faults in the same order; what the clients meet in between
//! depends on timing, so a rerun repeats the schedule, not every interleaving.

mod checker;
mod history;
mod nemesis;
mod stream;
mod workload;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal::fleet::{Fleet, FleetOptions, FollowOptions, PublishOptions};
use annal::Annal;
use annal_support::nats::{Cluster, Sync};
use annal_support::rng::Rng;

use crate::history::History;
use crate::nemesis::HostLinks;
use crate::workload::{Host, SHARED};

/// The run's settings from its arguments: `--seed N`, `--soak MINUTES` (or `--seconds N`).
struct Settings {
    seed: u64,
    faults_for: Duration,
}

fn settings() -> Settings {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|arg| arg == flag).and_then(|at| args.get(at + 1));
    let seed =
        value("--seed").map(|seed| seed.parse().expect("--seed takes a number")).unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            now.as_nanos() as u64 % 1_000_000_007
        });
    let minutes: Option<u64> = value("--soak").map(|m| m.parse().expect("--soak takes minutes"));
    let seconds: Option<u64> = value("--seconds").map(|s| s.parse().expect("--seconds takes seconds"));
    let faults_for = match (minutes, seconds) {
        (Some(minutes), _) => Duration::from_secs(minutes * 60),
        (None, Some(seconds)) => Duration::from_secs(seconds),
        (None, None) => Duration::from_secs(60),
    };
    Settings { seed, faults_for }
}

fn main() -> std::process::ExitCode {
    let Settings { seed, faults_for } = settings();
    println!("fleet chaos: seed {seed}, {} s of faults", faults_for.as_secs());
    println!("rerun: cargo test -p annal-cli --test fleet_chaos -- --seed {seed}");
    // Every route between two servers goes through a proxy, so the nemesis can cut one off.
    let mut cluster = Cluster::start_partitionable(3, Sync::Default);
    let dir = tempfile::tempdir().expect("a folder for the hosts");
    let names = ["lib-a", "lib-b", "lib-c", "cli-d", "pub-e", "fol-f"];
    let links: Vec<HostLinks> = names.iter().map(|_| HostLinks::start(&cluster)).collect();
    let hosts: Vec<Host> = names
        .iter()
        .zip(&links)
        .map(|(name, link)| Host {
            name: (*name).into(),
            db: dir.path().join(format!("{name}.redb")),
            urls: link.urls(),
        })
        .collect();
    // The stream is made once, with its 3 replicas, before any client races to.
    drop(connect(&cluster.urls()));

    let history = Arc::new(History::default());
    let stop = Arc::new(AtomicBool::new(false));
    let spawn = |work: Box<dyn FnOnce() + Send>| std::thread::spawn(work);
    let mut workers = Vec::new();
    for (index, (host, expect)) in
        [(&hosts[0], true), (&hosts[1], false), (&hosts[2], true)].into_iter().enumerate()
    {
        let (host, history, stop) = (host.clone(), Arc::clone(&history), Arc::clone(&stop));
        let session = SHARED[index % 2];
        workers.push(spawn(Box::new(move || workload::library_writer(host, session, expect, history, stop))));
    }
    let (host, history_d, stop_d) = (hosts[3].clone(), Arc::clone(&history), Arc::clone(&stop));
    workers.push(spawn(Box::new(move || workload::process_writer(host, SHARED[0], seed, history_d, stop_d))));
    let (host, history_e, stop_e) = (hosts[4].clone(), Arc::clone(&history), Arc::clone(&stop));
    workers.push(spawn(Box::new(move || workload::publisher(host, history_e, stop_e))));
    let (host, history_f, stop_f) = (hosts[5].clone(), Arc::clone(&history), Arc::clone(&stop));
    workers.push(spawn(Box::new(move || workload::follower(host, history_f, stop_f))));

    let started = Instant::now();
    nemesis::run(&mut cluster, &links, &mut Rng::new(seed), &history, started + faults_for);
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.join().expect("a client thread");
    }
    nemesis::heal(&mut cluster, &links);

    // Healed: every host's store (a writer told it forked started a new one) publishes what it
    // holds, its forks too; then each, and a new store, follows.
    let fleet = connect(&cluster.urls());
    let truth = dir.path().join("fleet.redb");
    let mut stores: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
        .expect("the hosts' folder")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "redb"))
        .collect();
    stores.sort();
    for path in &stores {
        settle("publish", || Annal::open(path)?.publish(&fleet, &PublishOptions::default()).map(drop));
    }
    // Each host's first store follows, and a new one: enough to see that copies converge. The
    // stores of later generations are checked through what their writers were told.
    let followers: Vec<&std::path::PathBuf> = hosts.iter().map(|host| &host.db).chain([&truth]).collect();
    for path in followers.iter().copied() {
        settle("follow", || {
            let report = Annal::open(path)?.follow(&fleet, &FollowOptions::default(), &|| true)?;
            for line in report.stopped {
                history.failure(format!("final follow: {line}"));
            }
            Ok(())
        });
    }
    fleet.close();
    // Every session's chain on the stream itself: the follows above stop at a break, and this
    // names it (sequences, entryIds, message ids) however it came about.
    for line in stream::breaks(&cluster.urls()) {
        history.failure(line);
    }
    let copies: Vec<(String, &std::path::Path)> = followers[..hosts.len()]
        .iter()
        .map(|path| (path.file_name().unwrap_or_default().to_string_lossy().into_owned(), path.as_path()))
        .collect();
    let verdict = checker::check(&history, &truth, &copies);
    let faults: Vec<String> = history.faults().iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    println!("faults: {}", faults.join(", "));
    println!(
        "seed {seed}: {} operations ({} on the shared sessions), {} acknowledged, {} lost, {} duplicated, {} forks told, {} unknown (retried), {} conflicts",
        verdict.operations,
        verdict.shared_appends, verdict.acknowledged, verdict.lost, verdict.duplicated, verdict.forked, verdict.unknown, verdict.conflicts
    );
    // Fairness: how the shared sessions' positions were shared out among the writers.
    let shares: Vec<String> = verdict
        .shares
        .iter()
        .map(|(writer, (tried, won, lost))| format!("{writer} {won} of {tried} ({lost} conflicts)"))
        .collect();
    println!("acknowledged per writer: {}", shares.join(", "));
    if !verdict.violations.is_empty() {
        for line in &verdict.violations {
            eprintln!("violation: {line}");
        }
        eprintln!(
            "fleet chaos: {} violations; rerun: cargo test -p annal-cli --test fleet_chaos -- --seed {seed}",
            verdict.violations.len()
        );
        // Returned, not exited: the cluster's servers are stopped as it is dropped.
        return std::process::ExitCode::FAILURE;
    }
    println!("fleet chaos: no violation in {} s", started.elapsed().as_secs());
    std::process::ExitCode::SUCCESS
}

fn connect(urls: &str) -> Fleet {
    let options = FleetOptions::from_urls(urls).expect("urls");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match Fleet::connect(options.clone()) {
            Ok(fleet) => return fleet,
            Err(err) => assert!(Instant::now() < deadline, "the healed cluster does not answer: {err}"),
        }
    }
}

/// Runs `step` until it succeeds, for at most two minutes after the faults were healed.
fn settle(what: &str, mut step: impl FnMut() -> Result<(), annal::Error>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match step() {
            Ok(()) => return,
            Err(err) => assert!(Instant::now() < deadline, "{what} after healing: {err}"),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}
