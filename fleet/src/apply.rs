//! Applying one stream message during a follow pass: passing over what is held, stopping a
//! session at a message that does not chain or is not signed as the store requires, making
//! forks, and appending runs of a session's records with their claims, so the store checks each
//! against the chain as it writes it, and their signatures in the same commit.

use annal_engine::{record_from_json, AppendError, Hash, PortableRecord, ZERO_HASH};

use crate::error::FleetError;
use crate::follow::{Local, Pass, Run};
use crate::pattern::glob;
use crate::sign::SIGNED_BYTES;
use crate::state::State;
use crate::trust::{bad_signature, kept};
use crate::wire::{self, Incoming};

/// Threads appending waiting runs at once: enough for group commit to join several sessions'
/// runs in one commit.
const APPENDERS: usize = 4;

impl Pass<'_> {
    /// Handles one message: passes over it, stops its session, makes a fork, or adds its
    /// record to the run.
    pub(crate) async fn take(
        &mut self,
        state: &mut State,
        sequence: u64,
        subject: &str,
        headers: Option<&async_nats::HeaderMap>,
        payload: bytes::Bytes,
    ) -> Result<(), FleetError> {
        let prefix = &self.fleet.options().prefix;
        let Some(session) = wire::session_of_subject(prefix, subject) else {
            self.report
                .foreign
                .push(format!("stream message {sequence} on {subject:?} names no session: passed over"));
            return Ok(());
        };
        if self.only.as_deref().is_some_and(|only| only != session)
            || self.pattern.is_some_and(|pattern| !glob(pattern, &session))
            || state.stopped.contains_key(&session)
        {
            return Ok(());
        }
        if state.sequences.get(&session).is_some_and(|&done| sequence <= done) {
            self.report.passed_over += 1;
            return Ok(());
        }
        let incoming = match wire::decode(&session, headers, payload) {
            Ok(incoming) => incoming,
            Err(reason) => return self.stop(state, &session, sequence, &reason),
        };
        // Who signed it is checked before anything of it is read further (a referenced object).
        let signed = match self.trust.admit_message(&session, headers, &incoming) {
            Ok(signed) => signed,
            Err(reason) => return self.stop(state, &session, sequence, &reason),
        };
        let at = Message { session: &session, sequence, signed };
        match incoming {
            Incoming::Fork { parent, at, head } => {
                self.flush(state)?;
                self.fork(state, &session, sequence, &parent, at, &head)
            }
            Incoming::Record { order, hash, json } => self.record(state, &at, order, &hash, &json).await,
            Incoming::RecordRef { order, hash, object, bytes } => {
                // A record's JSON is at most a few times its stored size; the fleet's limit
                // bounds what one message can make this host read.
                let record_json_max = self.store.options().limits.record_size_bytes_max.saturating_mul(4);
                let limit = record_json_max.max(1 << 20).min(self.fleet.options().object_bytes_max);
                if let Some(bytes) = bytes.filter(|&bytes| bytes > limit as u64) {
                    let reason = format!("object {object:?} is {bytes} bytes, over the limit of {limit}");
                    return self.stop(state, &session, sequence, &reason);
                }
                match self.fleet.get_object(&object, limit).await {
                    Ok(json) => self.record(state, &at, order, &hash, &json).await,
                    // A record whose object is gone, or too large, will never apply.
                    Err((true, reason)) => self.stop(state, &session, sequence, &reason),
                    // A read that failed on the way may work next time: stop the pass, not the
                    // session, before its cursor passes the message.
                    Err((false, reason)) => {
                        self.flush(state)?;
                        self.save(state)?;
                        Err(self
                            .fleet
                            .stream_error(format!("message {sequence} of session {session:?}: {reason}")))
                    }
                }
            }
        }
    }

    fn local(&mut self, session: &str) -> Result<&mut Local, FleetError> {
        if !self.local.contains_key(session) {
            let info = self.store.snapshot()?.session(session)?;
            let local = match info {
                Some(info) => Local { exists: true, len: info.len },
                None => Local { exists: false, len: 0 },
            };
            self.local.insert(session.to_owned(), local);
        }
        Ok(self.local.get_mut(session).expect("inserted above"))
    }

    async fn record(
        &mut self,
        state: &mut State,
        at: &Message<'_>,
        order: u64,
        hash: &Hash,
        json: &[u8],
    ) -> Result<(), FleetError> {
        let (session, sequence) = (at.session, at.sequence);
        let portable = match parse_record(json, order, hash) {
            Ok(portable) => portable,
            Err(reason) => return self.stop(state, session, sequence, &reason),
        };
        let pending = self.runs.get(session).map_or(0, |run| run.records.len() as u64);
        let local = self.local(session)?;
        let expected = local.len + pending;
        if order < expected {
            // Held already: a replay of what this store applied, or an exact duplicate.
            let same = pending == 0 && self.holds(session, order, hash, &portable.record.entry_id)?;
            if same {
                self.report.passed_over += 1;
                state.set_sequence(session, sequence);
                return Ok(());
            }
            let reason =
                format!("reordered or duplicated: sourceOrder {order} is already held by another record");
            return self.stop(state, session, sequence, &reason);
        }
        if order > expected {
            let reason = format!("a gap: the next sourceOrder here is {expected}, the message has {order}");
            return self.stop(state, session, sequence, &reason);
        }
        let bytes = json.len() as u64;
        let run = self.runs.entry(session.to_owned()).or_insert_with(|| Run {
            session: session.to_owned(),
            records: Vec::new(),
            sequences: Vec::new(),
            signed: Vec::new(),
            first: order,
            bytes: 0,
        });
        run.records.push(portable);
        run.sequences.push(sequence);
        run.signed.push(at.signed);
        run.bytes += bytes;
        self.runs_records += 1;
        self.runs_bytes += bytes;
        Ok(())
    }

    fn holds(&self, session: &str, order: u64, hash: &Hash, entry_id: &str) -> Result<bool, FleetError> {
        let snapshot = self.store.snapshot()?;
        let Some(guard) = snapshot.record(session, order)? else { return Ok(false) };
        let view = guard.view()?;
        Ok(view.hash() == *hash && view.entry_id() == entry_id)
    }

    /// Appends every waiting run: side by side, so the store's group commit writes runs of
    /// several sessions in one commit. On a refusal, appends that run's records one at a time
    /// to find the one refused, keeps those before it, and stops the session there.
    pub(crate) fn flush(&mut self, state: &mut State) -> Result<(), FleetError> {
        let runs: Vec<Run> = std::mem::take(&mut self.runs).into_values().collect();
        (self.runs_records, self.runs_bytes) = (0, 0);
        let store = self.store;
        // Each run's signatures are checked first; a run with a bad one is appended one record
        // at a time instead, up to that record (`one_by_one`).
        let appended: Vec<(Run, Result<(), AppendError>, bool)> = std::thread::scope(|scope| {
            let mut lanes: Vec<Vec<Run>> = (0..APPENDERS).map(|_| Vec::new()).collect();
            for (index, run) in runs.into_iter().enumerate() {
                lanes[index % APPENDERS].push(run);
            }
            let handles: Vec<_> = lanes
                .into_iter()
                .filter(|lane| !lane.is_empty())
                .map(|lane| {
                    scope.spawn(move || {
                        lane.into_iter()
                            .map(|run| {
                                let signed = run.records.iter().zip(&run.signed).all(|(record, signed)| {
                                    bad_signature(&run.session, record, signed.as_ref()).is_none()
                                });
                                if !signed {
                                    return (run, Ok(()), false);
                                }
                                // The signatures land in the commit that stores their records.
                                let rows = kept(&run.session, run.first, &run.signed);
                                let result = store.append_portable_noting(
                                    &run.session,
                                    None,
                                    run.records.clone(),
                                    rows,
                                );
                                (run, result.map(|_| ()), true)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|handle| handle.join().unwrap_or_default()).collect()
        });
        let mut failed = None;
        for (run, result, signatures_match) in appended {
            let Run { session, records, sequences, signed, first, bytes } = run;
            let count = records.len() as u64;
            match result {
                Ok(()) if !signatures_match => {
                    self.one_by_one(state, &session, records, sequences, signed)?
                }
                Ok(()) => {
                    let last_sequence = sequences.last().copied().unwrap_or_default();
                    self.applied(state, &session, first + count, last_sequence);
                    self.report.records += count;
                    self.report.bytes += bytes;
                }
                Err(err) if refused(&err) => self.one_by_one(state, &session, records, sequences, signed)?,
                Err(err) => failed = failed.or(Some(err)),
            }
        }
        failed.map_or(Ok(()), |err| Err(err.into()))
    }

    /// Appends the waiting run of `session` alone.
    fn flush_session(&mut self, state: &mut State, session: &str) -> Result<(), FleetError> {
        let Some(run) = self.runs.remove(session) else { return Ok(()) };
        self.runs_records -= run.records.len();
        self.runs_bytes -= run.bytes;
        let others = std::mem::take(&mut self.runs);
        self.runs.insert(session.to_owned(), run);
        let flushed = self.flush(state);
        self.runs = others;
        self.runs_records = self.runs.values().map(|run| run.records.len()).sum();
        self.runs_bytes = self.runs.values().map(|run| run.bytes).sum();
        flushed
    }

    fn one_by_one(
        &mut self,
        state: &mut State,
        session: &str,
        records: Vec<PortableRecord>,
        sequences: Vec<u64>,
        signed: Vec<Option<[u8; SIGNED_BYTES]>>,
    ) -> Result<(), FleetError> {
        for ((record, sequence), signed) in records.into_iter().zip(sequences).zip(signed) {
            let order = record.source_order.unwrap_or_default();
            if let Some(reason) = bad_signature(session, &record, signed.as_ref()) {
                return self.stop(state, session, sequence, &reason);
            }
            let rows = kept(session, order, &[signed]);
            match self.store.append_portable_noting(session, None, vec![record], rows) {
                Ok(_) => {
                    self.applied(state, session, order + 1, sequence);
                    self.report.records += 1;
                }
                Err(err) if refused(&err) => {
                    return self.stop(
                        state,
                        session,
                        sequence,
                        &format!("sourceOrder {order} does not apply: {err}"),
                    );
                }
                Err(err) => return Err(err.into()),
            }
        }
        Ok(())
    }

    fn applied(&mut self, state: &mut State, session: &str, len: u64, sequence: u64) {
        self.local.insert(session.to_owned(), Local { exists: true, len });
        state.set_sequence(session, sequence);
        state.set_published(session, len);
    }

    fn fork(
        &mut self,
        state: &mut State,
        session: &str,
        sequence: u64,
        parent: &str,
        at: u64,
        head: &Hash,
    ) -> Result<(), FleetError> {
        let local = self.local(session)?;
        if local.exists {
            let info = self.store.snapshot()?.session(session)?;
            let same =
                info.is_some_and(|info| info.parent.as_deref() == Some(parent) && info.fork_at == Some(at));
            if same {
                self.report.passed_over += 1;
                state.set_sequence(session, sequence);
                return Ok(());
            }
            let reason = format!("a fork of {parent:?} at {at}, but the session here is not that fork");
            return self.stop(state, session, sequence, &reason);
        }
        let parent_len = self.local(parent)?.len;
        // A parent stopped later than `at` still holds, verified, every record the fork reads.
        if parent_len < at {
            let reason = format!("a fork of {parent:?} at {at}, which holds {parent_len} records here");
            return self.stop(state, session, sequence, &reason);
        }
        let parent_head = if at == 0 {
            ZERO_HASH
        } else {
            let snapshot = self.store.snapshot()?;
            let guard = snapshot.record(parent, at - 1)?;
            match guard {
                Some(guard) => guard.view()?.hash(),
                None => ZERO_HASH,
            }
        };
        if parent_head != *head {
            let reason = format!("a fork of {parent:?} at {at} whose head does not match the record there");
            return self.stop(state, session, sequence, &reason);
        }
        self.store.fork(parent, at, session)?;
        self.report.forks += 1;
        self.applied(state, session, at, sequence);
        Ok(())
    }

    fn stop(
        &mut self,
        state: &mut State,
        session: &str,
        sequence: u64,
        reason: &str,
    ) -> Result<(), FleetError> {
        self.flush_session(state, session)?;
        if state.stopped.contains_key(session) {
            return Ok(());
        }
        let line = FleetError::Stopped { session: session.to_owned(), sequence, reason: reason.to_owned() }
            .to_string();
        state.stop(session, &line);
        self.report.stopped.push(line);
        Ok(())
    }
}

/// Where a message is, and who signed it.
pub(crate) struct Message<'a> {
    session: &'a str,
    sequence: u64,
    signed: Option<[u8; SIGNED_BYTES]>,
}

/// Whether the store refused the records themselves (they do not chain, or are malformed),
/// as opposed to failing to write.
fn refused(err: &AppendError) -> bool {
    err.kind() == annal_engine::ErrorKind::BadInput || err.kind() == annal_engine::ErrorKind::Conflict
}

/// A record message's JSON, which must say what its headers say.
fn parse_record(json: &[u8], order: u64, hash: &Hash) -> Result<PortableRecord, String> {
    let value: serde_json::Value =
        serde_json::from_slice(json).map_err(|_| "its payload is not JSON".to_owned())?;
    let portable = record_from_json(&value).map_err(|err| format!("not a record: {err}"))?;
    if portable.record.entry_id.is_empty() {
        return Err("a record without an entryId".into());
    }
    if portable.source_order != Some(order)
        || portable.hash.as_ref() != Some(hash)
        || portable.prev_hash.is_none()
    {
        return Err("its record's sourceOrder, hash or prevHash disagree with its headers".into());
    }
    Ok(portable)
}
