//! Kill drill for the search index: a process that indexes — `annal history search` catching
//! the index up, or `annal reindex` rebuilding it — is killed with SIGKILL at a random moment
//! while records are appended beside it. The index is then reopened and caught up, and must hold
//! exactly the journal's blocks (none missing, none twice), find each record acknowledged in the
//! round by its unique token exactly once, and the store must pass `annal verify`.
//!
//! `ANNAL_KILL_DRILL_KILLS` sets the number of kills (default 20, what CI runs) and
//! `ANNAL_KILL_DRILL_SEED` the seed of the kill moments and record shapes, printed so a failing
//! drill can be rerun with the same choices. The drill fails unless that many indexing processes
//! are killed mid-run, a quarter as many of each kind; kills that miss (and the first run of each
//! kind, which is measured) earn more rounds, up to three times as many in all. The long local
//! run:
//!
//! ```text
//! ANNAL_KILL_DRILL_KILLS=500 cargo test --release -p annal-cli --test kill_drill -- index:: --nocapture
//! ```
#![allow(clippy::unwrap_used)]

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::support::drill::{kill_at, require, KillTimer, Killed, Rng};
use crate::support::Sandbox;
use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use annal_support::indexed::index_equals_journal;

/// Records appended before each round's indexing process starts (more are appended while it
/// runs, so it commits more than once and kills land before, between and inside commits).
const RECORDS_BEFORE: usize = 400;
/// Rounds that share one store before a fresh one is taken, so rebuilding and checking stay
/// fast however long the drill runs.
const ROUNDS_PER_STORE: usize = 5;
/// How long the reopened index may take to catch up.
const CATCH_UP: Duration = Duration::from_secs(120);

/// The unique word of a record, searched for after every kill.
fn token(round: usize, serial: u64) -> String {
    format!("u{round}x{serial}")
}

/// A record whose first block holds its token. Some also have a tool call (a second document),
/// an image (a block with no document) or text long enough to be kept in the blob table.
fn record(round: usize, serial: u64, rng: &mut Rng) -> Record {
    let token = token(round, serial);
    let mut text = format!("record {serial} of round {round} holds {token} among common words");
    if rng.below(20) == 0 {
        text.push_str(&" and filler".repeat(2_000));
    }
    let mut blocks = vec![Block::Text { text }];
    if rng.below(4) == 0 {
        blocks.push(Block::ToolCall {
            call_id: format!("call-{token}"),
            tool: "Bash".into(),
            input: format!("{{\"command\":\"grep -rn common-{serial} src/\"}}"),
            target: String::new(),
        });
    }
    if rng.below(6) == 0 {
        blocks.push(Block::Blob { media_type: "image/png".into(), data: vec![serial as u8; 1_024] });
    }
    Record { entry_id: token, role: Role::Assistant, timestamp: None, blocks, meta: Default::default() }
}

/// Appends `count` records of the round in batches of 1–50 over three sessions; returns their
/// entryIds (each acknowledged: its append returned).
fn append_records(store: &Store, round: usize, next: &mut u64, count: usize, rng: &mut Rng) -> Vec<String> {
    let mut ids = Vec::with_capacity(count);
    while ids.len() < count {
        let size = (1 + rng.below(50) as usize).min(count - ids.len());
        let batch: Vec<Record> = (0..size)
            .map(|_| {
                *next += 1;
                record(round, *next, rng)
            })
            .collect();
        let batch_ids: Vec<String> = batch.iter().map(|r| r.entry_id.clone()).collect();
        store.append(&format!("s{}", rng.below(3)), None, batch).unwrap();
        ids.extend(batch_ids);
    }
    ids
}

/// Reopens the index, lets it catch up, and checks it against the journal and the round's
/// acknowledged records; returns the number of documents.
fn check_index(store: &Arc<Store>, acknowledged: &[String], context: &str) -> u64 {
    // Committing after every batch: the check need not wait out the commit interval.
    let options = IndexOptions { commit_interval: Duration::ZERO, ..IndexOptions::default() };
    let index = SearchIndex::open(Arc::clone(store), options)
        .unwrap_or_else(|e| panic!("{context}: the index does not open: {e}"));
    index.wait_searchable(CATCH_UP).unwrap_or_else(|e| panic!("{context}: the index does not catch up: {e}"));
    // A fork's records before its fork point are its parent's, indexed once, there.
    let blocks = index_equals_journal(&index, store).unwrap_or_else(|diff| panic!("{context}: {diff}"));
    let documents = index.status().documents;
    assert_eq!(documents, blocks as u64, "{context}: the document count");
    for id in acknowledged {
        let hits = index.search(&SearchRequest::new(id.as_str())).unwrap();
        let found: Vec<String> = hits.iter().map(|hit| hit.id()).collect();
        assert_eq!(found, [format!("{id}#0")], "{context}: a search for {id}");
    }
    index.close().unwrap();
    documents
}

/// What the drill did so far.
#[derive(Debug, Default)]
struct Counts {
    rounds: usize,
    /// Runs that ended before their kill moment (or were measured).
    ended: usize,
    searches_killed: usize,
    reindexes_killed: usize,
    checked: usize,
    documents: u64,
}

impl Counts {
    fn killed(&self) -> usize {
        self.searches_killed + self.reindexes_killed
    }

