//! Kill drill: `annal import` and a loop of `annal append`, each in its own process, are killed
//! with SIGKILL at a random moment; the store is then reopened and must hold every acknowledged
//! record, each killed batch whole or not at all, and pass `annal verify`. The import is then
//! run again to completion, as a user retrying would, and must add exactly what was missing.
//!
//! `ANNAL_KILL_DRILL_KILLS` sets the number of kills (default 20, what CI runs) and
//! `ANNAL_KILL_DRILL_SEED` the seed of the kill moments and batch shapes, printed so a failing
//! drill can be rerun with the same choices. The drill fails unless that many imports are
//! killed mid-run, half as many part-way through their commits, and half as many append
//! processes mid-run; kills that miss earn more rounds, up to three times as many in all. The
//! long local run:
//!
//! ```text
//! ANNAL_KILL_DRILL_KILLS=500 cargo test --release -p annal-cli --test kill_drill -- journal:: --nocapture
//! ```
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use crate::support::drill::{kill_at, require, KillTimer, Killed, Rng};
use crate::support::Sandbox;
use annal_engine::{Block, Store, StoreOptions};
use serde_json::{json, Value};

/// Each round imports a folder of this many transcripts, each its own session committed on its
/// own, so the import's commits are spread over its run and kills land between and inside them.
const TRANSCRIPTS: usize = 8;
/// Records per transcript.
const TRANSCRIPT_RECORDS: usize = 250;
/// Rounds that share one store before a fresh one is taken, so opening and checking stay fast
/// however long the drill runs.
const ROUNDS_PER_STORE: usize = 5;
/// The session the append loop writes to.
const LOOP: &str = "loop";

/// The text of an appended record, derived from its id so a check needs nothing else. Some are
/// past the blob threshold.
fn loop_text(id: &str, big: bool) -> String {
    if big {
        format!("{id};").repeat(20_000 / (id.len() + 1) + 1)
    } else {
        format!("payload of {id}")
    }
}

/// The session of a round's transcript.
fn import_session(round: usize, file: usize) -> String {
    format!("import-{round}-{file}")
}

/// Writes the round's transcripts (Claude Code JSONL) into `folder`; returns each one's
/// entryIds, in the order the import reads them.
fn write_transcripts(folder: &std::path::Path, round: usize) -> Vec<Vec<String>> {
    std::fs::create_dir_all(folder).unwrap();
    (0..TRANSCRIPTS)
        .map(|file| {
            let (text, ids) = transcript(&import_session(round, file));
            std::fs::write(folder.join(format!("{file:03}.jsonl")), text).unwrap();
            ids
        })
        .collect()
}

/// A transcript of one session and its entryIds.
fn transcript(session: &str) -> (String, Vec<String>) {
    let ids: Vec<String> = (0..TRANSCRIPT_RECORDS).map(|i| format!("{session}-{i}")).collect();
    let text: String = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let line = json!({"type": if i % 2 == 0 { "user" } else { "assistant" }, "uuid": id,
                "sessionId": session, "message": {"content": format!("message {i} of {session}")}});
            format!("{line}\n")
        })
        .collect();
    (text, ids)
}

/// What the append loop did in one round.
#[derive(Debug, Default)]
struct LoopLog {
    /// entryId → the sourceOrder its acknowledgement printed, and its text.
    acknowledged: HashMap<String, (u64, String)>,
    /// Batches whose process was killed (or died) before acknowledging: each whole or absent.
    unacknowledged: Vec<Vec<(String, String)>>,
    /// Append processes killed while running.
    killed: u64,
}

