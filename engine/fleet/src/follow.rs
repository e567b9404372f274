//! Following a fleet: reading the stream from the store's cursor and applying each session's
//! records, verified against the chain, to the local store. A message that does not chain
//! stops its session (nothing after it is applied there); the other sessions go on.

use std::collections::HashMap;
use std::time::Duration;

use annal_engine::{record_from_json, AppendError, Hash, PortableRecord, Store, ZERO_HASH};
use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use futures_util::StreamExt as _;

use crate::client::Fleet;
use crate::error::FleetError;
use crate::state::State;
use crate::wire::{self, Incoming};

/// What to follow, and for how long.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FollowOptions {
    /// Only sessions whose names match this pattern (`*` any text, `?` one character).
    pub sessions: Option<String>,
    /// Keep following after catching up, until `stop` says so.
    pub watch: bool,
}

/// What one follow pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FollowReport {
    /// Records applied to the local store.
    pub records: u64,
    /// The bytes of their portable JSON.
    pub bytes: u64,
    /// Forks made.
    pub forks: u64,
    /// Messages passed over: already applied, or exact duplicates of what is held.
    pub passed_over: u64,
    /// Sessions that stopped in this pass, with the line that says why.
    pub stopped: Vec<String>,
    /// Messages on the stream that name no session, with the line that says so.
    pub foreign: Vec<String>,
    /// The last stream sequence handled.
    pub sequence: u64,
}

/// Per session, what the local store holds as the next pass sees it.
struct Local {
    exists: bool,
    len: u64,
}

/// Records of one session waiting to be appended together.
struct Run {
    session: String,
    records: Vec<PortableRecord>,
    /// The stream sequence of each record's message.
    sequences: Vec<u64>,
    first: u64,
    bytes: u64,
}

/// Size of a run: enough to amortise a commit, small enough to bound memory.
const RUN_RECORDS_MAX: usize = 2048;
const RUN_BYTES_MAX: u64 = 16 << 20;

/// Reads the stream from where `store` left off and applies what it holds. Returns when it
/// has caught up with the stream as it was when called (or, with `watch`, when `keep_going`
/// returns false, checked at least once a second).
///
/// # Errors
/// The stream cannot be read, or the local store cannot be written. Bad messages are not
/// errors: their sessions stop, and the report names them.
pub fn follow(
    fleet: &Fleet,
    store: &Store,
    options: &FollowOptions,
    keep_going: &dyn Fn() -> bool,
) -> Result<FollowReport, FleetError> {
    let mut state = State::load(store, &fleet.options().stream)?;
    let filter = fleet.stream_filter();
    // The follower's cursor covers every session: a pass that follows only some starts from
    // the beginning and leaves the cursor alone, passing over what each session already holds
    // by its own sequence, so a later pass over all sessions misses nothing.
    let partial = options.sessions.is_some();
    let start = if partial { 1 } else { state.followed + 1 };
    let mut pass = Pass::new(fleet, store, options.sessions.as_deref(), partial);
    fleet.block_on(async {
        let target = fleet.last_sequence().await?;
        pass.read(&mut state, &filter, start, target, options.watch, keep_going).await
    })?;
    Ok(pass.report)
}

/// Brings one session up to the fleet's last message of it, without moving the follower's
/// own cursor. Shared sessions use this before they append.
pub(crate) async fn catch_up(
    fleet: &Fleet,
    store: &Store,
    state: &mut State,
    session: &str,
) -> Result<FollowReport, FleetError> {
    let start = state.sequences.get(session).copied().unwrap_or(0) + 1;
    let mut pass = Pass::new(fleet, store, None, true);
    pass.only = Some(session.to_owned());
    let target = fleet.last(session).await?.map_or(0, |last| last.sequence);
    pass.read(state, &fleet.subject(session), start, target, false, &|| true).await?;
    Ok(pass.report)
}

struct Pass<'a> {
    fleet: &'a Fleet,
    store: &'a Store,
    pattern: Option<&'a str>,
    only: Option<String>,
    /// A pass over one session's subject leaves the follower's cursor alone.
    partial: bool,
    local: HashMap<String, Local>,
    run: Option<Run>,
    report: FollowReport,
}

