//! A reference model of the journal: sessions as plain vectors of records, with the append,
//! idempotency, conflict and fork rules written out the simple way, and checks that compare a
//! store's reads with it.
//!
//! The model copies a parent's records into a fork (the store shares them by reference), so a
//! bug in the store's lineage walking shows up as a difference.

use std::collections::{BTreeMap, HashMap};

use annal_engine::{AppendError, AppendReceipt, ForkError, Record, SessionInfo, ZERO_HASH};

use crate::records::same_content;

/// One session of the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelSession {
    /// The session it was forked from.
    pub parent: Option<String>,
    /// Where it was forked.
    pub fork_at: Option<u64>,
    /// Visible records, inherited ones first, each with the session that appended it.
    pub records: Vec<(String, Record)>,
}

/// The outcome the model predicts for a failing call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// `AppendError::Conflict`.
    Conflict {
        /// What the caller expected.
        expected: u64,
        /// The session's length.
        actual: u64,
    },
    /// `AppendError::EntryMismatch`.
    EntryMismatch {
        /// The entry.
        entry_id: String,
        /// Where it is.
        source_order: u64,
    },
    /// `AppendError::EntryInOtherSession`.
    EntryInOtherSession {
        /// The entry.
        entry_id: String,
        /// The session that holds it.
        owner: String,
    },
    /// `ForkError::UnknownSession`.
    UnknownSession,
    /// `ForkError::OutOfRange`.
    OutOfRange {
        /// The parent's length.
        len: u64,
    },
    /// `ForkError::NameTaken`.
    NameTaken,
}

/// The reference model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    sessions: BTreeMap<String, ModelSession>,
    /// entryId → (owner, sourceOrder).
    entries: HashMap<String, (String, u64)>,
    /// The store-wide position stream.
    positions: Vec<(String, u64)>,
}

impl Model {
    /// An empty model.
    pub fn new() -> Model {
        Model::default()
    }

    /// The sessions, by name.
    pub fn sessions(&self) -> &BTreeMap<String, ModelSession> {
        &self.sessions
    }

    /// A session's length (0 if it does not exist).
    pub fn len(&self, session: &str) -> u64 {
        self.sessions.get(session).map_or(0, |s| s.records.len() as u64)
    }

    /// Whether the model holds no sessions.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Every entryId stored, in a stable order.
    pub fn entry_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.entries.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// The stored record with this entryId, with its owner and sourceOrder.
    pub fn entry(&self, entry_id: &str) -> Option<(String, u64, &Record)> {
        let (owner, order) = self.entries.get(entry_id)?;
        let record = &self.sessions[owner].records[*order as usize].1;
        Some((owner.clone(), *order, record))
    }

    /// Records stored (each once, however many forks inherit it).
    pub fn stored_records(&self) -> u64 {
        self.positions.len() as u64
    }

    /// Applies an append with the store's rules; changes nothing when it fails.
    ///
    /// # Errors
    /// The error the store must report.
    pub fn append(
        &mut self,
        session: &str,
        expected_next: Option<u64>,
        records: &[Record],
    ) -> Result<AppendReceipt, Expected> {
        let existing = self.sessions.get(session);
        let len = existing.map_or(0, |s| s.records.len() as u64);
        let mut orders: Vec<u64> = Vec::with_capacity(records.len());
        let mut in_batch: HashMap<&str, (usize, &Record)> = HashMap::new();
        let mut new: Vec<&Record> = Vec::new();
        for record in records {
            let id = record.entry_id.as_str();
            if let Some(&(first, prior)) = in_batch.get(id) {
                if !same_content(prior, record) {
                    return Err(Expected::EntryMismatch {
                        entry_id: id.to_owned(),
                        source_order: orders[first],
                    });
                }
                orders.push(orders[first]);
                continue;
            }
            in_batch.insert(id, (orders.len(), record));
            match self.entries.get(id) {
                Some((owner, _)) => {
                    let visible = existing.and_then(|s| s.records.iter().position(|(_, r)| r.entry_id == id));
                    match (existing, visible) {
                        (Some(s), Some(order)) => {
                            if !same_content(&s.records[order].1, record) {
                                return Err(Expected::EntryMismatch {
                                    entry_id: id.to_owned(),
                                    source_order: order as u64,
                                });
                            }
                            orders.push(order as u64);
                        }
                        _ => {
                            return Err(Expected::EntryInOtherSession {
                                entry_id: id.to_owned(),
                                owner: owner.clone(),
                            })
                        }
                    }
                }
                None => {
                    orders.push(len + new.len() as u64);
                    new.push(record);
                }
            }
        }
        // Re-sending a batch that is already stored succeeds whatever `expected_next` says: that
        // is how a caller retries an append whose acknowledgement it lost.
        let all_known = new.is_empty() && !records.is_empty();
        if let Some(expected) = expected_next {
            if expected != len && !all_known {
                return Err(Expected::Conflict { expected, actual: len });
            }
        }
        let appended = new.len();
        let new: Vec<Record> = new.into_iter().cloned().collect();
        let target = self.sessions.entry(session.to_owned()).or_default();
        for record in new {
            let order = target.records.len() as u64;
            self.entries.insert(record.entry_id.clone(), (session.to_owned(), order));
            self.positions.push((session.to_owned(), order));
            target.records.push((session.to_owned(), record));
        }
        Ok(AppendReceipt { source_orders: orders, appended, next: target.records.len() as u64 })
    }