/// Polls `slot`'s child until it exits, so the killer can reach it in between.
fn wait_in_slot(slot: &Mutex<Option<Child>>) -> (ExitStatus, Child) {
    loop {
        {
            let mut guard = slot.lock().unwrap();
            let child = guard.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                return (status, guard.take().unwrap());
            }
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// Appends batches of 1–3 records until `stop`, logging what was acknowledged.
fn append_loop(
    sandbox: &Sandbox,
    round: usize,
    seed: u64,
    stop: &AtomicBool,
    slot: &Mutex<Option<Child>>,
) -> LoopLog {
    let mut rng = Rng::new(seed);
    let mut log = LoopLog::default();
    for batch_index in 0.. {
        if stop.load(Ordering::Acquire) {
            break;
        }
        let size = 1 + rng.below(3) as usize;
        let batch: Vec<(String, String)> = (0..size)
            .map(|j| {
                let id = format!("a{round}-{batch_index}-{j}");
                let text = loop_text(&id, rng.below(5) == 0);
                (id, text)
            })
            .collect();
        let stdin: String = batch
            .iter()
            .map(|(id, text)| {
                let line = json!({"entryId": id, "role": "user", "blocks": [{"type": "text", "text": text}]});
                format!("{line}\n")
            })
            .collect();
        {
            let mut guard = slot.lock().unwrap();
            // Checked under the lock the killer takes, so no batch starts after the kill.
            if stop.load(Ordering::Acquire) {
                break;
            }
            let mut child = sandbox
                .command(&["append", LOOP, "--json"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut input = child.stdin.take().unwrap();
            // A few KiB at most: the pipe takes it without blocking, even if the child is killed.
            let _ = input.write_all(stdin.as_bytes());
            drop(input);
            *guard = Some(child);
        }
        let (status, mut child) = wait_in_slot(slot);
        let mut stdout = String::new();
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        if status.success() {
            let receipt: Value = serde_json::from_str(&stdout).unwrap();
            let orders = receipt["sourceOrders"].as_array().unwrap();
            assert_eq!(orders.len(), batch.len());
            for ((id, text), order) in batch.into_iter().zip(orders) {
                log.acknowledged.insert(id, (order.as_u64().unwrap(), text));
            }
        } else {
            assert_eq!(status.signal(), Some(9), "append failed on its own: {status}; stdout: {stdout}");
            log.killed += 1;
            log.unacknowledged.push(batch);
        }
    }
    log
}

/// Checks the reopened store after a kill; returns how many of the import's records it holds.
fn check_store(
    sandbox: &Sandbox,
    round: usize,
    import_ids: &[Vec<String>],
    loop_log: &LoopLog,
    context: &str,
) -> usize {
    if !sandbox.db.exists() {
        // Killed before any process created the store: then nothing can have been acknowledged.
        assert!(loop_log.acknowledged.is_empty(), "{context}: acknowledged appends, but no store");
        return 0;
    }
    let run = sandbox.annal(&["verify"], "");
    assert_eq!(run.code, Some(0), "{context}: verify failed: {} {}", run.stdout, run.stderr);
    let store = Store::open(&sandbox.db, StoreOptions::default()).unwrap();
    let snapshot = store.snapshot().unwrap();
    // The import reads its files in order and commits each session's batches in order, each
    // whole: what is stored is a prefix of the records of all files, in that order.
    let mut stored_import = 0;
    let mut cut_short = false;
    for (file, ids) in import_ids.iter().enumerate() {
        let session = import_session(round, file);
        let stored: Vec<String> = match snapshot.session(&session).unwrap() {
            Some(_) => snapshot
                .records(&session, 0..u64::MAX)
                .unwrap()
                .map(|guard| guard.unwrap().view().unwrap().entry_id().to_owned())
                .collect(),
            None => Vec::new(),
        };
        assert!(ids.starts_with(&stored), "{context}: {session}'s records are not a prefix of its file");
        assert!(
            !cut_short || stored.is_empty(),
            "{context}: {session} imported after an earlier file was cut"
        );
        cut_short |= stored.len() < ids.len();
        stored_import += stored.len();
    }
    let text_of = |id: &str| -> Option<(u64, String)> {
        let location = snapshot.entry(id).unwrap()?;
        assert_eq!(location.session, LOOP, "{context}: {id} is in the wrong session");
        let guard = snapshot.record(LOOP, location.source_order).unwrap().unwrap();
        let record = snapshot.to_record(&guard.view().unwrap()).unwrap();
        match &record.blocks[..] {
            [Block::Text { text }] => Some((location.source_order, text.clone())),
            other => panic!("{context}: {id} has blocks {other:?}"),
        }
    };
    for (id, acknowledged) in &loop_log.acknowledged {
        let found = text_of(id);
        assert_eq!(found.as_ref(), Some(acknowledged), "{context}: acknowledged record {id} lost or changed");
    }
    for batch in &loop_log.unacknowledged {
        let present: Vec<bool> = batch
            .iter()
            .map(|(id, text)| {
                text_of(id).map(|(_, found)| assert_eq!(&found, text, "{context}: {id}")).is_some()
            })
            .collect();
        assert!(
            present.iter().all(|p| *p) || present.iter().all(|p| !*p),
            "{context}: a killed batch is partly stored"
        );
    }
    stored_import
}

/// What the drill did so far.
#[derive(Debug, Default)]
struct Counts {
    rounds: usize,
    /// Imports that ended before their kill moment.
    import_ended: usize,
    import_killed: usize,
    /// Imports killed with some of their sessions committed and some not.
    import_partial: usize,
    appends_killed: usize,
    acknowledged: usize,
    resumed_records: usize,
}

impl Counts {
    /// Whether the drill has the kills it needs: `kills` imports killed mid-run, half of them
    /// part-way through their commits, and half as many append processes killed mid-run.
    fn enough(&self, kills: usize) -> bool {
        self.import_killed >= kills && self.import_partial >= kills / 2 && self.appends_killed >= kills / 2
    }

    fn describe(&self) -> String {
        format!(
            "{} rounds, {} imports ended before their kill; imports killed mid-run {} ({} part-way \
             through their commits), append processes killed mid-run {}, acknowledged appends \
             checked {}, records added by resumed imports {}",
            self.rounds,
            self.import_ended,
            self.import_killed,
            self.import_partial,
            self.appends_killed,
            self.acknowledged,
            self.resumed_records
        )
    }
}

#[test]
fn kill_import_and_appends_at_random_moments() {
    let (kills, seed) = crate::support::drill::settings("kill drill");
    let mut rng = Rng::new(seed);

    // How long one import takes here decides the window the kills fall in.
    let calibration = Sandbox::new();
    let folder = calibration.dir().join("calibrate");
    write_transcripts(&folder, usize::MAX);
    let started = Instant::now();
    calibration.annal(&["import", folder.to_str().unwrap()], "").ok();
    // Kills fall within one import; the window follows the machine's pace: an import that ends
    // before its kill moment (appends beside it, other work on the machine) sets it to what that
    // import took, so kills keep landing inside imports when the machine slows or speeds up; and
    // kills that find nothing committed move the next ones past the import's start-up.
    let mut timer = KillTimer::measured(started.elapsed());
    println!("kill drill: one import takes {:?} at first", started.elapsed());

    let mut sandbox = Sandbox::new();
    let mut counts = Counts::default();
    // Kills that miss (the import had ended) earn more rounds, up to a bound.
    while !counts.enough(kills) && counts.rounds < crate::support::drill::rounds_max(kills) {
        let round = counts.rounds;
        counts.rounds += 1;
        if round > 0 && round % ROUNDS_PER_STORE == 0 {
            sandbox = Sandbox::new();
        }
        drill_round(&sandbox, round, rng.next_u64(), &mut timer, &mut counts, seed);
    }
    let (window, start) = timer.window();
    println!(
        "kill drill: {}; last window {window:?}, its commits starting about {start:?}",
        counts.describe()
    );
    // The drill must have hit running processes, or it tested nothing.
    let describe = counts.describe();
    require("imports killed mid-run", counts.import_killed, kills, &describe);
    require("imports killed part-way through their commits", counts.import_partial, kills / 2, &describe);
    require("append processes killed mid-run", counts.appends_killed, kills / 2, &describe);
}

/// One round: an import and the append loop, both killed at one moment; then the checks and
/// the retried import.
fn drill_round(
    sandbox: &Sandbox,
    round: usize,
    round_seed: u64,
    timer: &mut KillTimer,
    counts: &mut Counts,
    seed: u64,
) {
    let mut rng = Rng::new(round_seed);
    let folder = sandbox.dir().join(format!("round-{round}"));
    let ids = write_transcripts(&folder, round);
    let total: usize = ids.iter().map(Vec::len).sum();
    let path = folder.to_str().unwrap().to_owned();

    let stop = AtomicBool::new(false);
    let slot = Mutex::new(None::<Child>);
    let loop_seed = rng.next_u64();
    let kill_after = timer.next(&mut rng).expect("the calibration measured a window");
    let started = Instant::now();
    let mut import =
        sandbox.command(&["import", &path]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let (outcome, import_status, log) = thread::scope(|scope| {
        let appender = scope.spawn(|| append_loop(sandbox, round, loop_seed, &stop, &slot));
        let outcome = kill_at(&mut import, started, kill_after);
        // SIGKILL the append process running at this moment too.
        {
            let mut guard = slot.lock().unwrap();
            stop.store(true, Ordering::Release);
            if let Some(child) = guard.as_mut() {
                let _ = child.kill();
            }
        }
        (outcome, import.wait().unwrap(), appender.join().unwrap())
    });
    let context = format!("round {round} (seed {seed})");
    match outcome {
        Killed::MidRun if import_status.signal() == Some(9) => counts.import_killed += 1,
        // Ended on its own, before the kill moment or just as it came.
        Killed::Finished(took) => {
            counts.import_ended += 1;
            timer.finished(took);
        }
        Killed::MidRun => {
            counts.import_ended += 1;
            timer.finished(kill_after);
        }
    }
    if import_status.signal() != Some(9) {
        assert!(import_status.success(), "{context}: the import failed on its own: {import_status}");
    }
    counts.appends_killed += log.killed as usize;
    counts.acknowledged += log.acknowledged.len();

    let stored = check_store(sandbox, round, &ids, &log, &context);
    if import_status.success() {
        assert_eq!(stored, total, "{context}: a completed import is missing records");
    }
    // Retrying the import completes it, adding exactly what the kill cut off.
    let run = sandbox.annal(&["import", &path, "--json"], "").ok();
    let summary: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["recordsNew"].as_u64(), Some((total - stored) as u64), "{context}");
    assert_eq!(summary["recordsAlreadyPresent"].as_u64(), Some(stored as u64), "{context}");
    counts.resumed_records += total - stored;
    counts.import_partial += usize::from(stored > 0 && stored < total);
    if import_status.signal() == Some(9) {
        // Killed before its first commit, or after it: where the next kills aim.
        if stored == 0 {
            timer.before_work(kill_after);
        } else {
            timer.after_work_started(kill_after);
        }
    }
    std::fs::remove_dir_all(&folder).unwrap();
}
