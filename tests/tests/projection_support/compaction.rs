//! What the compaction tests share: a budget small enough to compact generated sessions, a
//! scripted summarizer (answers, fails, comes back empty, sleeps, or waits for the test's
//! go-ahead), and reading receipts back.

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use annal_engine::{
    Algorithm, Budget, CompactOptions, Message, ProjectOptions, Record, Role, Store, SummarizeError,
    Summarizer, SummaryRequest,
};

use super::{shaped, store, Shape};

pub(crate) const SESSION: &str = "s";

pub(crate) fn budget() -> Budget {
    Budget { tail_tokens: 2_000, evidence_tokens: 1_024, history_tokens: 4_000, ..Budget::new(32_000, 4_000) }
}

pub(crate) fn options(algorithm: Algorithm) -> CompactOptions {
    CompactOptions::new(ProjectOptions { budget: budget(), algorithm })
}

/// A session well past the trigger of `budget()`.
pub(crate) fn long_session(seed: u64) -> Vec<Record> {
    let shape = Shape { parallel: true, system: true, thinking: true, ..Shape::plain(seed, 24) };
    shaped(SESSION, &shape)
}

pub(crate) fn filled_store(seed: u64) -> (tempfile::TempDir, Store, Vec<Record>) {
    let (dir, store) = store();
    let records = long_session(seed);
    store.append(SESSION, Some(0), records.clone()).unwrap();
    (dir, store, records)
}

pub(crate) fn len(store: &Store, session: &str) -> u64 {
    store.snapshot().unwrap().session(session).unwrap().unwrap().len
}

pub(crate) fn user(id: &str, text: &str) -> Record {
    Record::text(id, Role::User, text)
}

/// One more turn of about 750 tokens: a request and an answer.
pub(crate) fn turn(n: usize) -> Vec<Record> {
    let detail = format!(" Ledger line {n} balances against the monthly report.").repeat(28);
    vec![
        user(
            &format!("more-{n}-q"),
            &format!("Follow-up request number {n}: check the ledger totals.{detail}"),
        ),
        Record::text(format!("more-{n}-a"), Role::Assistant, format!("Done with follow-up {n}.{detail}")),
    ]
}

#[derive(Debug)]
pub(crate) enum Behaviour {
    Answer(String),
    Fail,
    Empty,
    Sleep(Duration),
    /// Tells the test it was called, then waits for its go-ahead.
    Gate(Mutex<mpsc::Sender<()>>, Mutex<mpsc::Receiver<()>>),
}

#[derive(Debug)]
pub(crate) struct Scripted {
    pub(crate) behaviour: Behaviour,
    pub(crate) calls: Mutex<Vec<SummaryRequest>>,
    pub(crate) timeout: Duration,
}

impl Scripted {
    pub(crate) fn new(behaviour: Behaviour) -> Arc<Scripted> {
        Arc::new(Scripted { behaviour, calls: Mutex::new(Vec::new()), timeout: Duration::from_secs(60) })
    }

    pub(crate) fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

impl Summarizer for Scripted {
    fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizeError> {
        self.calls.lock().unwrap().push(request.clone());
        match &self.behaviour {
            Behaviour::Answer(text) => Ok(text.clone()),
            Behaviour::Fail => Err(SummarizeError("the model is overloaded".into())),
            Behaviour::Empty => Ok("  \n".into()),
            Behaviour::Sleep(pause) => {
                std::thread::sleep(*pause);
                Ok("too late".into())
            }
            Behaviour::Gate(called, go) => {
                called.lock().unwrap().send(()).unwrap();
                go.lock().unwrap().recv().unwrap();
                Ok("The ledger fix is done; next, the monthly report.".into())
            }
        }
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }
}

pub(crate) fn with_summarizer(summarizer: &Arc<Scripted>) -> CompactOptions {
    CompactOptions { summarizer: Some(summarizer.clone()), ..options(Algorithm::SummarizedV1) }
}

pub(crate) fn receipt_meta(store: &Store, order: u64) -> serde_json::Value {
    let snapshot = store.snapshot().unwrap();
    let guard = snapshot.record(SESSION, order).unwrap().unwrap();
    let view = guard.view().unwrap();
    assert_eq!(view.role(), Role::System);
    let (_, meta) = view.meta().find(|(k, _)| *k == "annal.receipt").unwrap();
    serde_json::from_str(meta).unwrap()
}

pub(crate) fn starts_with(longer: &[Message<'_>], prefix: &[Message<'_>]) -> bool {
    longer.len() >= prefix.len() && longer[..prefix.len()] == *prefix
}
