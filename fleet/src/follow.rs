//! Following a fleet: reading the stream from the store's cursor and applying each session's
//! records, verified against the chain (and against the trusted keys, when the store trusts
//! any), to the local store. A message that does not chain, or is not signed as required,
//! stops its session (nothing after it is applied there); the other sessions go on.

use std::collections::HashMap;
use std::time::Duration;

use annal_engine::{PortableRecord, Store};
use futures_util::StreamExt as _;

use crate::client::Fleet;
use crate::error::FleetError;
use crate::sign::SIGNED_BYTES;
use crate::state::State;
use crate::trust::Trust;

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
    /// Sessions stopped by an earlier pass (that this pass followed), with the line that
    /// stopped them: nothing of them is applied until the stop is lifted.
    pub still_stopped: Vec<String>,
    /// The last stream sequence handled.
    pub sequence: u64,
}

/// Per session, what the local store holds as the next pass sees it.
pub(crate) struct Local {
    pub(crate) exists: bool,
    pub(crate) len: u64,
}

/// Records of one session waiting to be appended together.
pub(crate) struct Run {
    pub(crate) session: String,
    pub(crate) records: Vec<PortableRecord>,
    /// The stream sequence of each record's message.
    pub(crate) sequences: Vec<u64>,
    /// Each record's signer and signature, kept with it; none for an unsigned one.
    pub(crate) signed: Vec<Option<[u8; SIGNED_BYTES]>>,
    pub(crate) first: u64,
    pub(crate) bytes: u64,
}

/// What waits to be appended, over all sessions: enough to amortise the commits, small enough
/// to bound memory.
pub(crate) const RUN_RECORDS_MAX: usize = 8192;
pub(crate) const RUN_BYTES_MAX: u64 = 32 << 20;

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
    // The follower's cursor covers every session; a pass that follows only some keeps a
    // cursor of its own pattern, so a later pass over all sessions misses nothing it left out.
    let start = match &options.sessions {
        Some(pattern) => state.followed_by_pattern.get(pattern).copied().unwrap_or(0) + 1,
        None => state.followed + 1,
    };
    let mut pass = Pass::new(fleet, store, options.sessions.as_deref(), false)?;
    fleet.block_on(async {
        let target = fleet.last_sequence().await?;
        pass.read(&mut state, &filter, start, target, options.watch, keep_going).await
    })?;
    let mut report = pass.report;
    let stopped_now: std::collections::BTreeSet<&String> = report.stopped.iter().collect();
    report.still_stopped = state
        .stopped
        .iter()
        .filter(|(session, line)| {
            options.sessions.as_deref().is_none_or(|pattern| crate::pattern::glob(pattern, session))
                && !stopped_now.contains(line)
        })
        .map(|(_, line)| line.clone())
        .collect();
    Ok(report)
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
    let mut pass = Pass::new(fleet, store, None, true)?;
    pass.only = Some(session.to_owned());
    let target = fleet.last(session).await?.map_or(0, |last| last.sequence);
    let subject = fleet.subject(session);
    // A session's messages are interleaved with others': a short gap by stream sequence holds
    // at most that many of its messages, read one by one; a long one through a consumer.
    if target.saturating_sub(start) < CATCH_UP_GETS_MAX {
        pass.read_by_gets(state, &subject, start, target).await?;
    } else {
        pass.read(state, &subject, start, target, false, &|| true).await?;
    }
    Ok(pass.report)
}

/// The widest gap, in stream sequences, a catch-up reads message by message.
const CATCH_UP_GETS_MAX: u64 = 64;

pub(crate) struct Pass<'a> {
    pub(crate) fleet: &'a Fleet,
    pub(crate) store: &'a Store,
    pub(crate) pattern: Option<&'a str>,
    pub(crate) only: Option<String>,
    /// A pass over one session's subject leaves the follower's cursor alone.
    pub(crate) partial: bool,
    /// The keys whose records are applied, when the store trusts any.
    pub(crate) trust: Trust,
    pub(crate) local: HashMap<String, Local>,
    /// Each session's records waiting to be appended, and their totals.
    pub(crate) runs: std::collections::BTreeMap<String, Run>,
    pub(crate) runs_records: usize,
    pub(crate) runs_bytes: u64,
    pub(crate) report: FollowReport,
}

impl<'a> Pass<'a> {
    fn new(
        fleet: &'a Fleet,
        store: &'a Store,
        pattern: Option<&'a str>,
        partial: bool,
    ) -> Result<Pass<'a>, FleetError> {
        Ok(Pass {
            fleet,
            store,
            pattern,
            only: None,
            partial,
            trust: Trust::load(store)?,
            local: HashMap::new(),
            runs: std::collections::BTreeMap::new(),
            runs_records: 0,
            runs_bytes: 0,
            report: FollowReport::default(),
        })
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
        let mut messages = self.fleet.read_from(filter, start).await?;
        let idle = Duration::from_millis(if watch { 1000 } else { 200 });
        let mut caught_up = target < start;
        // When the consumer was first lost without a message since: re-reading gives up after
        // the options' timeout.
        let mut lost: Option<std::time::Instant> = None;
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
                // The consumer was lost (its server went away, an election): read again from
                // the message after the last one handled, as long as the servers answer.
                Ok(None) | Ok(Some(Err(_))) => {
                    let since = *lost.get_or_insert_with(std::time::Instant::now);
                    if since.elapsed() > self.fleet.options().timeout {
                        let from = self.report.sequence + 1;
                        return Err(self
                            .fleet
                            .stream_error(format!("reading from sequence {from}: lost again")));
                    }
                    self.flush(state)?;
                    self.save(state)?;
                    messages = self.fleet.read_from(filter, self.report.sequence + 1).await?;
                    continue;
                }
                Ok(Some(Ok(message))) => {
                    lost = None;
                    message
                }
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
            match (self.partial, self.pattern) {
                (true, _) => {}
                (false, Some(pattern)) => state.set_followed_pattern(pattern, sequence),
                (false, None) => state.set_followed(sequence),
            }
            if self.runs_records >= RUN_RECORDS_MAX || self.runs_bytes >= RUN_BYTES_MAX {
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

    /// Reads `subject` from `start` up to `target` one message at a time: no consumer is
    /// left behind on the servers. Only for partial passes (a session's catch-up).
    async fn read_by_gets(
        &mut self,
        state: &mut State,
        subject: &str,
        start: u64,
        target: u64,
    ) -> Result<(), FleetError> {
        self.report.sequence = start.saturating_sub(1);
        let mut from = start;
        while from <= target {
            let Some(message) = self.fleet.next_on(subject, from).await? else { break };
            let sequence = message.sequence;
            self.take(state, sequence, message.subject.as_str(), Some(&message.headers), message.payload)
                .await?;
            self.report.sequence = sequence;
            from = sequence + 1;
            if self.runs_records >= RUN_RECORDS_MAX || self.runs_bytes >= RUN_BYTES_MAX {
                self.flush(state)?;
                self.save(state)?;
            }
        }
        self.flush(state)?;
        self.save(state)
    }

    pub(crate) fn save(&mut self, state: &mut State) -> Result<(), FleetError> {
        state.save(self.store)
    }
}
