//! Model test: random sequences of appends (fresh, stale, idempotent, mismatched), forks (of
//! forks too, at 0, at the end and between) and reopens, checked after every step against the
//! reference model: reads, entries, positions, heads, hash immutability and verify.
//!
//! 64 cases of up to 40 operations by default; run longer with, for example,
//! `PROPTEST_CASES=2000 cargo test -p annal-tests --test durability -- model::`.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;

use annal_engine::{Hash, Record, Store, StoreOptions};
use annal_support::model::{
    check_random_reads, check_snapshot, check_verify, compare_append, compare_fork, Expected, Model,
};
use annal_support::records::{altered, varied};
use annal_support::rng::Rng;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

#[derive(Clone, Debug)]
enum Cas {
    None,
    Correct,
    /// The session's length plus this (never zero).
    Stale(i8),
}

#[derive(Clone, Debug)]
enum ForkAt {
    Zero,
    End,
    Anywhere(u16),
}

#[derive(Clone, Debug)]
enum Op {
    /// A batch of new records (`dup` repeats one of them inside the batch).
    Append {
        session: usize,
        count: usize,
        cas: bool,
        dup: bool,
        seed: u64,
    },
    /// New records with an `expected_next` that is not the session's length.
    StaleAppend {
        session: usize,
        count: usize,
        delta: i8,
        seed: u64,
    },
    /// An existing record again, same content, to its own session or another one, possibly
    /// followed by new records in the same batch.
    Reappend {
        entry: usize,
        session: Option<usize>,
        extra: usize,
        cas: Cas,
        seed: u64,
    },
    /// An existing entryId with different content.
    ReappendAltered {
        entry: usize,
        session: Option<usize>,
    },
    Fork {
        parent: usize,
        at: ForkAt,
    },
    /// A fork that must fail: unknown parent, past the end, or onto a taken name.
    BadFork {
        parent: usize,
        kind: u8,
    },
    /// A call the store must reject before writing anything: a batch holding one malformed
    /// record, or a bad session name.
    Invalid {
        session: usize,
        kind: u8,
        seed: u64,
    },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let cas = prop_oneof![
        Just(Cas::None),
        Just(Cas::Correct),
        prop_oneof![-3i8..=-1, 1i8..=3].prop_map(Cas::Stale)
    ];
    let fork_at = prop_oneof![Just(ForkAt::Zero), Just(ForkAt::End), any::<u16>().prop_map(ForkAt::Anywhere)];
    prop_oneof![
        8 => (any::<usize>(), 0usize..=5, any::<bool>(), prop::bool::weighted(0.15), any::<u64>())
            .prop_map(|(session, count, cas, dup, seed)| Op::Append { session, count, cas, dup, seed }),
        2 => (any::<usize>(), 0usize..=3, prop_oneof![-3i8..=-1, 1i8..=3], any::<u64>())
            .prop_map(|(session, count, delta, seed)| Op::StaleAppend { session, count, delta, seed }),
        3 => (any::<usize>(), prop::option::weighted(0.5, any::<usize>()), 0usize..=2, cas, any::<u64>())
            .prop_map(|(entry, session, extra, cas, seed)| Op::Reappend { entry, session, extra, cas, seed }),
        2 => (any::<usize>(), prop::option::weighted(0.3, any::<usize>()))
            .prop_map(|(entry, session)| Op::ReappendAltered { entry, session }),
        3 => (any::<usize>(), fork_at).prop_map(|(parent, at)| Op::Fork { parent, at }),
        1 => (any::<usize>(), 0u8..3).prop_map(|(parent, kind)| Op::BadFork { parent, kind }),
        1 => (any::<usize>(), 0u8..6, any::<u64>()).prop_map(|(session, kind, seed)| Op::Invalid { session, kind, seed }),
        1 => Just(Op::Reopen),
    ]
}

fn options() -> StoreOptions {
    // A low blob threshold sends many payloads to the blob table without large test data.
    StoreOptions { blob_threshold_bytes: 128, cache_size_bytes: 8 << 20, ..StoreOptions::default() }
}

struct Runner {
    path: std::path::PathBuf,
    store: Option<Store>,
    model: Model,
    /// Every record's chain hash as first read: records are never rewritten.
    hashes: HashMap<String, Hash>,
    next_id: u64,
    next_session: u64,
}

