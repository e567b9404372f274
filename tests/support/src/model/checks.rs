//! The reference model's checks of a store's reads: a session in full, a snapshot's sessions
//! and positions, random point reads, and `verify`'s report, each against the model.

use std::collections::HashMap;

use annal_engine::{EntryLocation, Hash, PositionEntry, Snapshot, Store, ZERO_HASH};

use crate::rng::Rng;

use super::{Model, ModelSession};

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