    /// Applies a fork with the store's rules; changes nothing when it fails.
    ///
    /// # Errors
    /// The error the store must report.
    pub fn fork(&mut self, parent: &str, at: u64, name: &str) -> Result<SessionInfo, Expected> {
        let Some(source) = self.sessions.get(parent) else { return Err(Expected::UnknownSession) };
        let len = source.records.len() as u64;
        if at > len {
            return Err(Expected::OutOfRange { len });
        }
        if self.sessions.contains_key(name) {
            return Err(Expected::NameTaken);
        }
        let records = source.records[..at as usize].to_vec();
        self.sessions.insert(
            name.to_owned(),
            ModelSession { parent: Some(parent.to_owned()), fork_at: Some(at), records },
        );
        // The head is the store's to compute; the checks compare it with the last record read.
        Ok(SessionInfo {
            name: name.to_owned(),
            parent: Some(parent.to_owned()),
            fork_at: Some(at),
            len: at,
            head: ZERO_HASH,
        })
    }
}

/// Compares an append's outcome with the model's prediction.
///
/// # Errors
/// What differs.
pub fn compare_append(
    expected: &Result<AppendReceipt, Expected>,
    actual: &Result<AppendReceipt, AppendError>,
) -> Result<(), String> {
    let same = match (expected, actual) {
        (Ok(e), Ok(a)) => e == a,
        (
            Err(Expected::Conflict { expected, actual }),
            Err(AppendError::Conflict { expected: e, actual: a, .. }),
        ) => expected == e && actual == a,
        (
            Err(Expected::EntryMismatch { entry_id, source_order }),
            Err(AppendError::EntryMismatch { entry_id: e, source_order: s, .. }),
        ) => entry_id == e && source_order == s,
        (
            Err(Expected::EntryInOtherSession { entry_id, owner }),
            Err(AppendError::EntryInOtherSession { entry_id: e, owner: o, .. }),
        ) => entry_id == e && owner == o,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("append: model expects {expected:?}, store returned {actual:?}"))
    }
}

/// Compares a fork's outcome with the model's prediction (heads are checked separately).
///
/// # Errors
/// What differs.
pub fn compare_fork(
    expected: &Result<SessionInfo, Expected>,
    actual: &Result<SessionInfo, ForkError>,
) -> Result<(), String> {
    let same = match (expected, actual) {
        (Ok(e), Ok(a)) => {
            e.name == a.name && e.parent == a.parent && e.fork_at == a.fork_at && e.len == a.len
        }
        (Err(Expected::UnknownSession), Err(ForkError::UnknownSession(_))) => true,
        (Err(Expected::OutOfRange { len }), Err(ForkError::OutOfRange { len: l, .. })) => len == l,
        (Err(Expected::NameTaken), Err(ForkError::NameTaken(_))) => true,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("fork: model expects {expected:?}, store returned {actual:?}"))
    }
}

mod checks;

pub use checks::{check_random_reads, check_session, check_snapshot, check_verify};
