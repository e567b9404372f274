//! A reference model of the journal: sessions as plain vectors of records, with the append,
//! idempotency, conflict and fork rules written out the simple way, and checks that compare a
//! store's reads with it.
//!
//! The model copies a parent's records into a fork (the store shares them by reference), so a
//! bug in the store's lineage walking shows up as a difference.

use std::collections::{BTreeMap, HashMap};

use annal_engine::{
    AppendError, AppendReceipt, EntryLocation, ForkError, Hash, PositionEntry, Record, SessionInfo, Snapshot,
    Store, ZERO_HASH,
};

use crate::records::same_content;
use crate::rng::Rng;

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

fn check(condition: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(what())
    }
}

/// Reads a session in full and checks it against the model: records equal, sourceOrders in
/// place, every record chained to the one before it, the head equal to the last hash. Hashes
/// seen before must not have changed (`hashes` remembers them across calls: records are never
/// rewritten).
///
/// # Errors
/// What differs.
pub fn check_session(
    snapshot: &Snapshot,
    name: &str,
    session: &ModelSession,
    hashes: &mut HashMap<String, Hash>,
) -> Result<(), String> {
    let info = snapshot
        .session(name)
        .map_err(|e| format!("session {name:?}: {e}"))?
        .ok_or_else(|| format!("session {name:?} is missing"))?;
    check(info.len == session.records.len() as u64, || {
        format!("session {name:?}: len {} but the model has {}", info.len, session.records.len())
    })?;
    check(info.parent == session.parent && info.fork_at == session.fork_at, || {
        format!(
            "session {name:?}: parent {:?} at {:?}, model {:?} at {:?}",
            info.parent, info.fork_at, session.parent, session.fork_at
        )
    })?;
    let mut prev = ZERO_HASH;
    let mut count = 0usize;
    for (index, item) in
        snapshot.records(name, 0..u64::MAX).map_err(|e| format!("{name:?}: {e}"))?.enumerate()
    {
        let guard = item.map_err(|e| format!("session {name:?} record {index}: {e}"))?;
        let view = guard.view().map_err(|e| format!("session {name:?} record {index}: {e}"))?;
        check(guard.source_order() == index as u64 && view.source_order() == index as u64, || {
            format!("session {name:?}: record {index} read with sourceOrder {}", guard.source_order())
        })?;
        let (_, expected) = session
            .records
            .get(index)
            .ok_or_else(|| format!("session {name:?}: record {index} is past the model's end"))?;
        let record =
            snapshot.to_record(&view).map_err(|e| format!("session {name:?} record {index}: {e}"))?;
        check(&record == expected, || {
            format!("session {name:?} record {index}: read {record:?}, model {expected:?}")
        })?;
        check(view.prev_hash() == prev, || format!("session {name:?} record {index}: chain broken"))?;
        let known = *hashes.entry(record.entry_id.clone()).or_insert_with(|| view.hash());
        check(known == view.hash(), || {
            format!(
                "session {name:?} record {index}: hash of {:?} changed since it was first read",
                record.entry_id
            )
        })?;
        prev = view.hash();
        count += 1;
    }
    check(count == session.records.len(), || {
        format!("session {name:?}: read {count} records, model has {}", session.records.len())
    })?;
    check(info.head == prev, || format!("session {name:?}: head is not the last record's hash"))?;
    let digests = snapshot.digests(name, 0..u64::MAX).map_err(|e| format!("{name:?} digests: {e}"))?;
    check(digests.len() == session.records.len(), || {
        format!("session {name:?}: {} digests for {} records", digests.len(), session.records.len())
    })?;
    for (index, ((order, digest), (_, record))) in digests.iter().zip(&session.records).enumerate() {
        check(*order == index as u64 && digest.role == record.role, || {
            format!("session {name:?}: digest {index} is ({order}, {:?})", digest.role)
        })?;
    }
    Ok(())
}

/// Checks a whole snapshot against the model: the session list, every session, every entry
/// and the position stream.
///
/// # Errors
/// What differs.
pub fn check_snapshot(
    snapshot: &Snapshot,
    model: &Model,
    hashes: &mut HashMap<String, Hash>,
) -> Result<(), String> {
    let listed = snapshot.sessions().map_err(|e| format!("sessions: {e}"))?;
    let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
    let expected: Vec<&str> = model.sessions.keys().map(String::as_str).collect();
    check(names == expected, || format!("sessions {names:?}, model {expected:?}"))?;
    for (name, session) in &model.sessions {
        check_session(snapshot, name, session, hashes)?;
    }
    for (id, (owner, order)) in &model.entries {
        let location = snapshot.entry(id).map_err(|e| format!("entry {id:?}: {e}"))?;
        let expected = EntryLocation { session: owner.clone(), source_order: *order };
        check(location.as_ref() == Some(&expected), || {
            format!("entry {id:?} at {location:?}, model {expected:?}")
        })?;
    }
    let positions = snapshot.positions(0, usize::MAX).map_err(|e| format!("positions: {e}"))?;
    let expected: Vec<PositionEntry> = model
        .positions
        .iter()
        .enumerate()
        .map(|(position, (session, source_order))| PositionEntry {
            position: position as u64,
            session: session.clone(),
            source_order: *source_order,
        })
        .collect();
    check(positions == expected, || format!("positions {positions:?}, model {expected:?}"))?;
    let end = snapshot.position_end().map_err(|e| format!("position_end: {e}"))?;
    check(end == model.positions.len() as u64, || {
        format!("position_end {end}, model {}", model.positions.len())
    })?;
    Ok(())
}

