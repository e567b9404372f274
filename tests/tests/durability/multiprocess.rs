//! Multi-process: several real processes with the same store file open at once (the engine
//! opens redb in its multi-writer mode). Writers append to sessions of their own and race for
//! a shared one with `expected_next`; a reader checks every snapshot it takes while they write.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use annal_engine::{Store, StoreOptions};
use annal_support::process::record_for;

const WRITER: &str = env!("CARGO_BIN_EXE_annal-test-writer");
const WRITERS: usize = 3;
const PER_WRITER: u64 = 30;

fn spawn(args: &[&str]) -> Child {
    Command::new(WRITER).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn finish(child: Child, what: &str) -> String {
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(status.success(), "{what} failed ({status}): {}\n{stdout}", String::from_utf8_lossy(&stderr));
    stdout
}

/// `(session, entry) -> sourceOrder` of every acknowledged append a writer printed.
fn acks(stdout: &str) -> Vec<(String, String, u64)> {
    stdout
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 4, "bad line {line:?}");
            assert_eq!(parts[0], "ack");
            (parts[1].to_owned(), parts[2].to_owned(), parts[3].parse().unwrap())
        })
        .collect()
}

/// Runs writers and a reader at once on `db`, then checks the store holds exactly what was
/// acknowledged.
fn run(db: &Path, racing: bool) {
    let dir = db.parent().unwrap();
    let stop = dir.join("stop");
    let ready = dir.join("ready");
    let db_arg = db.to_str().unwrap();
    let reader = spawn(&["read", db_arg, stop.to_str().unwrap(), ready.to_str().unwrap()]);
    if racing {
        // Everyone starts at once, the reader included.
    } else {
        // The writers start once the reader is reading, so it sees the store grow.
        let started = std::time::Instant::now();
        while !ready.exists() {
            assert!(started.elapsed().as_secs() < 60, "the reader never started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    let writers: Vec<Child> = (0..WRITERS)
        .map(|w| {
            let sessions = format!("own{w},shared");
            spawn(&["append", db_arg, &format!("p{w}"), &PER_WRITER.to_string(), &sessions, "--cas"])
        })
        .collect();
    let mut all = Vec::new();
    for (w, child) in writers.into_iter().enumerate() {
        let out = finish(child, &format!("writer {w}"));
        let mine = acks(&out);
        assert_eq!(mine.len() as u64, PER_WRITER, "writer {w} acknowledged {} appends", mine.len());
        all.extend(mine);
    }
    std::fs::write(&stop, b"").unwrap();
    let summary = finish(reader, "reader");
    let numbers: Vec<u64> = summary.split_whitespace().filter_map(|n| n.parse().ok()).collect();
    let (iterations, states) = (numbers[0], numbers[2]);
    assert!(iterations >= 2, "the reader only made {iterations} passes: {summary}");
    if !racing {
        assert!(states >= 2, "the reader never saw the store change while it was written: {summary}");
    }
    eprintln!("reader: {summary}");

    let store = Store::open(db, StoreOptions::default()).unwrap();
    let snapshot = store.snapshot().unwrap();
    let mut per_session: HashMap<String, BTreeMap<u64, String>> = HashMap::new();
    for (session, entry, order) in &all {
        let previous = per_session.entry(session.clone()).or_default().insert(*order, entry.clone());
        assert!(previous.is_none(), "{session}: two appends acknowledged at sourceOrder {order}");
    }
    for (session, acked) in &per_session {
        let info = snapshot.session(session).unwrap().unwrap();
        assert_eq!(info.len, acked.len() as u64, "{session}: length differs from the acknowledged appends");
        // Gapless: the acknowledged orders are exactly 0..len.
        assert!(acked.keys().copied().eq(0..info.len), "{session}: acknowledged orders have gaps");
        for (order, entry) in acked {
            let guard = snapshot.record(session, *order).unwrap().unwrap();
            let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
            assert_eq!(&record.entry_id, entry, "{session} sourceOrder {order}");
            assert_eq!(record, record_for(entry));
        }
    }
    assert_eq!(per_session.len(), WRITERS + 1);
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.records, WRITERS as u64 * PER_WRITER);
}

/// (5) The store exists before the processes start.
#[test]
fn writers_and_a_reader_in_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.redb");
    Store::open(&db, StoreOptions::default()).unwrap().close().unwrap();
    run(&db, false);
}

/// (5) Nobody created the store: the processes race to create it as they start.
#[test]
fn processes_racing_to_create_the_store() {
    let dir = tempfile::tempdir().unwrap();
    run(&dir.path().join("fresh.redb"), true);
}

/// (5) A writer process killed (SIGKILL on Unix) in the middle of its appends, while another
/// writer and a reader carry on: what it had acknowledged is there, nothing of it is torn, the
/// others finish, and a new process can append to its session afterwards.
#[test]
fn a_writer_killed_mid_append() {
    use std::io::{BufRead, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("killed.redb");
    Store::open(&db, StoreOptions::default()).unwrap().close().unwrap();
    let db_arg = db.to_str().unwrap();
    let stop = dir.path().join("stop");
    let ready = dir.path().join("ready");
    let reader = spawn(&["read", db_arg, stop.to_str().unwrap(), ready.to_str().unwrap()]);
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(started.elapsed().as_secs() < 60, "the reader never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let survivor = spawn(&["append", db_arg, "s", &PER_WRITER.to_string(), "survivor,doomed", "--cas"]);
    let mut victim = spawn(&["append", db_arg, "k", "1000000", "doomed", "--cas"]);
    let mut lines = BufReader::new(victim.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    while acked.len() < 20 {
        let line = lines.next().expect("the victim stopped before it was killed").unwrap();
        acked.extend(acks(&line));
    }
    victim.kill().unwrap();
    let status = victim.wait().unwrap();
    assert!(!status.success(), "the victim finished before it was killed");
    // Lines it printed before dying are acknowledgements too.
    acked.extend(lines.map_while(Result::ok).flat_map(|line| acks(&line)));
    let survived = acks(&finish(survivor, "the surviving writer"));
    assert_eq!(survived.len() as u64, PER_WRITER);
    // A new process appends to the dead writer's session.
    let after =
        acks(&finish(spawn(&["append", db_arg, "n", "5", "doomed", "--cas"]), "a writer after the kill"));
    std::fs::write(&stop, b"").unwrap();
    finish(reader, "reader");

    let store = Store::open(&db, StoreOptions::default()).unwrap();
    let snapshot = store.snapshot().unwrap();
    for (session, entry, order) in acked.iter().chain(&survived).chain(&after) {
        let guard =
            snapshot.record(session, *order).unwrap().unwrap_or_else(|| panic!("{session} {order} is gone"));
        let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
        assert_eq!(&record.entry_id, entry, "{session} sourceOrder {order}");
        assert_eq!(record, record_for(entry));
    }
    // The killed writer's records form an unbroken run in its own order: at most the append
    // it was in the middle of is there unacknowledged, never a part of one.
    let mine: Vec<String> = snapshot
        .records("doomed", 0..u64::MAX)
        .unwrap()
        .map(|g| snapshot.to_record(&g.unwrap().view().unwrap()).unwrap().entry_id)
        .filter(|id| id.starts_with("k-"))
        .collect();
    let expected: Vec<String> = (0..mine.len()).map(|i| format!("k-{i}")).collect();
    assert_eq!(mine, expected);
    assert!(
        mine.len() >= acked.len() && mine.len() <= acked.len() + 1,
        "{} stored, {} acknowledged",
        mine.len(),
        acked.len()
    );
    let report = store.verify(None).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}
