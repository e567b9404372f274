//! Publishing: every committed record of a store's sessions onto the fleet's stream, in
//! order, each exactly once. Where the fleet already holds a session, publishing resumes after
//! the fleet's last record of it; where the fleet's version differs, the records here become a
//! named fork of it at the point they diverge. Nothing is merged and nothing is dropped.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Duration;

use annal_engine::{hash_to_hex, record_to_json, Hash, SessionInfo, Snapshot, Store, ZERO_HASH};
use futures_util::StreamExt as _;

use crate::client::{Fleet, Published};
use crate::error::FleetError;
use crate::pattern::glob;
use crate::sign::{self, HostKey, Signed, SIGNED_BYTES};
use crate::state::State;
use crate::trust::signature_row;
use crate::wire;

/// Which sessions to publish, and for how long.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PublishOptions {
    /// Only sessions whose names match this pattern (`*` any text, `?` one character).
    pub sessions: Option<String>,
}

/// What one publish pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublishReport {
    /// Records the stream took.
    pub records: u64,
    /// The bytes of their portable JSON.
    pub bytes: u64,
    /// Fork messages published.
    pub forks: u64,
    /// Sessions looked at.
    pub sessions: u64,
    /// Lines naming sessions whose records here became a fork of the fleet's version.
    pub diverged: Vec<String>,
    /// Lines naming sessions left for the next pass (another writer moved them meanwhile).
    pub deferred: Vec<String>,
    /// Lines naming sessions not published because the fleet's last message of them is not
    /// annal's (a bad or foreign message): the other sessions were published.
    pub stopped: Vec<String>,
}

/// Publishes what the fleet lacks of `store`'s sessions, and returns when the stream holds it.
///
/// # Errors
/// The servers cannot be reached or do not acknowledge in time, or the store cannot be read.
/// What was acknowledged before the error stays published, and the next call resumes after it.
pub fn publish(fleet: &Fleet, store: &Store, options: &PublishOptions) -> Result<PublishReport, FleetError> {
    let state = RefCell::new(State::load(store, &fleet.options().stream)?);
    let report = RefCell::new(PublishReport::default());
    let key = HostKey::of(store)?;
    let snapshot = store.snapshot()?;
    let publisher = Publisher { fleet, snapshot: &snapshot, state: &state, report: &report, key: &key };
    let result = fleet.block_on(async {
        // Sessions are published side by side, a fork only after the level of its parent, so
        // a follower never meets a fork before the parent records it starts from.
        for level in levels(snapshot.sessions()?) {
            let chosen: Vec<SessionInfo> = level
                .into_iter()
                .filter(|info| options.sessions.as_deref().is_none_or(|pattern| glob(pattern, &info.name)))
                .collect();
            report.borrow_mut().sessions += chosen.len() as u64;
            let waiting =
                chosen.iter().filter(|info| state.borrow().published.get(&info.name) != Some(&info.len));
            let mut running = futures_util::stream::iter(waiting.map(|info| publisher.session(info)))
                .buffer_unordered(SESSIONS_IN_FLIGHT);
            while let Some(published) = running.next().await {
                published?;
            }
        }
        Ok::<(), FleetError>(())
    });
    // What the stream acknowledged is recorded even when a later session failed.
    state.into_inner().save(store)?;
    result.map(|()| report.into_inner())
}

/// Sessions published at once: each waits for its own acknowledgements one at a time (each
/// message is checked against the one before it), so throughput comes from sessions side by
/// side. 64 published 117 sessions of 500 records in 8.0–9.1 s where 16 took 10.0–11.4 s
/// (3-replica stream on loopback, docs/performance.md, "Fleet").
const SESSIONS_IN_FLIGHT: usize = 64;

/// The sessions in levels: those that fork no listed session, then forks of those, and so on.
fn levels(sessions: Vec<SessionInfo>) -> Vec<Vec<SessionInfo>> {
    let names: BTreeSet<String> = sessions.iter().map(|info| info.name.clone()).collect();
    let mut depth: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut out: Vec<Vec<SessionInfo>> = Vec::new();
    for info in parents_first(sessions) {
        let level = match info.parent.as_ref().filter(|parent| names.contains(*parent)) {
            Some(parent) => depth.get(parent).map_or(0, |d| d + 1),
            None => 0,
        };
        depth.insert(info.name.clone(), level);
        if out.len() <= level {
            out.resize_with(level + 1, Vec::new);
        }
        out[level].push(info);
    }
    out
}

