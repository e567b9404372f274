//! The clients of a fault run, each on a host of its own (its own store, and its own proxies
//! in front of the three servers, so the nemesis can cut one host off): writers on the shared
//! sessions through the library and through `annal append --fleet` processes (with and
//! without `--expect`, some killed mid-append), a publisher of ordinary sessions that reads
//! `status` after each pass, and a follower.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use annal::error::ErrorKind;
use annal::fleet::{Fleet, FleetError, FleetOptions, FollowOptions, PublishOptions};
use annal::Annal;
use annal_engine::{Record, Role, Store, StoreOptions};
use annal_support::rng::Rng;

use crate::history::{text, History, Outcome};

/// A host: its name, its store and the URLs of its own proxies.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    pub(crate) name: String,
    pub(crate) db: PathBuf,
    pub(crate) urls: String,
}

/// The shared sessions every writer appends to.
pub(crate) const SHARED: [&str; 2] = ["shared 日本", "shared-b"];

/// A client's timeout: shorter than the default, so that a partition makes forks.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(4);

pub(crate) fn connect(host: &Host, stop: &AtomicBool) -> Option<Fleet> {
    let mut options = FleetOptions::from_urls(&host.urls).expect("the hosts' URLs parse");
    (options.timeout, options.host) = (TIMEOUT, host.name.clone());
    while !stop.load(Ordering::SeqCst) {
        match Fleet::connect(options.clone()) {
            Ok(fleet) => return Some(fleet),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
    None
}

/// What an append's error tells the writer.
fn outcome_of(err: &annal::Error) -> Outcome {
    match err {
        annal::Error::Fleet(FleetError::Forked { fork, .. }) => Outcome::Forked(fork.clone()),
        _ => match err.kind() {
            ErrorKind::Conflict => Outcome::Conflict,
            ErrorKind::Busy | ErrorKind::Io => Outcome::Unknown(err.to_string()),
            _ => Outcome::Failed(err.to_string()),
        },
    }
}

/// A conflict given to an append without an expected position: it lost every race for its
/// whole timeout, which a fair retry never lets happen.
fn starved(outcome: Outcome, expect: bool) -> Outcome {
    match outcome {
        Outcome::Conflict if !expect => {
            Outcome::Failed("a conflict without an expected position: starved for the whole timeout".into())
        }
        other => other,
    }
}

/// A writer through the library: appends one record at a time to `session`, with the
/// position it expects (`expect`) or without, and retries an entryId until it is told where
/// the record went. Told it forked, it starts again as a new host (a store of its own), as a
/// user who leaves the fork for later would: the run goes on testing the shared session.
pub(crate) fn library_writer(
    host: Host,
    session: &str,
    expect: bool,
    history: Arc<History>,
    stop: Arc<AtomicBool>,
) {
    for generation in 1.. {
        let mut host = host.clone();
        if generation > 1 {
            host.name = format!("{}.{generation}", host.name);
            host.db = host.db.with_extension(format!("{generation}.redb"));
        }
        if !library_writer_once(&host, session, expect, &history, &stop) {
            return;
        }
    }
}

/// One generation of [`library_writer`]: true when it was told it forked.
fn library_writer_once(
    host: &Host,
    session: &str,
    expect: bool,
    history: &History,
    stop: &AtomicBool,
) -> bool {
    let Some(fleet) = connect(host, stop) else { return false };
    let annal = Annal::open(&host.db).expect("the writer's store");
    let shared = annal.shared(&fleet, session);
    let mut turn = 0;
    while !stop.load(Ordering::SeqCst) {
        let entry_id = format!("{}-{turn}", host.name);
        let record = Record::text(&entry_id, Role::Assistant, text(&host.name, turn));
        let expected = expect.then(|| {
            let snapshot = annal.snapshot().expect("snapshot");
            snapshot.session(session).expect("session").map_or(0, |info| info.len)
        });
        let outcome = match shared.append(expected, vec![record]) {
            Ok(receipt) => Outcome::Acknowledged(receipt.source_orders.last().copied().unwrap_or_default()),
            Err(err) => starved(outcome_of(&err), expect),
        };
        history.record(&host.name, session, &entry_id, outcome.clone());
        match outcome {
            Outcome::Acknowledged(_) => turn += 1,
            Outcome::Forked(_) => return true,
            Outcome::Failed(_) => return false,
            Outcome::Conflict => {
                let _ = shared.refresh();
            }
            Outcome::Unknown(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    false
}

/// A writer through `annal append --fleet` processes, alternately with and without
/// `--expect` (by attempt, so a turn that lost its expected position goes in next without
/// one); one append in five is killed with SIGKILL at a random moment. Each process connects
/// and catches up before it publishes: the slow writer that the library's writers must not
/// starve.
pub(crate) fn process_writer(
    host: Host,
    session: &str,
    seed: u64,
    history: Arc<History>,
    stop: Arc<AtomicBool>,
) {
    let mut rng = Rng::new(seed);
    let (base, mut host, mut generation) = (host.clone(), host, 1);
    let (mut turn, mut attempt) = (0_u64, 0_u64);
    let timeout = TIMEOUT.as_secs().to_string();
    while !stop.load(Ordering::SeqCst) {
        let entry_id = format!("{}-{turn}", host.name);
        let line = serde_json::json!({
            "entryId": entry_id, "role": "user",
            "blocks": [{"type": "text", "text": text(&host.name, turn)}],
        });
        let held = held_len(&host.db, session).to_string();
        let mut args = vec!["--db", host.db.to_str().expect("a UTF-8 path"), "append", session];
        args.extend(["--fleet", &host.urls, "--timeout", &timeout]);
        let expect = attempt.is_multiple_of(2);
        attempt += 1;
        if expect {
            args.extend(["--expect", &held]);
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_annal"))
            .args(&args)
            // The host's name in the forks it makes: each generation its own.
            .env("HOSTNAME", host.name.replace('.', "-"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("annal starts");
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write as _;
            let _ = writeln!(stdin, "{line}");
        }
        let killed = rng.chance(1, 5);
        if killed {
            // Mid-append: at any moment of its connection, publish or local commit.
            std::thread::sleep(Duration::from_millis(rng.between(0, 400) as u64));
            let _ = child.kill();
        }
        let output = child.wait_with_output().expect("annal ends");
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        let outcome = match output.status.code() {
            Some(0) => Outcome::Acknowledged(held_position(&host.db, session, &entry_id)),
            Some(13) => Outcome::Forked(fork_named(&stderr)),
            Some(4) => starved(Outcome::Conflict, expect),
            Some(5 | 11) => Outcome::Unknown(stderr),
            None => Outcome::Unknown("killed mid-append".into()),
            Some(code) => Outcome::Failed(format!("exit {code}: {stderr}")),
        };
        history.record(&host.name, session, &entry_id, outcome.clone());
        match outcome {
            Outcome::Acknowledged(_) => turn += 1,
            // Told it forked: a new host with a store of its own goes on, as in the library's.
            Outcome::Forked(_) => {
                generation += 1;
                host.name = format!("{}.{generation}", base.name);
                host.db = base.db.with_extension(format!("{generation}.redb"));
                turn = 0;
            }
            Outcome::Failed(_) => return,
            Outcome::Conflict | Outcome::Unknown(_) => {}
        }
    }
}

/// The session's length in the store at `db` (0 if either is missing).
fn held_len(db: &std::path::Path, session: &str) -> u64 {
    let Ok(store) = Store::open(db, StoreOptions::default()) else { return 0 };
    let snapshot = store.snapshot().expect("snapshot");
    snapshot.session(session).expect("session").map_or(0, |info| info.len)
}

/// Where the store at `db` holds `entry_id` in `session` (u64::MAX if it does not: the
/// checker then reports an acknowledged append the writer's own store lacks).
fn held_position(db: &std::path::Path, session: &str, entry_id: &str) -> u64 {
    let store = Store::open(db, StoreOptions::default()).expect("the writer's store");
    let snapshot = store.snapshot().expect("snapshot");
    match snapshot.entry(entry_id).expect("entry") {
        Some(location) if location.session == session => location.source_order,
        _ => u64::MAX,
    }
}

/// The fork a `forked` line names: the text between the last pair of quotes after "fork".
fn fork_named(stderr: &str) -> String {
    let after = stderr.rsplit_once("fork \"").map_or("", |(_, rest)| rest);
    after.split('"').next().unwrap_or_default().to_owned()
}

/// A host that appends to ordinary sessions of its own, publishes after each append, and
/// reads `status` after each pass: a failed status or publish is a failure only when it is
/// not the servers being away.
pub(crate) fn publisher(host: Host, history: Arc<History>, stop: Arc<AtomicBool>) {
    let Some(fleet) = connect(&host, &stop) else { return };
    let annal = Annal::open(&host.db).expect("the publisher's store");
    let mut turn = 0_u64;
    while !stop.load(Ordering::SeqCst) {
        let session = format!("notes {}", turn % 3);
        let len =
            annal.snapshot().expect("snapshot").session(&session).expect("session").map_or(0, |i| i.len);
        let entry_id = format!("{}-{turn}", host.name);
        let record = Record::text(&entry_id, Role::User, text(&host.name, turn));
        annal.append(&session, Some(len), vec![record]).expect("a local append");
        turn += 1;
        let published = annal.publish(&fleet, &PublishOptions::default());
        let stopped = published.as_ref().map(|report| report.stopped.clone()).unwrap_or_default();
        for line in stopped {
            history.failure(format!("publish: {line}"));
        }
        match annal.fleet_status(&fleet, None) {
            Ok(rows) => {
                for row in rows.iter().filter_map(|row| row.stopped.clone()) {
                    history.failure(format!("status: {row}"));
                }
            }
            Err(err) if matches!(err.kind(), ErrorKind::Busy | ErrorKind::Io) => {}
            Err(err) => history.failure(format!("status: {err}")),
        }
        history.record(&host.name, &session, &entry_id, Outcome::Acknowledged(len));
    }
}

/// A host that follows the fleet, pass after pass. A stopped session is a failure.
pub(crate) fn follower(host: Host, history: Arc<History>, stop: Arc<AtomicBool>) {
    let Some(fleet) = connect(&host, &stop) else { return };
    let annal = Annal::open(&host.db).expect("the follower's store");
    while !stop.load(Ordering::SeqCst) {
        match annal.follow(&fleet, &FollowOptions::default(), &|| true) {
            Ok(report) => {
                for line in report.stopped {
                    history.failure(format!("follow: {line}"));
                }
            }
            Err(err) if matches!(err.kind(), ErrorKind::Busy | ErrorKind::Io) => {}
            Err(err) => history.failure(format!("follow: {err}")),
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}