impl<'a> Pass<'a> {
    fn new(fleet: &'a Fleet, store: &'a Store, pattern: Option<&'a str>, partial: bool) -> Pass<'a> {
        Pass {
            fleet,
            store,
            pattern,
            only: None,
            partial,
            local: HashMap::new(),
            run: None,
            report: FollowReport::default(),
        }
    }

    async fn read(
        &mut self,
        state: &mut State,
        filter: &str,
        start: u64,
        target: u64,
        watch: bool,
        keep_going: &dyn Fn() -> bool,
    ) -> Result<(), FleetError> {
        self.report.sequence = start.saturating_sub(1);
        if target < start && !watch {
            return Ok(());
        }
        let config = pull::OrderedConfig {
            filter_subject: filter.to_owned(),
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: start },
            ..Default::default()
        };
        let consumer =
            self.fleet.stream_handle().create_consumer(config).await.map_err(|err| {
                self.fleet.stream_error(format!("cannot read from sequence {start}: {err}"))
            })?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|err| self.fleet.stream_error(format!("cannot read: {err}")))?;
        let idle = Duration::from_millis(if watch { 1000 } else { 200 });
        let mut caught_up = target < start;
        loop {
            if caught_up && !watch {
                break;
            }
            if watch && !keep_going() {
                break;
            }
            let next = tokio::time::timeout(idle, messages.next()).await;
            let message = match next {
                Err(_) => {
                    // Nothing new: apply what waits. Not watching, a pass that filters sessions
                    // has read all there is for them (the messages up to the target that it
                    // did not see were others').
                    self.flush(state)?;
                    self.save(state)?;
                    if !watch && (self.pattern.is_some() || self.partial) {
                        break;
                    }
                    continue;
                }
                Ok(None) => break,
                Ok(Some(Err(err))) => {
                    return Err(self.fleet.stream_error(format!("reading the stream: {err}")))
                }
                Ok(Some(Ok(message))) => message,
            };
            let sequence = message.info().map_err(|err| self.fleet.stream_error(err))?.stream_sequence;
            self.take(
                state,
                sequence,
                message.subject.as_str(),
                message.headers.as_ref(),
                message.payload.clone(),
            )
            .await?;
            self.report.sequence = sequence;
            if !self.partial {
                state.set_followed(sequence);
            }
            if self
                .run
                .as_ref()
                .is_some_and(|run| run.records.len() >= RUN_RECORDS_MAX || run.bytes >= RUN_BYTES_MAX)
            {
                self.flush(state)?;
                self.save(state)?;
            }
            if sequence >= target {
                caught_up = true;
                self.flush(state)?;
                self.save(state)?;
            }
        }
        self.flush(state)?;
        self.save(state)
    }

    fn save(&mut self, state: &mut State) -> Result<(), FleetError> {
        state.save(self.store)
    }

    /// Handles one message: passes over it, stops its session, makes a fork, or adds its
    /// record to the run.
    async fn take(
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
        match incoming {
            Incoming::Fork { parent, at, head } => {
                self.flush(state)?;
                self.fork(state, &session, sequence, &parent, at, &head)
            }
            Incoming::Record { order, hash, json } => {
                self.record(state, &session, sequence, order, &hash, &json).await
            }
            Incoming::RecordRef { order, hash, object } => {
                let limit = self.store.options().limits.record_size_bytes_max.saturating_mul(4).max(1 << 20);
                match self.fleet.get_object(&object, limit).await {
                    Ok(json) => self.record(state, &session, sequence, order, &hash, &json).await,
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
        session: &str,
        sequence: u64,
        order: u64,
        hash: &Hash,
        json: &[u8],
    ) -> Result<(), FleetError> {
        let portable = match parse_record(json, order, hash) {
            Ok(portable) => portable,
            Err(reason) => return self.stop(state, session, sequence, &reason),
        };
        let pending =
            self.run.as_ref().filter(|run| run.session == session).map_or(0, |run| run.records.len() as u64);
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
        if self.run.as_ref().is_some_and(|run| run.session != session) {
            self.flush(state)?;
        }
        let bytes = json.len() as u64;
        let run = self.run.get_or_insert_with(|| Run {
            session: session.to_owned(),
            records: Vec::new(),
            sequences: Vec::new(),
            first: order,
            bytes: 0,
        });
        run.records.push(portable);
        run.sequences.push(sequence);
        run.bytes += bytes;
        Ok(())
    }

    fn holds(&self, session: &str, order: u64, hash: &Hash, entry_id: &str) -> Result<bool, FleetError> {
        let snapshot = self.store.snapshot()?;
        let Some(guard) = snapshot.record(session, order)? else { return Ok(false) };
        let view = guard.view()?;
        Ok(view.hash() == *hash && view.entry_id() == entry_id)
    }

    /// Appends the waiting run. On a refusal, appends its records one at a time to find the
    /// one refused, keeps those before it, and stops the session there.
    fn flush(&mut self, state: &mut State) -> Result<(), FleetError> {
        let Some(run) = self.run.take() else { return Ok(()) };
        let Run { session, records, sequences, first, bytes } = run;
        let count = records.len() as u64;
        let last_sequence = sequences.last().copied().unwrap_or_default();
        match self.store.append_portable(&session, None, records.clone()) {
            Ok(_) => {
                self.applied(state, &session, first + count, last_sequence);
                self.report.records += count;
                self.report.bytes += bytes;
                Ok(())
            }
            Err(err) if refused(&err) => self.one_by_one(state, &session, records, sequences),
            Err(err) => Err(err.into()),
        }
    }

    fn one_by_one(
        &mut self,
        state: &mut State,
        session: &str,
        records: Vec<PortableRecord>,
        sequences: Vec<u64>,
    ) -> Result<(), FleetError> {
        for (record, sequence) in records.into_iter().zip(sequences) {
            let order = record.source_order.unwrap_or_default();
            match self.store.append_portable(session, None, vec![record]) {
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
        if parent_len < at || state.stopped.contains_key(parent) {
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
        if self.run.as_ref().is_some_and(|run| run.session == session) {
            self.flush(state)?;
        }
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

/// Whether `name` matches `pattern`: `*` any text (also none), `?` one character.
pub(crate) fn glob(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n, mut star, mut mark) = (0, 0, None, 0);
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some(p);
            mark = n;
            p += 1;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            n = mark;
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("claude:*", "claude:abc"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "a日c"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*セッ*ン", "日本語のセッション"));
        assert!(!glob("codex:*", "claude:x"));
    }
}
