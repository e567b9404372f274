//! Search with several real processes on one store: the writer lock handed over between them,
//! and an indexer process killed between adding documents and committing them.
//!
//! The second process is this test binary again, started with `ANNAL_SEARCH_HELPER` set and
//! told to run only [`helper_process`], which then reads commands on stdin (one per line) and
//! answers each with one line starting `helper: `.
#![allow(clippy::unwrap_used)]

mod search_support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Role, Store};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use search_support::*;

const HELPER_ENV: &str = "ANNAL_SEARCH_HELPER";

/// A second process driven over its stdin and stdout.
struct Helper {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Helper {
    fn spawn() -> Helper {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["helper_process", "--exact", "--nocapture", "--test-threads=1", "-q"])
            .env(HELPER_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Helper { child, input, output }
    }

    /// Sends a command and returns the answer (without its prefix).
    fn ask(&mut self, command: &str) -> String {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the helper exited during {command:?}");
            if let Some(answer) = line.trim_end().strip_prefix("helper: ") {
                assert!(!answer.starts_with("failed"), "{command}: {answer}");
                return answer.to_owned();
            }
        }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
    }
}

/// Runs in the helper process only: opens a store and its index and does what stdin says.
///
/// ```text
/// open DB [abort]       open the store and its index (abort: crash where a commit would be)
/// append SESSION ID W   append a user record with text W
/// wait                  wait until searchable; answers "writing true|false"
/// search Q              answers the hit ids, space-separated
/// close                 close the index
/// ```
#[test]
fn helper_process() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    let mut store: Option<Arc<Store>> = None;
    let mut index: Option<SearchIndex> = None;
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split(' ').collect();
        let answer = match words.as_slice() {
            ["open", db, rest @ ..] => {
                let opened = open_store(Path::new(db));
                let options = IndexOptions { abort_before_commit: rest == ["abort"], ..quick_options() };
                index = Some(SearchIndex::open(Arc::clone(&opened), options).unwrap());
                store = Some(opened);
                "opened".to_owned()
            }
            ["append", session, id, word] => {
                store.as_ref().unwrap().append(session, None, vec![text(id, Role::User, word)]).unwrap();
                "appended".to_owned()
            }
            ["wait"] => {
                let index = index.as_ref().unwrap();
                searchable(index);
                format!("writing {}", index.status().writing)
            }
            ["search", query] => {
                let hits = index.as_ref().unwrap().search(&SearchRequest::new(*query)).unwrap();
                hits.iter().map(|h| h.id()).collect::<Vec<_>>().join(" ")
            }
            ["close"] => {
                index.take().unwrap().close().unwrap();
                "closed".to_owned()
            }
            other => format!("failed: unknown command {other:?}"),
        };
        writeln!(out, "helper: {answer}").unwrap();
        out.flush().unwrap();
    }
}

fn hits(index: &SearchIndex, query: &str) -> Vec<String> {
    index.search(&SearchRequest::new(query)).unwrap().iter().map(|h| h.id()).collect()
}

/// Two processes: the one holding the writer indexes the other's appends; when it closes, the
/// other takes the writer over and indexes from where it stopped; then the first follows.
#[test]
fn the_writer_is_handed_over_between_processes() {
    let (_dir, db, store) = fresh_store("shared.redb");
    let index = open_index(&store);
    // Nothing to index: opening takes no writer (a search of an up-to-date index never does).
    std::thread::sleep(Duration::from_millis(300));
    assert!(!index.status().writing);
    // The first process with something to index takes the writer.
    store.append("s", None, vec![text("apple-1", Role::User, "apple")]).unwrap();
    until("this process holds the writer", || index.status().writing);

    let mut helper = Helper::spawn();
    assert_eq!(helper.ask(&format!("open {}", db.display())), "opened");
    helper.ask("append s kiwi-1 kiwi");
    // The helper's append is indexed by this process, which holds the writer.
    assert_eq!(helper.ask("wait"), "writing false");
    assert_eq!(helper.ask("search kiwi"), "kiwi-1#0");
    store.append("s", None, vec![text("mango-1", Role::User, "mango")]).unwrap();
    searchable(&index);
    helper.ask("wait");
    assert_eq!(helper.ask("search mango"), "mango-1#0");

    // This process lets go; the helper takes over on its next look and catches up.
    index.close().unwrap();
    store.append("s", None, vec![text("papaya-1", Role::User, "papaya")]).unwrap();
    helper.ask("append s fig-1 fig");
    assert_eq!(helper.ask("wait"), "writing true");
    assert_eq!(helper.ask("search papaya"), "papaya-1#0");
    assert_eq!(helper.ask("search fig"), "fig-1#0");

    // Reopened here, the index follows the helper's commits.
    let index = open_index(&store);
    helper.ask("append s lime-1 lime");
    helper.ask("wait");
    searchable(&index);
    assert!(!index.status().writing);
    assert_eq!(hits(&index, "lime"), vec!["lime-1#0"]);
    assert_eq!(hits(&index, "kiwi"), vec!["kiwi-1#0"]);
    assert_index_equals_journal(&index, &store);

    helper.ask("close");
    drop(helper.input);
    assert!(helper.child.wait().unwrap().success());
    // With the helper gone, this process takes the writer on its next look with something to
    // index.
    store.append("s", None, vec![text("pear-1", Role::User, "pear")]).unwrap();
    until("this process holds the writer again", || index.status().writing);
    searchable(&index);
    assert_index_equals_journal(&index, &store);
    index.close().unwrap();
}

/// An indexer process dies after adding documents and before committing them: the next
/// process to open the index catches up from the last commit, with nothing missing and nothing
/// indexed twice.
#[test]
fn a_crash_between_adding_and_committing_loses_and_duplicates_nothing() {
    let (_dir, db, store) = fresh_store("crash.redb");
    let before: Vec<_> =
        (0..10).map(|i| text(&format!("a{i}"), Role::User, &format!("apple number {i}"))).collect();
    store.append("s", None, before).unwrap();
    let index = open_index(&store);
    assert_eq!(searchable(&index), 10);
    index.close().unwrap();
    let after: Vec<_> =
        (0..10).map(|i| text(&format!("b{i}"), Role::User, &format!("banana number {i}"))).collect();
    store.append("t", None, after).unwrap();

    let mut helper = Helper::spawn();
    assert_eq!(helper.ask(&format!("open {} abort", db.display())), "opened");
    helper.send("wait");
    let status = helper.child.wait().unwrap();
    assert!(!status.success(), "the helper was meant to crash before its commit");

    let index = open_index(&store);
    assert_eq!(searchable(&index), 20);
    assert_index_equals_journal(&index, &store);
    assert_eq!(hits(&index, "banana").len(), 10);
    assert_eq!(hits(&index, "apple").len(), 10);
    index.close().unwrap();
}
