//! Kill drills of the shared log: writers (racing for a shared session with `expected_next`,
//! their log small so they fold it into the store file every few dozen appends) and a reader,
//! each a real process, killed with SIGKILL at random moments, 20 times over: mid-append,
//! mid-fold, holding the log's lock or not. Every acknowledged append is then stored where it
//! was acknowledged, nothing torn, the store verifies, and a reader that was not killed saw only
//! whole snapshots throughout.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use annal_engine::{Sharing, Store, StoreOptions};
use annal_support::process::record_for;
use annal_support::rng::Rng;

const WRITER: &str = env!("CARGO_BIN_EXE_annal-test-writer");
const DRILLS: u64 = 20;
const WRITERS: usize = 3;

/// `(session, entry, sourceOrder)` acknowledged by one writer, gathered as it prints them.
type Acks = Arc<Mutex<Vec<(String, String, u64)>>>;

fn spawn_writer(db: &str, w: usize, acks: &Acks) -> (Child, std::thread::JoinHandle<()>) {
    let mut child = Command::new(WRITER)
        .args(["append", db, &format!("p{w}"), "1000000", &format!("own{w},shared"), "--cas", "--small-log"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let acks = Arc::clone(acks);
    let gather = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let parts: Vec<&str> = line.split(' ').collect();
            // A line cut by the kill was never a whole acknowledgement.
            if let ["ack", session, entry, order] = parts[..] {
                if let Ok(order) = order.parse() {
                    acks.lock().unwrap().push((session.to_owned(), entry.to_owned(), order));
                }
            }
        }
    });
    (child, gather)
}

fn check(db: &Path, sharing: Sharing, acks: &[(String, String, u64)], context: &str) {
    let store = Store::open(db, StoreOptions { sharing, ..StoreOptions::default() })
        .unwrap_or_else(|e| panic!("{context}: reopening {sharing:?}: {e}"));
    let snapshot = store.snapshot().unwrap();
    let mut at: BTreeMap<(String, u64), String> = BTreeMap::new();
    for (session, entry, order) in acks {
        if let Some(other) = at.insert((session.clone(), *order), entry.clone()) {
            panic!("{context}: {session} sourceOrder {order} acknowledged to {other} and {entry}");
        }
        let guard = snapshot
            .record(session, *order)
            .unwrap_or_else(|e| panic!("{context} ({sharing:?}): reading {entry} at {session} {order}: {e}"))
            .unwrap_or_else(|| panic!("{context}: acknowledged {entry} at {session} {order} is gone"));
        let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
        assert_eq!(record, record_for(entry), "{context}: {session} sourceOrder {order}");
    }
    // Each writer's own session: its acknowledged run, and at most the one append it was in.
    for w in 0..WRITERS {
        let session = format!("own{w}");
        let acked = acks.iter().filter(|(s, _, _)| *s == session).count() as u64;
        let len = snapshot.session(&session).unwrap().map_or(0, |s| s.len);
        assert!(len == acked || len == acked + 1, "{context}: {session} holds {len}, {acked} acknowledged");
    }
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{context}: {:?}", report.problems);
}

fn drill(round: u64, rng: &mut Rng) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("drill.redb");
    let db_arg = db.to_str().unwrap().to_owned();
    let (stop, ready) = (dir.path().join("stop"), dir.path().join("ready"));
    let mut reader = Command::new(WRITER)
        .args(["read", &db_arg, stop.to_str().unwrap(), ready.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let acks: Acks = Arc::default();
    let mut writers: Vec<Option<(Child, std::thread::JoinHandle<()>)>> =
        (0..WRITERS).map(|w| Some(spawn_writer(&db_arg, w, &acks))).collect();
    let started = Instant::now();
    // Wait for some appends, then kill at random moments.
    while acks.lock().unwrap().len() < 30 + rng.below(300) as usize {
        assert!(started.elapsed() < Duration::from_secs(60), "round {round}: the writers stalled");
        std::thread::sleep(Duration::from_millis(2));
    }
    let kill_reader = rng.below(3) == 0;
    let mut order: Vec<usize> = (0..WRITERS).collect();
    order.sort_by_key(|_| rng.below(1000));
    for w in order {
        std::thread::sleep(Duration::from_millis(rng.below(60)));
        let (mut child, gather) = writers[w].take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        gather.join().unwrap();
    }
    let context = format!("round {round}");
    if kill_reader {
        reader.kill().unwrap();
        reader.wait().unwrap();
    } else {
        std::fs::write(&stop, b"").unwrap();
        let out = reader.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{context}: the reader failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let acks = acks.lock().unwrap().clone();
    assert!(!acks.is_empty(), "{context}: nothing was acknowledged");
    check(&db, Sharing::Processes, &acks, &context);
    // Opened alone, the log's frames are folded into the store file: the same store.
    check(&db, Sharing::Exclusive, &acks, &context);
}

#[test]
fn writers_and_readers_killed_at_random_moments_lose_no_acknowledged_append() {
    let mut rng = Rng::new(26);
    for round in 0..DRILLS {
        drill(round, &mut rng);
    }
}
