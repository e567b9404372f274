//! What a store keeps of a fleet, as cursors beside its journal (`fleet:<stream>:...`): how far
//! it followed the stream, each session's last stream sequence here, how much of each session
//! the fleet holds, which sessions stopped and why, where a shared session's offline appends
//! went, and which of its records were sent without an acknowledgement. Hints, not truth: every value is checked against the stream or the journal
//! before it is relied on, and losing one costs a re-read.

use std::collections::{BTreeMap, BTreeSet};

use annal_engine::Store;

use crate::error::FleetError;

/// The cursors of one stream in one store.
#[derive(Debug, Default)]
pub(crate) struct State {
    stream: String,
    /// The last stream sequence the follower handled.
    pub(crate) followed: u64,
    /// Per session pattern: the last stream sequence a follower of only those sessions handled.
    pub(crate) followed_by_pattern: BTreeMap<String, u64>,
    /// Per session: the stream sequence of its last message applied or published here.
    pub(crate) sequences: BTreeMap<String, u64>,
    /// Per session: how many of its records the fleet holds, as far as this store knows.
    pub(crate) published: BTreeMap<String, u64>,
    /// Per session: why following it stopped.
    pub(crate) stopped: BTreeMap<String, String>,
    /// Per shared session: the local fork its offline appends went to.
    pub(crate) offline: BTreeMap<String, String>,
    /// Per session whose records here diverged from the fleet's: the fleet fork they were
    /// published as.
    pub(crate) diverged: BTreeMap<String, String>,
    /// Per shared session: entryIds sent without an acknowledgement, which the stream may
    /// hold, until an append of them succeeds.
    pub(crate) doubt: BTreeMap<String, BTreeSet<String>>,
    changed: Vec<(String, Option<Vec<u8>>)>,
}

const FOLLOWED: &str = "followed";
const FOLLOWED_PATTERN: &str = "followed-pattern:";
const SEQUENCE: &str = "seq:";
const PUBLISHED: &str = "published:";
const STOPPED: &str = "stopped:";
const OFFLINE: &str = "offline:";
const DIVERGED: &str = "diverged:";
const DOUBT: &str = "doubt:";

