//! The second process of the multi-process tests: appends records to a store file, reads it
//! over and over while others write, checking everything it sees, or drives a search index of
//! it as told on stdin.
//!
//! ```text
//! annal-test-writer append DB PREFIX COUNT SESSION[,SESSION...] [--cas] [--exclusive] [--small-log]
//!     appends COUNT records, one per append, cycling over the sessions; prints
//!     "ack SESSION ENTRY SOURCE_ORDER" after each acknowledged append. With --cas, each
//!     append names the session's length as expected_next and retries on Conflict. With
//!     --exclusive, the store is opened alone, so no other process may open it. With
//!     --small-log, a shared store's log is made small and folded into the store file often
//!     (every few dozen appends), and after 20 ms without appends.
//! annal-test-writer read DB STOP_FILE READY_FILE
//!     reads every session in a loop until STOP_FILE exists (one more pass after), checking
//!     each snapshot is whole; creates READY_FILE after its first pass; prints
//!     "iterations N records M states S" (S: how many different record counts it saw) and
//!     exits 0, or exits 1.
//! annal-test-writer index
//!     reads commands on stdin, one a line, and answers each with one line starting "index: "
//!     ("index: failed: REASON" when it cannot):
//!       open DB [abort]       open the store and its index (abort: the indexer, started by
//!                             the first wait, crashes the process where it would commit)
//!       append SESSION ID W   append a user record with text W; answers "appended"
//!       wait                  wait until searchable; answers "writing true|false"
//!       search Q              answers the hit ids, space-separated
//!       close                 close the index; answers "closed"
//!     and exits 0 at the end of stdin.
//! ```

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{AppendError, Hash, Record, Role, Sharing, Snapshot, Store, StoreOptions, ZERO_HASH};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use annal_support::process::record_for;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("append") if args.len() >= 5 => {
            let count = args[3].parse().map_err(|e| format!("bad count: {e}"));
            let flag = |name: &str| args[5..].iter().any(|a| a == name);
            count.and_then(|count| {
                let small_log = flag("--small-log");
                append(&args[1], &args[2], count, &args[4], flag("--cas"), flag("--exclusive"), small_log)
            })
        }
        Some("read") if args.len() == 4 => read(&args[1], Path::new(&args[2]), Path::new(&args[3])),
        Some("index") if args.len() == 1 => index(),
        _ => Err("usage: annal-test-writer append DB PREFIX COUNT SESSIONS [--cas] | read DB STOP READY \
                      | index"
            .into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("annal-test-writer: {message}");
            ExitCode::FAILURE
        }
    }
}