/// Reads random ranges, single records and entries, and compares them with the model.
///
/// # Errors
/// What differs.
pub fn check_random_reads(snapshot: &Snapshot, model: &Model, rng: &mut Rng) -> Result<(), String> {
    for (name, session) in &model.sessions {
        let len = session.records.len() as u64;
        for _ in 0..3 {
            let start = rng.below(len + 3);
            let end = match rng.below(4) {
                0 => u64::MAX,
                1 => start,
                _ => start + rng.below(len + 3),
            };
            let read: Vec<String> = snapshot
                .records(name, start..end)
                .map_err(|e| format!("{name:?} {start}..{end}: {e}"))?
                .map(|item| {
                    let guard = item.map_err(|e| e.to_string())?;
                    let view = guard.view().map_err(|e| e.to_string())?;
                    Ok(format!("{}:{}", guard.source_order(), view.entry_id()))
                })
                .collect::<Result<_, String>>()?;
            let expected: Vec<String> = session
                .records
                .iter()
                .enumerate()
                .filter(|(order, _)| (start..end).contains(&(*order as u64)))
                .map(|(order, (_, record))| format!("{order}:{}", record.entry_id))
                .collect();
            check(read == expected, || {
                format!("{name:?} {start}..{end}: read {read:?}, model {expected:?}")
            })?;
        }
        let past_end = snapshot.record(name, len).map_err(|e| format!("{name:?} record {len}: {e}"))?;
        check(past_end.is_none(), || format!("{name:?}: a record at sourceOrder {len}, past the end"))?;
    }
    let ids = model.entry_ids();
    for _ in 0..4.min(ids.len()) {
        let id = &ids[rng.index(ids.len())];
        let (owner, order, record) = model.entry(id).ok_or("model entry vanished")?;
        let (location, guard) =
            snapshot.record_by_entry(id).map_err(|e| format!("record_by_entry {id:?}: {e}"))?;
        check(location == EntryLocation { session: owner.clone(), source_order: order }, || {
            format!("record_by_entry {id:?} at {location:?}, model ({owner}, {order})")
        })?;
        let view = guard.view().map_err(|e| format!("record_by_entry {id:?}: {e}"))?;
        let read = snapshot.to_record(&view).map_err(|e| format!("record_by_entry {id:?}: {e}"))?;
        check(&read == record, || format!("record_by_entry {id:?}: read {read:?}, model {record:?}"))?;
    }
    match snapshot.record_by_entry("no-such-entry") {
        Err(annal_engine::ReadError::UnknownEntry(_)) => {}
        other => {
            return Err(format!("record_by_entry of an unknown id returned {:?}", other.map(|(l, _)| l)))
        }
    }
    match snapshot.records("no-such-session", 0..u64::MAX) {
        Err(annal_engine::ReadError::UnknownSession(_)) => {}
        other => return Err(format!("records of an unknown session returned {:?}", other.map(|_| ()))),
    }
    let from = rng.below(model.positions.len() as u64 + 2);
    let limit = rng.index(5);
    let positions = snapshot.positions(from, limit).map_err(|e| format!("positions: {e}"))?;
    let expected = model.positions.len().saturating_sub(from as usize).min(limit);
    check(
        positions.len() == expected && positions.iter().zip(from..).all(|(p, at)| p.position == at),
        || format!("positions({from}, {limit}) returned {positions:?}"),
    )?;
    Ok(())
}

/// Runs `verify` over the whole store and checks it is clean and counted what the model holds.
///
/// # Errors
/// Problems found, or counts that differ.
pub fn check_verify(store: &Store, model: &Model) -> Result<(), String> {
    let report = store.verify(None).map_err(|e| format!("verify: {e}"))?;
    check(report.is_ok(), || format!("verify found problems: {:?}", report.problems))?;
    check(report.sessions == model.sessions.len() as u64, || {
        format!("verify checked {} sessions, model has {}", report.sessions, model.sessions.len())
    })?;
    check(report.records == model.stored_records(), || {
        format!("verify checked {} records, model stores {}", report.records, model.stored_records())
    })?;
    Ok(())
}
