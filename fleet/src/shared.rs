//! Shared sessions: one session that several hosts append to through the fleet. An append
//! returns once a majority of the stream's replicas hold it, and the server checks the
//! session's position: of two writers racing for one position exactly one wins, and the other
//! gets the [`AppendError::Conflict`] a local store gives. The local store then holds the
//! winner's records, so the loser re-reads and decides again.
//!
//! When no server can be reached, appends go on locally, in a fork of the session named
//! `<session>~<host>-<at>` that is published as a fork when the fleet is back: never merged,
//! never dropped.

use annal_engine::{
    chain_records, portable_json, AppendError, AppendReceipt, PortableRecord, Record, Store, ZERO_HASH,
};

use crate::client::{race_pause, Fleet, Published};
use crate::error::FleetError;
use crate::follow::catch_up;
use crate::publish::publish_record;
use crate::sign::{HostKey, Signed};
use crate::state::State;
use crate::trust::signature_row;

/// What one try of an append carries from the tries before it, and learns.
#[derive(Debug)]
struct Try {
    /// Records the stream acknowledged in this try.
    sent: usize,
    /// The try before lost a race: publish at the fleet's head, without catching up first.
    at_head: bool,
    /// Some record of the batch may be on the stream already (sent before without an answer):
    /// catch up before publishing, and never at the fleet's head unread.
    maybe_stored: bool,
}

/// A session of the local store shared through a fleet.
#[derive(Debug)]
pub struct SharedSession<'a> {
    fleet: &'a Fleet,
    store: &'a Store,
    name: String,
    /// The store's host key, read at the first append.
    key: std::sync::OnceLock<HostKey>,
}