fn u64_of(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

impl State {
    /// Reads the cursors of `stream` from `store`.
    pub(crate) fn load(store: &Store, stream: &str) -> Result<State, FleetError> {
        let prefix = format!("fleet:{stream}:");
        let mut state = State { stream: stream.to_owned(), ..State::default() };
        state.read(store.cursors(&prefix)?, &prefix);
        Ok(state)
    }

    /// Reads the cursors of `stream` that concern `session` alone: what a shared append
    /// needs, read in time independent of how many sessions the store holds.
    pub(crate) fn load_session(store: &Store, stream: &str, session: &str) -> Result<State, FleetError> {
        let prefix = format!("fleet:{stream}:");
        let mut state = State { stream: stream.to_owned(), ..State::default() };
        for key in [SEQUENCE, PUBLISHED, STOPPED, OFFLINE, DIVERGED, DOUBT] {
            let name = format!("{prefix}{key}{session}");
            let rows = store.cursors(&name)?.into_iter().filter(|(found, _)| *found == name).collect();
            state.read(rows, &prefix);
        }
        Ok(state)
    }

    fn read(&mut self, rows: Vec<(String, Vec<u8>)>, prefix: &str) {
        let state = self;
        for (name, value) in rows {
            let key = &name[prefix.len()..];
            let text = || String::from_utf8_lossy(&value).into_owned();
            if key == FOLLOWED {
                state.followed = u64_of(&value).unwrap_or(0);
            } else if let Some(pattern) = key.strip_prefix(FOLLOWED_PATTERN) {
                if let Some(sequence) = u64_of(&value) {
                    state.followed_by_pattern.insert(pattern.to_owned(), sequence);
                }
            } else if let Some(session) = key.strip_prefix(SEQUENCE) {
                if let Some(sequence) = u64_of(&value) {
                    state.sequences.insert(session.to_owned(), sequence);
                }
            } else if let Some(session) = key.strip_prefix(PUBLISHED) {
                if let Some(len) = u64_of(&value) {
                    state.published.insert(session.to_owned(), len);
                }
            } else if let Some(session) = key.strip_prefix(STOPPED) {
                state.stopped.insert(session.to_owned(), text());
            } else if let Some(session) = key.strip_prefix(OFFLINE) {
                state.offline.insert(session.to_owned(), text());
            } else if let Some(session) = key.strip_prefix(DOUBT) {
                let ids = text().lines().map(str::to_owned).collect();
                state.doubt.insert(session.to_owned(), ids);
            } else if let Some(session) = key.strip_prefix(DIVERGED) {
                state.diverged.insert(session.to_owned(), text());
            }
        }
    }

    fn name(&self, key: &str, session: &str) -> String {
        format!("fleet:{}:{key}{session}", self.stream)
    }

    pub(crate) fn set_followed(&mut self, sequence: u64) {
        if sequence > self.followed {
            self.followed = sequence;
            let name = self.name(FOLLOWED, "");
            self.changed.push((name, Some(sequence.to_le_bytes().to_vec())));
        }
    }

    /// Records how far a follower of only the sessions `pattern` matches has read.
    pub(crate) fn set_followed_pattern(&mut self, pattern: &str, sequence: u64) {
        if self.followed_by_pattern.get(pattern).is_some_and(|&old| old >= sequence) {
            return;
        }
        self.followed_by_pattern.insert(pattern.to_owned(), sequence);
        let name = self.name(FOLLOWED_PATTERN, pattern);
        self.changed.push((name, Some(sequence.to_le_bytes().to_vec())));
    }

    pub(crate) fn set_sequence(&mut self, session: &str, sequence: u64) {
        if self.sequences.get(session).is_some_and(|&old| old >= sequence) {
            return;
        }
        self.sequences.insert(session.to_owned(), sequence);
        let name = self.name(SEQUENCE, session);
        self.changed.push((name, Some(sequence.to_le_bytes().to_vec())));
    }

    pub(crate) fn set_published(&mut self, session: &str, len: u64) {
        if self.published.get(session) == Some(&len) {
            return;
        }
        self.published.insert(session.to_owned(), len);
        let name = self.name(PUBLISHED, session);
        self.changed.push((name, Some(len.to_le_bytes().to_vec())));
    }

    pub(crate) fn stop(&mut self, session: &str, reason: &str) {
        self.stopped.insert(session.to_owned(), reason.to_owned());
        let name = self.name(STOPPED, session);
        self.changed.push((name, Some(reason.as_bytes().to_vec())));
    }

    pub(crate) fn set_offline(&mut self, session: &str, fork: &str) {
        self.offline.insert(session.to_owned(), fork.to_owned());
        let name = self.name(OFFLINE, session);
        self.changed.push((name, Some(fork.as_bytes().to_vec())));
    }

    pub(crate) fn set_diverged(&mut self, session: &str, fork: &str) {
        self.diverged.insert(session.to_owned(), fork.to_owned());
        let name = self.name(DIVERGED, session);
        self.changed.push((name, Some(fork.as_bytes().to_vec())));
    }

    /// Marks `ids` of `session` as sent without an acknowledgement (`true`), or resolved.
    pub(crate) fn set_doubt(&mut self, session: &str, ids: impl Iterator<Item = String>, doubt: bool) {
        let held = self.doubt.entry(session.to_owned()).or_default();
        let mut changed = false;
        for id in ids {
            changed |= if doubt { held.insert(id) } else { held.remove(&id) };
        }
        if !changed {
            return;
        }
        let value =
            (!held.is_empty()).then(|| held.iter().cloned().collect::<Vec<_>>().join("\n").into_bytes());
        let name = self.name(DOUBT, session);
        self.changed.push((name, value));
    }

    /// Notes a row of the store's cursor table outside this stream's names (a kept signature),
    /// written with the next save.
    pub(crate) fn note(&mut self, row: (String, Option<Vec<u8>>)) {
        self.changed.push(row);
    }

    /// Writes what changed since the last save, in one transaction.
    pub(crate) fn save(&mut self, store: &Store) -> Result<(), FleetError> {
        let rows = self.take_changes();
        if !rows.is_empty() {
            store.put_cursors(rows)?;
        }
        Ok(())
    }

    /// What changed since the last save, for a caller that writes it with an append (one
    /// commit instead of two); if that append fails, the changes are not written, which costs
    /// a re-read later, never a record.
    pub(crate) fn take_changes(&mut self) -> Vec<(String, Option<Vec<u8>>)> {
        // Later writes of a name replace earlier ones: keep the last of each.
        let mut rows: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        for (name, value) in self.changed.drain(..) {
            rows.insert(name, value);
        }
        rows.into_iter().collect()
    }
}
