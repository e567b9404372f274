//! A scripted workload for the crash and fault tests: batches of varied size (empty, single,
//! several), records with tool outputs past the blob threshold, a fork, a fork of a fork, and an
//! idempotent retry, all predicted by the model.

use annal_engine::{AppendError, ForkError, Record, Store};

use crate::model::{compare_append, compare_fork, Model};
use crate::records::varied;
use crate::rng::Rng;

/// One call of the workload.
#[derive(Clone, Debug)]
pub enum Step {
    /// `Store::append`.
    Append {
        /// The session.
        session: String,
        /// Optimistic concurrency.
        expected_next: Option<u64>,
        /// The batch.
        records: Vec<Record>,
    },
    /// `Store::fork`.
    Fork {
        /// The parent.
        parent: String,
        /// The fork point.
        at: u64,
        /// The new session.
        name: String,
    },
}

/// How a step failed.
#[derive(Debug)]
pub enum StepError {
    /// An append failed.
    Append(AppendError),
    /// A fork failed.
    Fork(ForkError),
}

impl StepError {
    /// Whether this is the store reporting a storage I/O failure.
    pub fn is_io(&self) -> bool {
        matches!(self, StepError::Append(AppendError::Io { .. }) | StepError::Fork(ForkError::Io { .. }))
    }

    /// The I/O error's kind, if this is an I/O failure.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            StepError::Append(AppendError::Io { source }) | StepError::Fork(ForkError::Io { source }) => {
                Some(source.kind())
            }
            _ => None,
        }
    }

    /// Whether this is the refusal of a store stopped by an earlier I/O error.
    pub fn is_poisoned(&self) -> bool {
        matches!(self, StepError::Append(AppendError::Poisoned) | StepError::Fork(ForkError::Poisoned))
    }
}

impl Step {
    /// Runs the step on a store.
    ///
    /// # Errors
    /// The store's error.
    pub fn run(&self, store: &Store) -> Result<(), StepError> {
        match self {
            Step::Append { session, expected_next, records } => {
                store.append(session, *expected_next, records.clone()).map(drop).map_err(StepError::Append)
            }
            Step::Fork { parent, at, name } => {
                store.fork(parent, *at, name).map(drop).map_err(StepError::Fork)
            }
        }
    }

    /// Runs the step on a store and checks a success against the model's prediction, applying
    /// it to the model. A failure leaves the model alone and is returned.
    ///
    /// # Errors
    /// The store's error.
    ///
    /// # Panics
    /// If the store succeeds with a result other than the model's.
    pub fn run_checked(&self, store: &Store, model: &mut Model) -> Result<(), StepError> {
        match self {
            Step::Append { session, expected_next, records } => {
                let actual = store.append(session, *expected_next, records.clone());
                if actual.is_ok() {
                    let predicted = model.append(session, *expected_next, records);
                    if let Err(diff) = compare_append(&predicted, &actual) {
                        panic!("{diff}");
                    }
                }
                actual.map(drop).map_err(StepError::Append)
            }
            Step::Fork { parent, at, name } => {
                let actual = store.fork(parent, *at, name);
                if actual.is_ok() {
                    let predicted = model.fork(parent, *at, name);
                    if let Err(diff) = compare_fork(&predicted, &actual) {
                        panic!("{diff}");
                    }
                }
                actual.map(drop).map_err(StepError::Fork)
            }
        }
    }

    /// Applies the step to a model, as if it had succeeded.
    ///
    /// # Panics
    /// If the model rejects the step: the workload is built so that every step succeeds.
    pub fn apply(&self, model: &mut Model) {
        match self {
            Step::Append { session, expected_next, records } => {
                if let Err(e) = model.append(session, *expected_next, records) {
                    panic!("workload step rejected by the model: {e:?}");
                }
            }
            Step::Fork { parent, at, name } => {
                if let Err(e) = model.fork(parent, *at, name) {
                    panic!("workload step rejected by the model: {e:?}");
                }
            }
        }
    }
}

/// The scripted workload: `rounds` repetitions of the script over new sessions; `seed` varies
/// the content.
pub fn workload(seed: u64, rounds: usize) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let mut model = Model::new();
    let mut steps = Vec::new();
    let mut next_id = 0u64;
    let mut batch = |rng: &mut Rng, size: usize, big: usize| -> Vec<Record> {
        (0..size)
            .map(|i| {
                next_id += 1;
                varied(rng, &format!("w{seed}-{next_id}"), i < big)
            })
            .collect()
    };
    let mut push = |step: Step, model: &mut Model| {
        step.apply(model);
        steps.push(step);
    };
    let append = |session: &str, cas: bool, records: Vec<Record>, model: &Model| Step::Append {
        session: session.to_owned(),
        expected_next: cas.then(|| model.len(session)),
        records,
    };
    for round in 0..rounds {
        let main = format!("main{round}");
        let side = format!("side{round}");
        let fork = format!("main{round}-fork");
        let fork2 = format!("main{round}-fork-fork");
        let b = batch(&mut rng, 1, 0);
        push(append(&main, true, b, &model), &mut model);
        let b = batch(&mut rng, 3, 1);
        push(append(&main, true, b, &model), &mut model);
        let b = batch(&mut rng, 2, 0);
        push(append(&side, false, b, &model), &mut model);
        let b = batch(&mut rng, 5, 2);
        push(append(&main, true, b, &model), &mut model);
        push(Step::Fork { parent: main.clone(), at: 2, name: fork.clone() }, &mut model);
        let b = batch(&mut rng, 2, 1);
        push(append(&fork, true, b, &model), &mut model);
        let b = batch(&mut rng, 1, 0);
        push(append(&main, false, b, &model), &mut model);
        // An empty batch creates a session and stores nothing else.
        push(append(&format!("empty{round}"), true, Vec::new(), &model), &mut model);
        let retried = batch(&mut rng, 4, 0);
        push(append(&side, true, retried.clone(), &model), &mut model);
        // A retry of an acknowledged batch with a stale expected_next is a no-op that succeeds.
        push(Step::Append { session: side.clone(), expected_next: Some(2), records: retried }, &mut model);
        push(Step::Fork { parent: fork.clone(), at: model.len(&fork), name: fork2.clone() }, &mut model);
        let b = batch(&mut rng, 3, 1);
        push(append(&fork2, true, b, &model), &mut model);
        let b = batch(&mut rng, 2, 2);
        push(append(&main, true, b, &model), &mut model);
    }
    steps
}