impl Runner {
    fn new(dir: &Path) -> Runner {
        let path = dir.join("model.redb");
        let store = Store::open(&path, options()).unwrap();
        Runner {
            path,
            store: Some(store),
            model: Model::new(),
            hashes: HashMap::new(),
            next_id: 0,
            next_session: 0,
        }
    }

    fn store(&self) -> &Store {
        self.store.as_ref().unwrap()
    }

    fn names(&self) -> Vec<String> {
        self.model.sessions().keys().cloned().collect()
    }

    /// An existing session, or (when `index` lands past them) a new name.
    fn session(&mut self, index: usize, allow_new: bool) -> String {
        let names = self.names();
        let slots = names.len() + usize::from(allow_new);
        match names.get(index % slots.max(1)) {
            Some(name) => name.clone(),
            None => {
                self.next_session += 1;
                format!("s{}", self.next_session)
            }
        }
    }

    fn fresh(&mut self, rng: &mut Rng, count: usize) -> Vec<Record> {
        (0..count)
            .map(|_| {
                self.next_id += 1;
                let big = rng.chance(1, 16);
                varied(rng, &format!("e{}", self.next_id), big)
            })
            .collect()
    }

    fn append(
        &mut self,
        session: &str,
        expected_next: Option<u64>,
        records: Vec<Record>,
    ) -> Result<(), String> {
        // The parent of the session appended to must not change.
        let parent = self.model.sessions().get(session).and_then(|s| s.parent.clone());
        let parent_before = match &parent {
            Some(p) => self.store().snapshot().unwrap().session(p).unwrap(),
            None => None,
        };
        let predicted = self.model.append(session, expected_next, &records);
        let actual = self.store().append(session, expected_next, records);
        compare_append(&predicted, &actual)?;
        if let Some(p) = &parent {
            let after = self.store().snapshot().unwrap().session(p).unwrap();
            if after != parent_before {
                return Err(format!(
                    "appending to {session:?} changed its parent: {parent_before:?} -> {after:?}"
                ));
            }
        }
        Ok(())
    }

    fn fork(&mut self, parent: &str, at: u64, name: &str) -> Result<Option<Expected>, String> {
        let predicted = self.model.fork(parent, at, name);
        let actual = self.store().fork(parent, at, name);
        compare_fork(&predicted, &actual)?;
        Ok(predicted.err())
    }

