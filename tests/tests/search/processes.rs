//! Search with several real processes on one store: the writer lock handed over between them,
//! and an indexer process killed between adding documents and committing them.
//!
//! The second process is `annal-test-writer index`, which reads commands on stdin (one per
//! line) and answers each with one line starting `index: `.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use annal_engine::Role;
use annal_query::{SearchIndex, SearchRequest};

use crate::search_support::*;

const WRITER: &str = env!("CARGO_BIN_EXE_annal-test-writer");

/// A second process driven over its stdin and stdout.
struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Peer {
    fn spawn() -> Peer {
        let mut child = Command::new(WRITER)
            .arg("index")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Peer { child, input, output }
    }

    /// Sends a command and returns the answer (without its prefix).
    fn ask(&mut self, command: &str) -> String {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the peer exited during {command:?}");
            if let Some(answer) = line.trim_end().strip_prefix("index: ") {
                assert!(!answer.starts_with("failed"), "{command}: {answer}");
                return answer.to_owned();
            }
        }
    }

    /// Sends a command without waiting for an answer, to a peer that may already have crashed
    /// as it was told to: a pipe closed by its exit is no failure.
    fn send(&mut self, command: &str) {
        if let Err(e) = writeln!(self.input, "{command}").and_then(|()| self.input.flush()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "sending {command:?}: {e}");
        }
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
    // An absence has no moment to wait for, so it is watched over many of the indexer's looks
    // (one per poll interval, each deciding afresh whether to take the writer).
    let watch = quick_options().poll_interval * 15;
    let started = Instant::now();
    while started.elapsed() < watch {
        assert!(!index.status().writing, "the writer was taken with nothing to index");
        std::thread::sleep(Duration::from_millis(2));
    }
    // The first process with something to index takes the writer.
    store.append("s", None, vec![text("apple-1", Role::User, "apple")]).unwrap();
    until("this process holds the writer", || index.status().writing);

    let mut peer = Peer::spawn();
    assert_eq!(peer.ask(&format!("open {}", db.display())), "opened");
    peer.ask("append s kiwi-1 kiwi");
    // The peer's append is indexed by this process, which holds the writer.
    assert_eq!(peer.ask("wait"), "writing false");
    assert_eq!(peer.ask("search kiwi"), "kiwi-1#0");
    store.append("s", None, vec![text("mango-1", Role::User, "mango")]).unwrap();
    searchable(&index);
    peer.ask("wait");
    assert_eq!(peer.ask("search mango"), "mango-1#0");

    // This process lets go; the peer takes over on its next look and catches up.
    index.close().unwrap();
    store.append("s", None, vec![text("papaya-1", Role::User, "papaya")]).unwrap();
    peer.ask("append s fig-1 fig");
    assert_eq!(peer.ask("wait"), "writing true");
    assert_eq!(peer.ask("search papaya"), "papaya-1#0");
    assert_eq!(peer.ask("search fig"), "fig-1#0");

    // Reopened here, the index follows the peer's commits.
    let index = open_index(&store);
    peer.ask("append s lime-1 lime");
    peer.ask("wait");
    searchable(&index);
    assert!(!index.status().writing);
    assert_eq!(hits(&index, "lime"), vec!["lime-1#0"]);
    assert_eq!(hits(&index, "kiwi"), vec!["kiwi-1#0"]);
    assert_index_equals_journal(&index, &store);

    peer.ask("close");
    drop(peer.input);
    assert!(peer.child.wait().unwrap().success());
    // With the peer gone, this process takes the writer on its next look with something to
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

    let mut peer = Peer::spawn();
    assert_eq!(peer.ask(&format!("open {} abort", db.display())), "opened");
    peer.send("wait");
    let status = peer.child.wait().unwrap();
    assert!(!status.success(), "the peer was meant to crash before its commit");

    let index = open_index(&store);
    assert_eq!(searchable(&index), 20);
    assert_index_equals_journal(&index, &store);
    assert_eq!(hits(&index, "banana").len(), 10);
    assert_eq!(hits(&index, "apple").len(), 10);
    index.close().unwrap();
}