/// Sessions with every fork after the session it forks.
fn parents_first(sessions: Vec<SessionInfo>) -> Vec<SessionInfo> {
    let mut done = BTreeSet::new();
    let mut out = Vec::with_capacity(sessions.len());
    let mut rest = sessions;
    while !rest.is_empty() {
        let before = rest.len();
        let (ready, waiting): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|info| info.parent.as_ref().is_none_or(|parent| done.contains(parent)));
        for info in ready {
            done.insert(info.name.clone());
            out.push(info);
        }
        rest = waiting;
        if rest.len() == before {
            // A parent that is not listed: publish the rest anyway, the follower will say.
            out.append(&mut rest);
        }
    }
    out
}

/// One publish pass: what every session's publishing shares.
struct Publisher<'a> {
    fleet: &'a Fleet,
    snapshot: &'a Snapshot,
    state: &'a RefCell<State>,
    report: &'a RefCell<PublishReport>,
    key: &'a HostKey,
}

impl Publisher<'_> {
    async fn session(&self, info: &SessionInfo) -> Result<(), FleetError> {
        let local = info.name.as_str();
        let diverged = self.state.borrow().diverged.get(local).cloned();
        if let Some(fork) = diverged {
            let at = fork_point(&fork).unwrap_or(0);
            return self.publish_as(&fork, local, Some((local, at)), info.len).await;
        }
        let from_parent = info.parent.as_deref().zip(info.fork_at);
        self.publish_as(local, local, from_parent, info.len).await
    }

    /// Publishes fleet session `name`, whose records are local session `local`'s (its first
    /// ones a fork of `fork.0` at `fork.1`), up to `len`.
    async fn publish_as(
        &self,
        name: &str,
        local: &str,
        fork: Option<(&str, u64)>,
        len: u64,
    ) -> Result<(), FleetError> {
        let (fleet, snapshot, state, report) = (self.fleet, self.snapshot, self.state, self.report);
        let last = match fleet.last(name).await {
            // One session's bad message stops that session's publishing only.
            Err(err @ FleetError::Stopped { .. }) => {
                report.borrow_mut().stopped.push(err.to_string());
                return Ok(());
            }
            other => other?,
        };
        let (mut next, mut sequence) = match last {
            Some(last) => {
                if last.next > len {
                    // The fleet holds more than this store: the follower brings it here, unless
                    // what this store holds differs from the fleet's first records.
                    if len > 0 && divergence(fleet, snapshot, local, len).await? < len {
                        return self.diverge(name, len).await;
                    }
                    return Ok(());
                }
                if last.next > 0 && local_hash(snapshot, local, last.next - 1)? != last.head {
                    return self.diverge(name, len).await;
                }
                (last.next, last.sequence)
            }
            None => match fork {
                Some((parent, at)) => {
                    let head = if at == 0 { ZERO_HASH } else { local_hash(snapshot, local, at - 1)? };
                    let mut headers = wire::headers("fork", name, at, &head);
                    let what =
                        Signed { kind: "fork", session: name, order: at, hash: &head, parent: Some(parent) };
                    sign::add_headers(&mut headers, &self.key.sign(&what));
                    match fleet.publish(headers, name, wire::fork_payload(parent, at, &head), Some(0)).await?
                    {
                        Published::At(sequence) => {
                            report.borrow_mut().forks += 1;
                            (at, sequence)
                        }
                        Published::Lost { .. } => return defer(name, report),
                    }
                }
                None => (0, 0),
            },
        };
        for guard in snapshot.records(local, next..len)? {
            let guard = guard?;
            let view = guard.view()?;
            let json = serde_json::to_vec(&record_to_json(snapshot, &view)?).unwrap_or_default();
            let hash = view.hash();
            let bytes = json.len() as u64;
            let limit = fleet.options().object_bytes_max;
            if json.len() > limit {
                // Followers would refuse it: the session's publishing stops before it, one line.
                report.borrow_mut().stopped.push(format!(
                    "session {name:?}: record {next} is {bytes} bytes of JSON, over the fleet's object limit of {limit}; not published, nor anything after it"
                ));
                let mut state = state.borrow_mut();
                state.set_sequence(name, sequence);
                return Ok(());
            }
            let signed = self.key.sign(&Signed {
                kind: "record",
                session: name,
                order: next,
                hash: &hash,
                parent: None,
            });
            match publish_record(fleet, name, next, &hash, json, sequence, &signed).await? {
                Published::At(at) => sequence = at,
                Published::Lost { .. } => {
                    state.borrow_mut().set_sequence(name, sequence);
                    return defer(name, report);
                }
            }
            // This store keeps its own signature of the records it published under their own
            // name (a diverged fork's records are kept here under another).
            if name == local {
                state.borrow_mut().note(signature_row(name, next, &signed));
            }
            let mut report = report.borrow_mut();
            report.records += 1;
            report.bytes += bytes;
            next += 1;
        }
        let mut state = state.borrow_mut();
        state.set_sequence(name, sequence);
        state.set_published(local, len);
        Ok(())
    }

    /// The fleet's version of `name` differs from this store's: finds where, and publishes the
    /// records here from that point as the fork `<name>~<host>-<at>`.
    async fn diverge(&self, name: &str, len: u64) -> Result<(), FleetError> {
        let at = divergence(self.fleet, self.snapshot, name, len).await?;
        let fork = format!("{name}~{}-{at}", self.fleet.options().host);
        self.state.borrow_mut().set_diverged(name, &fork);
        self.report.borrow_mut().diverged.push(format!(
            "session {name:?}: the fleet's version differs from record {at} on; the records here from there are fork {fork:?}"
        ));
        Box::pin(self.publish_as(&fork, name, Some((name, at)), len)).await
    }
}