    fn apply(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Append { session, count, cas, dup, seed } => {
                let name = self.session(*session, true);
                let mut records = self.fresh(&mut Rng::new(*seed), *count);
                if *dup && !records.is_empty() {
                    let again = records[*seed as usize % records.len()].clone();
                    records.push(again);
                }
                let expected = cas.then(|| self.model.len(&name));
                self.append(&name, expected, records)
            }
            Op::StaleAppend { session, count, delta, seed } => {
                let name = self.session(*session, true);
                let len = self.model.len(&name);
                let expected = len.checked_add_signed(i64::from(*delta)).unwrap_or(len + 1);
                let records = self.fresh(&mut Rng::new(*seed), *count);
                let predicted = self.model.append(&name, Some(expected), &records);
                if !matches!(predicted, Err(Expected::Conflict { .. })) {
                    return Err(format!("a stale append was not a conflict in the model: {predicted:?}"));
                }
                let actual = self.store().append(&name, Some(expected), records);
                compare_append(&predicted, &actual)
            }
            Op::Reappend { entry, session, extra, cas, seed } => {
                let ids = self.model.entry_ids();
                if ids.is_empty() {
                    return Ok(());
                }
                let (owner, _, record) = self.model.entry(&ids[entry % ids.len()]).unwrap();
                let record = record.clone();
                let name = match session {
                    Some(index) => self.session(*index, false),
                    None => owner,
                };
                let mut records = vec![record];
                records.extend(self.fresh(&mut Rng::new(*seed), *extra));
                let len = self.model.len(&name);
                let expected = match cas {
                    Cas::None => None,
                    Cas::Correct => Some(len),
                    Cas::Stale(delta) => Some(len.checked_add_signed(i64::from(*delta)).unwrap_or(len + 1)),
                };
                self.append(&name, expected, records)
            }
            Op::ReappendAltered { entry, session } => {
                let ids = self.model.entry_ids();
                if ids.is_empty() {
                    return Ok(());
                }
                let (owner, _, record) = self.model.entry(&ids[entry % ids.len()]).unwrap();
                let record = altered(record);
                let name = match session {
                    Some(index) => self.session(*index, false),
                    None => owner,
                };
                let before = self.model.clone();
                self.append(&name, None, vec![record])?;
                if self.model != before {
                    return Err("an altered re-append changed the model".into());
                }
                Ok(())
            }
            Op::Fork { parent, at } => {
                if self.model.is_empty() {
                    return Ok(());
                }
                let parent = self.session(*parent, false);
                let len = self.model.len(&parent);
                let at = match at {
                    ForkAt::Zero => 0,
                    ForkAt::End => len,
                    ForkAt::Anywhere(at) => u64::from(*at) % (len + 1),
                };
                self.next_session += 1;
                let name = format!("f{}", self.next_session);
                match self.fork(&parent, at, &name)? {
                    None => Ok(()),
                    Some(error) => Err(format!("a valid fork failed in the model: {error:?}")),
                }
            }
            Op::BadFork { parent, kind } => {
                if self.model.is_empty() {
                    return Ok(());
                }
                let parent = self.session(*parent, false);
                let len = self.model.len(&parent);
                self.next_session += 1;
                let fresh = format!("f{}", self.next_session);
                let error = match kind {
                    0 => self.fork("no-such-session", 0, &fresh)?,
                    1 => self.fork(&parent, len + 1 + u64::from(*kind), &fresh)?,
                    _ => {
                        let taken = self.names()[0].clone();
                        self.fork(&parent, 0, &taken)?
                    }
                };
                match error {
                    Some(_) => Ok(()),
                    None => Err("an invalid fork succeeded in the model".into()),
                }
            }
            Op::Invalid { session, kind, seed } => {
                let name = self.session(*session, true);
                if *kind == 5 {
                    return match self.store().fork(&name, 0, "bad\u{7}name") {
                        Err(annal_engine::ForkError::InvalidSessionName { .. }) => Ok(()),
                        other => Err(format!("a fork to a bad name returned {other:?}")),
                    };
                }
                // The first record is valid: a bad second one must stop the whole batch.
                let mut records = self.fresh(&mut Rng::new(*seed), 2);
                let bad = &mut records[1];
                let target = match kind {
                    0 => {
                        bad.entry_id.clear();
                        name
                    }
                    1 => {
                        bad.timestamp = Some("yesterday".into());
                        name
                    }
                    2 => {
                        bad.meta.insert("k".into(), "not json".into());
                        name
                    }
                    3 => String::new(),
                    _ => "a\nb".to_owned(),
                };
                match (kind, self.store().append(&target, None, records)) {
                    (0..=2, Err(annal_engine::AppendError::InvalidRecord { .. }))
                    | (3..=4, Err(annal_engine::AppendError::InvalidSessionName { .. })) => Ok(()),
                    (_, other) => Err(format!("an invalid append to {target:?} returned {other:?}")),
                }
            }
            Op::Reopen => {
                self.store.take().unwrap().close().map_err(|e| format!("close: {e}"))?;
                self.store = Some(Store::open(&self.path, options()).map_err(|e| format!("reopen: {e}"))?);
                Ok(())
            }
        }
    }

    fn check(&mut self, rng: &mut Rng) -> Result<(), String> {
        let snapshot = self.store().snapshot().map_err(|e| format!("snapshot: {e}"))?;
        check_snapshot(&snapshot, &self.model, &mut self.hashes)?;
        check_random_reads(&snapshot, &self.model, rng)?;
        for name in self.model.sessions().keys() {
            let report = self.store().verify(Some(name)).map_err(|e| format!("verify {name:?}: {e}"))?;
            if !report.is_ok() {
                return Err(format!("verify {name:?}: {:?}", report.problems));
            }
        }
        check_verify(self.store(), &self.model)
    }
}

fn run(ops: &[Op], seed: u64) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let mut runner = Runner::new(dir.path());
    let mut rng = Rng::new(seed);
    for (step, op) in ops.iter().enumerate() {
        runner.apply(op).map_err(|e| format!("step {step} {op:?}: {e}"))?;
        runner.check(&mut rng).map_err(|e| format!("after step {step} {op:?}: {e}"))?;
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

proptest! {
    // Regressions are kept beside this file, as `<file>.proptest-regressions` (by default proptest
    // would put them in a folder parallel to the test binary's, away from the test).
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn store_matches_model(ops in prop::collection::vec(op(), 1..40), seed in any::<u64>()) {
        if let Err(diff) = run(&ops, seed) {
            prop_assert!(false, "{}", diff);
        }
    }
}