fn append(
    db: &str,
    prefix: &str,
    count: u64,
    sessions: &str,
    cas: bool,
    exclusive: bool,
    small_log: bool,
) -> Result<(), String> {
    let sharing = if exclusive { Sharing::Exclusive } else { Sharing::Processes };
    let mut options = StoreOptions { sharing, ..StoreOptions::default() };
    if small_log {
        options.log_size_bytes = 64 << 10;
        options.checkpoint_idle = Some(Duration::from_millis(20));
    }
    let store = Store::open(db, options).map_err(|e| format!("open: {e}"))?;
    let sessions: Vec<&str> = sessions.split(',').collect();
    let mut out = std::io::stdout().lock();
    for index in 0..count {
        let session = sessions[index as usize % sessions.len()];
        let entry_id = format!("{prefix}-{index}");
        let record = record_for(&entry_id);
        let order = loop {
            let expected = if cas {
                let snapshot = store.snapshot().map_err(|e| format!("snapshot: {e}"))?;
                Some(snapshot.session(session).map_err(|e| format!("session: {e}"))?.map_or(0, |s| s.len))
            } else {
                None
            };
            match store.append(session, expected, vec![record.clone()]) {
                Ok(receipt) => break receipt.source_orders[0],
                Err(AppendError::Conflict { .. }) if cas => continue,
                Err(e) => return Err(format!("append {entry_id} to {session}: {e}")),
            }
        };
        writeln!(out, "ack {session} {entry_id} {order}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    store.close().map_err(|e| format!("close: {e}"))
}

/// What a reader remembers of records it saw: they must never change or move.
type Seen = HashMap<(String, u64), (String, Hash)>;

fn read(db: &str, stop: &Path, ready: &Path) -> Result<(), String> {
    let store = Store::open(db, StoreOptions::default()).map_err(|e| format!("open: {e}"))?;
    let mut seen = Seen::new();
    let mut lens: HashMap<String, u64> = HashMap::new();
    let mut iterations = 0u64;
    let mut most = 0u64;
    let mut states = std::collections::BTreeSet::new();
    loop {
        let last = stop.exists();
        let snapshot = store.snapshot().map_err(|e| format!("snapshot: {e}"))?;
        let records =
            check_snapshot(&snapshot, &mut seen, &mut lens).map_err(|e| format!("pass {iterations}: {e}"))?;
        most = most.max(records);
        states.insert(records);
        if iterations.is_multiple_of(8) || last {
            let report = store.verify(None).map_err(|e| format!("verify: {e}"))?;
            if !report.is_ok() {
                return Err(format!("pass {iterations}: verify found {:?}", report.problems));
            }
        }
        if iterations == 0 {
            std::fs::write(ready, b"").map_err(|e| format!("ready file: {e}"))?;
        }
        iterations += 1;
        if last {
            break;
        }
    }
    println!("iterations {iterations} records {most} states {}", states.len());
    store.close().map_err(|e| format!("close: {e}"))
}

/// Checks one snapshot: each session's records read, decode, match their entryId, chain to one
/// another and to the session head; lengths never shrink; records seen before are unchanged;
/// the position stream covers exactly the stored records. Returns how many records it read.
fn check_snapshot(
    snapshot: &Snapshot,
    seen: &mut Seen,
    lens: &mut HashMap<String, u64>,
) -> Result<u64, String> {
    let mut total = 0;
    for info in snapshot.sessions().map_err(|e| format!("sessions: {e}"))? {
        let name = &info.name;
        let before = lens.insert(name.clone(), info.len).unwrap_or(0);
        if info.len < before {
            return Err(format!("session {name:?} shrank from {before} to {}", info.len));
        }
        let mut prev = ZERO_HASH;
        let mut count = 0;
        for item in snapshot.records(name, 0..u64::MAX).map_err(|e| format!("{name:?}: {e}"))? {
            let guard = item.map_err(|e| format!("{name:?} record {count}: {e}"))?;
            let order = guard.source_order();
            let view = guard.view().map_err(|e| format!("{name:?} record {order}: {e}"))?;
            let record = snapshot.to_record(&view).map_err(|e| format!("{name:?} record {order}: {e}"))?;
            if order != count || record != record_for(&record.entry_id) {
                return Err(format!("{name:?} record {order} is torn or misplaced: {:?}", record.entry_id));
            }
            if view.prev_hash() != prev {
                return Err(format!("{name:?} record {order}: chain broken"));
            }
            let known =
                seen.entry((name.clone(), order)).or_insert_with(|| (record.entry_id.clone(), view.hash()));
            if *known != (record.entry_id.clone(), view.hash()) {
                return Err(format!(
                    "{name:?} record {order} changed: was {:?}, now {:?}",
                    known.0, record.entry_id
                ));
            }
            prev = view.hash();
            count += 1;
        }
        if count != info.len || prev != info.head {
            return Err(format!(
                "{name:?}: length {} and head disagree with the {count} records read",
                info.len
            ));
        }
        total += count;
    }
    let end = snapshot.position_end().map_err(|e| format!("position_end: {e}"))?;
    if end != total {
        // No forks here: every visible record is stored once, and each has one position.
        return Err(format!("{end} positions for {total} records"));
    }
    Ok(total)
}

/// The search index of one store, driven by the commands on stdin (see the top of this file).
#[derive(Default)]
struct Indexer {
    store: Option<Arc<Store>>,
    index: Option<SearchIndex>,
}

impl Indexer {
    fn answer(&mut self, words: &[&str]) -> Result<String, String> {
        match words {
            ["open", db, rest @ ..] => {
                let store =
                    Arc::new(Store::open(db, StoreOptions::default()).map_err(|e| format!("open: {e}"))?);
                // Short intervals, as the tests' own indexes use, so nobody waits on the defaults.
                let options = IndexOptions {
                    commit_interval: Duration::from_millis(20),
                    poll_interval: Duration::from_millis(20),
                    writer_memory_bytes: 16 << 20,
                    abort_before_commit: rest == ["abort"],
                    // A crashing indexer starts at the first `wait`, not at open: started at
                    // once, it could crash before `opened` is answered.
                    indexer_on_demand: rest == ["abort"],
                    ..IndexOptions::default()
                };
                let index =
                    SearchIndex::open(Arc::clone(&store), options).map_err(|e| format!("index: {e}"))?;
                self.store = Some(store);
                self.index = Some(index);
                Ok("opened".into())
            }
            ["append", session, id, word] => {
                let store = self.store.as_ref().ok_or("append before open")?;
                store
                    .append(session, None, vec![Record::text(*id, Role::User, *word)])
                    .map_err(|e| format!("append: {e}"))?;
                Ok("appended".into())
            }
            ["wait"] => {
                let index = self.index.as_ref().ok_or("wait before open")?;
                index.wait_searchable(Duration::from_secs(120)).map_err(|e| format!("wait: {e}"))?;
                Ok(format!("writing {}", index.status().writing))
            }
            ["search", query] => {
                let index = self.index.as_ref().ok_or("search before open")?;
                let hits = index.search(&SearchRequest::new(*query)).map_err(|e| format!("search: {e}"))?;
                Ok(hits.iter().map(|h| h.id()).collect::<Vec<_>>().join(" "))
            }
            ["close"] => {
                let index = self.index.take().ok_or("close before open")?;
                index.close().map_err(|e| format!("close: {e}"))?;
                Ok("closed".into())
            }
            other => Err(format!("unknown command {other:?}")),
        }
    }
}

fn index() -> Result<(), String> {
    let mut indexer = Indexer::default();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        let words: Vec<&str> = line.split(' ').collect();
        let answer = indexer.answer(&words).unwrap_or_else(|reason| format!("failed: {reason}"));
        writeln!(out, "index: {answer}").and_then(|()| out.flush()).map_err(|e| e.to_string())?;
    }
    Ok(())
}