/// The fork point in the name of a fork made by divergence (`<session>~<host>-<at>`).
fn fork_point(fork: &str) -> Option<u64> {
    fork.rsplit_once('-')?.1.parse().ok()
}

fn defer(name: &str, report: &RefCell<PublishReport>) -> Result<(), FleetError> {
    report.borrow_mut().deferred.push(format!(
        "session {name:?}: another writer moved it on the fleet while publishing; left for the next pass"
    ));
    Ok(())
}

/// Publishes one record's JSON, signed (`signed`: the signer's key and signature), as the
/// message after stream sequence `expected` of `session`, through the object store when it is
/// too large for a message.
pub(crate) async fn publish_record(
    fleet: &Fleet,
    session: &str,
    order: u64,
    hash: &Hash,
    json: Vec<u8>,
    expected: u64,
    signed: &[u8; SIGNED_BYTES],
) -> Result<Published, FleetError> {
    if json.len() <= fleet.inline_bytes_max() {
        let mut headers = wire::headers("record", session, order, hash);
        sign::add_headers(&mut headers, signed);
        return fleet.publish(headers, session, json.into(), Some(expected)).await;
    }
    let object = format!("{}/{}", &fleet.subject(session), hash_to_hex(hash));
    fleet.put_object(&object, &json).await?;
    let mut headers = wire::headers("record-ref", session, order, hash);
    sign::add_headers(&mut headers, signed);
    fleet.publish(headers, session, wire::ref_payload(&object, json.len(), hash), Some(expected)).await
}

fn local_hash(snapshot: &Snapshot, session: &str, order: u64) -> Result<Hash, FleetError> {
    match snapshot.record(session, order)? {
        Some(guard) => Ok(guard.view()?.hash()),
        None => Ok(ZERO_HASH),
    }
}

/// The first sourceOrder at which the fleet's records of `name` differ from this store's.
async fn divergence(fleet: &Fleet, snapshot: &Snapshot, name: &str, len: u64) -> Result<u64, FleetError> {
    let mut messages = fleet.read_from(&fleet.subject(name), 1).await?;
    let mut at = 0;
    while at < len {
        let next = tokio::time::timeout(Duration::from_secs(2), messages.next()).await;
        let Ok(Some(Ok(message))) = next else { break };
        match wire::decode(name, message.headers.as_ref(), message.payload.clone()) {
            Ok(
                wire::Incoming::Record { order, hash, .. } | wire::Incoming::RecordRef { order, hash, .. },
            ) => {
                if order != at || local_hash(snapshot, name, order)? != hash {
                    break;
                }
                at += 1;
            }
            Ok(wire::Incoming::Fork { at: fork_at, head, .. }) => {
                if fork_at == 0 || local_hash(snapshot, name, fork_at - 1)? == head {
                    at = fork_at;
                } else {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    Ok(at)
}