    /// Whether the drill has the kills it needs: `kills` processes killed mid-run, a quarter of
    /// them of each kind.
    fn enough(&self, kills: usize) -> bool {
        self.killed() >= kills && self.searches_killed >= kills / 4 && self.reindexes_killed >= kills / 4
    }

    fn describe(&self) -> String {
        format!(
            "{} rounds, {} runs ended before their kill; indexing processes killed mid-run {} ({} \
             searches catching up, {} rebuilds); acknowledged records found exactly once {}; last \
             store's index {} documents, equal to its journal's blocks",
            self.rounds,
            self.ended,
            self.killed(),
            self.searches_killed,
            self.reindexes_killed,
            self.checked,
            self.documents
        )
    }
}

#[test]
fn kill_indexing_processes_at_random_moments() {
    let (kills, seed) = crate::support::drill::settings("index kill drill");
    let mut rng = Rng::new(seed);

    let mut sandbox = Sandbox::new();
    let mut store = Arc::new(Store::open(&sandbox.db, StoreOptions::default()).unwrap());
    let mut next = 0;
    // Kills fall within one indexing run of their kind; the first run of each kind ends on its
    // own and is measured, and every run that ends before its kill moment (the store grows, the
    // machine's load changes) sets the window to what it took.
    let (mut search_timer, mut reindex_timer) = (KillTimer::default(), KillTimer::default());
    let mut counts = Counts::default();
    // Kills that miss (the process had ended) earn more rounds, up to a bound.
    while !counts.enough(kills) && counts.rounds < crate::support::drill::rounds_max(kills) {
        let round = counts.rounds;
        counts.rounds += 1;
        if round > 0 && round % ROUNDS_PER_STORE == 0 {
            drop(store);
            sandbox = Sandbox::new();
            store = Arc::new(Store::open(&sandbox.db, StoreOptions::default()).unwrap());
        }
        let mut acknowledged = append_records(&store, round, &mut next, RECORDS_BEFORE, &mut rng);
        // A third rebuilds, at random; once the searches have their share, rebuilds until they
        // have theirs, so a run of searches does not prolong the drill.
        let reindex = (counts.searches_killed >= kills - kills / 4 && counts.reindexes_killed < kills / 4)
            || rng.below(3) == 0;
        let timer = if reindex { &mut reindex_timer } else { &mut search_timer };
        let context = format!("round {round} (seed {seed}, {})", if reindex { "reindex" } else { "search" });
        let (append_seed, kill_after) = (rng.next_u64(), timer.next(&mut rng));
        let args: Vec<String> = if reindex {
            vec!["reindex".into()]
        } else {
            vec!["history".into(), "search".into(), token(round, next), "--json".into()]
        };
        let (killed, during) =
            index_run(&sandbox, &store, &args, kill_after, timer, (round, next, append_seed), &context);
        acknowledged.extend(during);
        match (killed, reindex) {
            (false, _) => counts.ended += 1,
            (true, true) => counts.reindexes_killed += 1,
            (true, false) => counts.searches_killed += 1,
        }

        let run = sandbox.annal(&["verify"], "");
        assert_eq!(run.code, Some(0), "{context}: verify failed: {} {}", run.stdout, run.stderr);
        counts.documents = check_index(&store, &acknowledged, &context);
        counts.checked += acknowledged.len();
    }
    println!(
        "index kill drill: {}; last windows: search {:?}, reindex {:?}",
        counts.describe(),
        search_timer.window().0,
        reindex_timer.window().0
    );
    // The drill must have hit running processes, or it tested nothing.
    let describe = counts.describe();
    require("indexing processes killed mid-run", counts.killed(), kills, &describe);
    require("searches killed mid-run", counts.searches_killed, kills / 4, &describe);
    require("rebuilds killed mid-run", counts.reindexes_killed, kills / 4, &describe);
}

/// Runs the indexing process `args` while records are appended beside it, and kills it after
/// `kill_after` (`None`: lets it end, to measure it); `at` is the round, its last serial and
/// the appends' seed. Returns whether it was killed mid-run, and the records appended meanwhile.
fn index_run(
    sandbox: &Sandbox,
    store: &Store,
    args: &[String],
    kill_after: Option<Duration>,
    timer: &mut KillTimer,
    (round, next, append_seed): (usize, u64, u64),
    context: &str,
) -> (bool, Vec<String>) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut child = sandbox.command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let (outcome, status, during) = thread::scope(|scope| {
        // Appends go on while the process indexes: it follows the journal as it grows.
        let appender = scope.spawn(|| {
            let (mut rng, mut next_here, mut ids) = (Rng::new(append_seed), u64::MAX / 2 + next, Vec::new());
            while !stop.load(Ordering::Acquire) {
                let count = 1 + rng.below(3) as usize;
                ids.extend(append_records(store, round, &mut next_here, count, &mut rng));
                thread::sleep(Duration::from_millis(rng.below(10)));
            }
            ids
        });
        let outcome = kill_at(&mut child, started, kill_after.unwrap_or(Duration::MAX));
        let status = child.wait().unwrap();
        stop.store(true, Ordering::Release);
        (outcome, status, appender.join().unwrap())
    });
    let killed = matches!(outcome, Killed::MidRun) && status.signal() == Some(9);
    if !killed {
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success(), "{context}: the indexing process failed on its own: {status} {stderr}");
        // Ended on its own, before the kill moment or just as it came.
        timer.finished(match outcome {
            Killed::Finished(took) => took,
            Killed::MidRun => started.elapsed(),
        });
    }
    (killed, during)
}