impl<'a> SharedSession<'a> {
    /// The session `name` of `store`, shared through `fleet`.
    pub fn new(fleet: &'a Fleet, store: &'a Store, name: &str) -> SharedSession<'a> {
        SharedSession { fleet, store, name: name.to_owned(), key: std::sync::OnceLock::new() }
    }

    fn key(&self) -> Result<&HostKey, FleetError> {
        if let Some(key) = self.key.get() {
            return Ok(key);
        }
        let key = HostKey::of(self.store)?;
        Ok(self.key.get_or_init(|| key))
    }

    /// Where appends go now: the session, or the fork its offline appends went to.
    ///
    /// # Errors
    /// The store's cursors cannot be read.
    pub fn writing_to(&self) -> Result<String, FleetError> {
        let state = State::load_session(self.store, &self.fleet.options().stream, &self.name)?;
        Ok(state.offline.get(&self.name).cloned().unwrap_or_else(|| self.name.clone()))
    }

    /// Brings the local session up to the fleet's version of it.
    ///
    /// # Errors
    /// The stream cannot be read or the store written; a message that does not chain stops
    /// the session ([`FleetError::Stopped`]).
    pub fn refresh(&self) -> Result<u64, FleetError> {
        let mut state = State::load_session(self.store, &self.fleet.options().stream, &self.name)?;
        let report = self.fleet.block_on(catch_up(self.fleet, self.store, &mut state, &self.name))?;
        self.check_stopped(&state)?;
        Ok(report.records)
    }

    fn check_stopped(&self, state: &State) -> Result<(), FleetError> {
        match state.stopped.get(&self.name) {
            Some(line) => Err(FleetError::StoppedEarlier(line.clone())),
            None => Ok(()),
        }
    }

    /// Appends `records` as the session's next ones: with `expected_next`, only if the
    /// session's next sourceOrder on the fleet is that value. Returns once the stream holds
    /// them (a majority of its replicas) and the local store has applied them. Retrying with
    /// the same entryIds after an error never duplicates.
    ///
    /// # Errors
    /// [`AppendError::Conflict`] (as [`FleetError::Append`]) when another writer took the
    /// expected position; [`FleetError::Contended`] when, without one, other writers took
    /// every position it tried for the whole timeout; invalid records as a local append gives them; [`FleetError::NotAcknowledged`]
    /// when a record was sent and no acknowledgement came back in time (the stream may hold
    /// it: retry with the same entryIds, which finds it); [`FleetError::Forked`] when the
    /// records went to this host's fork of the session instead (no server could be reached,
    /// now or at an earlier append): they are stored, but not in the session.
    pub fn append(
        &self,
        expected_next: Option<u64>,
        records: Vec<Record>,
    ) -> Result<AppendReceipt, FleetError> {
        let mut state = State::load_session(self.store, &self.fleet.options().stream, &self.name)?;
        if let Some(fork) = state.offline.get(&self.name).cloned() {
            let count = records.len();
            self.store.append(&fork, expected_next, records)?;
            return Err(FleetError::Forked { session: self.name.clone(), fork, records: count });
        }
        // Without an expected position the caller wants the records in the session wherever
        // they land: a lost race is tried again at the fleet's new head, after a short random
        // pause, until the timeout. A writer slower per try than the others (a process per
        // append, which connects and catches up first) would otherwise lose every race.
        let deadline = std::time::Instant::now() + self.fleet.options().timeout;
        let mut race = 0;
        let ids = || records.iter().map(|record| record.entry_id.clone());
        let doubted = |state: &State| {
            let doubted = state.doubt.get(&self.name);
            records.iter().any(|record| doubted.is_some_and(|ids| ids.contains(&record.entry_id)))
        };
        // Records sent before without an answer may be on the stream: until an append of them
        // succeeds, they are looked for there before every try, and never go to the offline
        // fork (they would be there twice).
        let mut maybe_stored = doubted(&state);
        loop {
            let mut attempt = Try { sent: 0, at_head: race > 0, maybe_stored };
            let outcome = self.fleet.block_on(self.append_async(
                &mut state,
                expected_next,
                records.clone(),
                &mut attempt,
            ));
            maybe_stored = attempt.maybe_stored || attempt.sent > 0;
            match &outcome {
                Ok(_) => state.set_doubt(&self.name, ids(), false),
                Err(_) if maybe_stored => state.set_doubt(&self.name, ids(), true),
                Err(FleetError::NotAcknowledged { .. }) => state.set_doubt(&self.name, ids(), true),
                Err(_) => {}
            }
            state.save(self.store)?;
            let in_doubt = doubted(&state);
            match outcome {
                // One try at the fleet's head even when the first try's catch-up took the whole
                // timeout (a new store reading a long session).
                Err(FleetError::Append(AppendError::Conflict { .. }))
                    if expected_next.is_none() && (race == 0 || std::time::Instant::now() < deadline) =>
                {
                    std::thread::sleep(race_pause(race));
                    race += 1;
                }
                // Only a batch of which the stream certainly took nothing goes to the offline
                // fork: one it took in part is finished by a retry with the same entryIds,
                // never split in two, and a record sent without an acknowledgement
                // (`NotAcknowledged`) may be on the stream: the retry finds it there (its
                // message id), where a fork would hold its entryId a second time.
                Err(FleetError::Unreachable { .. } | FleetError::Stream { .. })
                    if attempt.sent == 0 && !in_doubt && !self.any_published(&records)? =>
                {
                    let count = records.len();
                    self.append_offline(&mut state, expected_next, records)?;
                    let fork = state.offline.get(&self.name).cloned().unwrap_or_default();
                    return Err(FleetError::Forked { session: self.name.clone(), fork, records: count });
                }
                // Lost every race for the timeout: busy, not a conflict (no position asked).
                Err(FleetError::Append(AppendError::Conflict { .. })) if expected_next.is_none() => {
                    let timeout_ms = self.fleet.options().timeout.as_millis() as u64;
                    return Err(FleetError::Contended {
                        session: self.name.clone(),
                        tries: race + 1,
                        timeout_ms,
                    });
                }
                other => return other,
            }
        }
    }

    async fn append_async(
        &self,
        state: &mut State,
        expected_next: Option<u64>,
        records: Vec<Record>,
        attempt: &mut Try,
    ) -> Result<AppendReceipt, FleetError> {
        // The stream checks the position; the local store is read first only when the caller
        // expects another one than it holds, or when the batch may be on the stream already
        // (then it is found there, not sent again), so an append in step costs one round trip.
        let mut snapshot = self.store.snapshot()?;
        let held_len = snapshot.session(&self.name)?.map_or(0, |info| info.len);
        if attempt.maybe_stored || expected_next.is_some_and(|expected| expected != held_len) {
            catch_up(self.fleet, self.store, state, &self.name).await?;
            snapshot = self.store.snapshot()?;
        }
        self.check_stopped(state)?;
        let (len, head) = snapshot.session(&self.name)?.map_or((0, ZERO_HASH), |info| (info.len, info.head));
        // A retry of a batch the stream took in part or whole: what is held is not sent again.
        let mut held = 0;
        for record in &records {
            match snapshot.entry(&record.entry_id)? {
                Some(location) if location.session == self.name => held += 1,
                _ => break,
            }
        }
        let start = len - held.min(len);
        if let Some(expected) = expected_next {
            if expected != start {
                return Err(
                    AppendError::Conflict { session: self.name.clone(), expected, actual: len }.into()
                );
            }
        }
        let mut sequence = state.sequences.get(&self.name).copied().unwrap_or(0);
        // A retry after a lost race goes at the fleet's head as the stream has it now: one
        // round trip, where catching up first would give the other writers time to move on.
        // The records between this store's head and the fleet's are applied afterwards. Never
        // a batch that may be on the stream already: the head may be that very batch, which
        // would then follow itself, its entryIds twice in the session.
        let (mut len, mut head) = (len, head);
        let mut jumped = false;
        if attempt.at_head && !attempt.maybe_stored && expected_next.is_none() {
            if let Some(last) = self.fleet.last(&self.name).await? {
                // The head is a record of this batch: sent by a try this writer never heard
                // back from (a process killed mid-append, say). It is read, not sent again.
                let ours = last.entry_id().is_some_and(|id| records.iter().any(|r| r.entry_id == id));
                if ours {
                    attempt.maybe_stored = true;
                    return self.found_after_catch_up(state, expected_next, &records).await;
                }
                if last.sequence > sequence {
                    (len, head, sequence, jumped) = (last.next, last.head, last.sequence, true);
                }
            }
        }
        let fresh: Vec<Record> = records[held as usize..].to_vec();
        let chained = chain_records(&self.name, &head, fresh, self.store.options())?;
        let mut prev = head;
        let mut portable = Vec::with_capacity(chained.len());
        let mut signatures = Vec::with_capacity(chained.len());
        let key = self.key()?;
        for (index, (record, hash)) in chained.iter().enumerate() {
            let order = len + index as u64;
            let value = portable_json(record, order, hash, &prev);
            let json = serde_json::to_vec(&value).unwrap_or_default();
            let signed = key.sign(&Signed { kind: "record", session: &self.name, order, hash, parent: None });
            signatures.push(signature_row(&self.name, order, &signed));
            match publish_record(self.fleet, &self.name, order, hash, json, sequence, &signed).await? {
                Published::At(at) => {
                    sequence = at;
                    attempt.sent += 1;
                }
                Published::Lost { handed } => {
                    // Another writer took the position: bring its records here, then say so.
                    // Or this writer did, with a publish whose acknowledgement was lost: then
                    // the stream holds the whole batch, and the append is done. If the stream
                    // is not seen to hold it yet, it may still (sent, its answer lost): the
                    // next try looks for it again before it sends anything.
                    attempt.maybe_stored |= handed;
                    return self
                        .found_after_catch_up(state, Some(expected_next.unwrap_or(order)), &records)
                        .await;
                }
            }
            portable.push(PortableRecord {
                record: record.clone(),
                source_order: Some(order),
                hash: Some(*hash),
                prev_hash: Some(prev),
                id_seed: None,
            });
            prev = *hash;
        }
        if portable.is_empty() {
            return Ok(self.store.append(&self.name, None, records)?);
        }
        if jumped {
            // The stream holds the batch after records this store has not applied yet: they
            // come first, then the batch, both read back from the stream.
            catch_up(self.fleet, self.store, state, &self.name).await?;
            if self.all_held(&records)? {
                return Ok(self.store.append(&self.name, None, records)?);
            }
            return Err(self.fleet.stream_error(format!(
                "session {:?}: the records published at the fleet's head were not read back",
                self.name
            )));
        }
        // Applied with its claims (the store checks the chain it was published with), and the
        // cursors that say so in the same commit.
        state.set_sequence(&self.name, sequence);
        state.set_published(&self.name, len + portable.len() as u64);
        let mut noted = state.take_changes();
        noted.append(&mut signatures);
        let mut receipt = self.store.append_portable_noting(&self.name, None, portable, noted)?;
        let mut orders: Vec<u64> = (start..len).collect();
        orders.append(&mut receipt.source_orders);
        receipt.source_orders = orders;
        Ok(receipt)
    }

    /// Catches up, then: the batch is held (the stream had it), or another writer took the
    /// position (`expected`, else where the session is now): a conflict, tried again.
    async fn found_after_catch_up(
        &self,
        state: &mut State,
        expected: Option<u64>,
        records: &[Record],
    ) -> Result<AppendReceipt, FleetError> {
        catch_up(self.fleet, self.store, state, &self.name).await?;
        if self.all_held(records)? {
            return Ok(self.store.append(&self.name, None, records.to_vec())?);
        }
        let actual = self.store.snapshot()?.session(&self.name)?.map_or(0, |info| info.len);
        let expected = expected.unwrap_or(actual);
        Err(AppendError::Conflict { session: self.name.clone(), expected, actual }.into())
    }

    /// Whether the session here holds every record of `records` (a catch-up applied them).
    fn all_held(&self, records: &[Record]) -> Result<bool, FleetError> {
        let snapshot = self.store.snapshot()?;
        for record in records {
            if snapshot.entry(&record.entry_id)?.is_none_or(|location| location.session != self.name) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the stream took any record of `records` (the local store applied it).
    fn any_published(&self, records: &[Record]) -> Result<bool, FleetError> {
        let snapshot = self.store.snapshot()?;
        for record in records {
            if snapshot.entry(&record.entry_id)?.is_some_and(|location| location.session == self.name) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// No server answers: the records go to a local fork of the session, published later.
    fn append_offline(
        &self,
        state: &mut State,
        expected_next: Option<u64>,
        records: Vec<Record>,
    ) -> Result<AppendReceipt, FleetError> {
        let at = self.store.snapshot()?.session(&self.name)?.map_or(0, |info| info.len);
        if self.store.snapshot()?.session(&self.name)?.is_none() {
            self.store.append(&self.name, None, Vec::new())?;
        }
        let mut fork = format!("{}~{}-{at}", self.name, self.fleet.options().host);
        let mut suffix = 1;
        while self.store.snapshot()?.session(&fork)?.is_some() {
            suffix += 1;
            fork = format!("{}~{}-{at}.{suffix}", self.name, self.fleet.options().host);
        }
        if let Some(expected) = expected_next {
            if expected != at {
                return Err(AppendError::Conflict { session: self.name.clone(), expected, actual: at }.into());
            }
        }
        self.store.fork(&self.name, at, &fork)?;
        let receipt = self.store.append(&fork, Some(at), records)?;
        state.set_offline(&self.name, &fork);
        state.save(self.store)?;
        Ok(receipt)
    }
}
