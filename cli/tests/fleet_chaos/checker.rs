//! The checker over a run's whole history, once every fault is healed and every host has
//! published and followed: every acknowledged append is in its session exactly once at the
//! sourceOrder it was acknowledged at, or its writer was told it forked and it is in that fork;
//! no entryId twice in any session; every session verifies (its chain, so its sourceOrders,
//! gapless); every host holds the same chain as the fleet for each session it holds; every
//! fork a writer was told of is, on the fleet, a fork of its session at the position its name
//! gives (the session's records before it, the writer's after); and every writer on a shared
//! session had appends acknowledged (none starved).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use annal_engine::{Store, StoreOptions};

use crate::history::{History, Operation, Outcome};

/// What the checker counted and found wrong.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) operations: usize,
    /// Appends to the shared sessions (the rest are the publisher's local appends).
    pub(crate) shared_appends: usize,
    pub(crate) acknowledged: usize,
    pub(crate) forked: usize,
    pub(crate) unknown: usize,
    pub(crate) conflicts: usize,
    pub(crate) lost: usize,
    pub(crate) duplicated: usize,
    pub(crate) violations: Vec<String>,
    /// Per writer of the shared sessions: appends tried, acknowledged, and lost to a conflict.
    pub(crate) shares: BTreeMap<String, (usize, usize, usize)>,
}

/// Every session's chain in the store at `path`: entryIds and hashes in sourceOrder.
pub(crate) fn chains(path: &Path) -> BTreeMap<String, Vec<(String, [u8; 32])>> {
    let store = Store::open(path, StoreOptions::default()).expect("a store to check");
    let snapshot = store.snapshot().expect("snapshot");
    let mut out = BTreeMap::new();
    for info in snapshot.sessions().expect("sessions") {
        let mut chain = Vec::new();
        for guard in snapshot.records(&info.name, 0..u64::MAX).expect("records") {
            let guard = guard.expect("record");
            let view = guard.view().expect("view");
            chain.push((view.entry_id().to_owned(), view.hash()));
        }
        out.insert(info.name, chain);
    }
    let problems = store.verify(None).expect("verify").problems;
    assert!(problems.is_empty(), "{}: verify: {problems:?}", path.display());
    out
}

/// Checks the history against the fleet's copy (`fleet`, a store that followed everything)
/// and each host's copy.
pub(crate) fn check(history: &History, fleet: &Path, hosts: &[(String, &Path)]) -> Verdict {
    let mut verdict = Verdict::default();
    let truth = chains(fleet);
    for failure in history.failures() {
        verdict.violations.push(failure);
    }
    for (session, chain) in &truth {
        let ids: BTreeSet<&String> = chain.iter().map(|(id, _)| id).collect();
        if ids.len() != chain.len() {
            verdict.duplicated += chain.len() - ids.len();
            verdict.violations.push(format!("session {session:?} holds an entryId twice"));
        }
    }
    for operation in history.operations() {
        verdict.operations += 1;
        check_operation(&operation, &truth, &mut verdict);
    }
    check_forks(history, &truth, &mut verdict);
    check_shares(history, &mut verdict);
    for (host, path) in hosts {
        for (session, chain) in chains(path) {
            match truth.get(&session) {
                Some(fleet_chain) if *fleet_chain == chain => {}
                Some(fleet_chain) => verdict.violations.push(format!(
                    "host {host}: session {session:?} holds {} records, the fleet {}, not the same chain",
                    chain.len(),
                    fleet_chain.len()
                )),
                None => {
                    verdict.violations.push(format!("host {host}: session {session:?} is not on the fleet"))
                }
            }
        }
    }
    verdict
}

fn check_operation(
    operation: &Operation,
    truth: &BTreeMap<String, Vec<(String, [u8; 32])>>,
    verdict: &mut Verdict,
) {
    let Operation { client, session, entry_id, outcome } = operation;
    if crate::workload::SHARED.contains(&session.as_str()) {
        verdict.shared_appends += 1;
    }
    let position =
        |session: &str| truth.get(session).and_then(|chain| chain.iter().position(|(id, _)| id == entry_id));
    match outcome {
        Outcome::Acknowledged(order) => {
            verdict.acknowledged += 1;
            match position(session) {
                Some(at) if at as u64 == *order => {}
                Some(at) => verdict.violations.push(format!(
                    "{client}: {entry_id} acknowledged at sourceOrder {order} of {session:?}, on the fleet at {at}"
                )),
                None => {
                    verdict.lost += 1;
                    verdict.violations.push(format!("{client}: acknowledged {entry_id} is not in {session:?}"));
                }
            }
        }
        Outcome::Forked(fork) => {
            verdict.forked += 1;
            if position(fork).is_none() {
                verdict
                    .violations
                    .push(format!("{client}: {entry_id}, told it forked, is not in fork {fork:?}"));
            }
            if position(session).is_some() {
                verdict.duplicated += 1;
                verdict
                    .violations
                    .push(format!("{client}: {entry_id} is in fork {fork:?} and in {session:?}"));
            }
        }
        Outcome::Conflict => verdict.conflicts += 1,
        Outcome::Unknown(_) => verdict.unknown += 1,
        Outcome::Failed(line) => verdict.violations.push(format!("{client}: {entry_id}: {line}")),
    }
}

/// Every fork a writer was told of, `<session>~<host>-<at>[.<n>]`: on the fleet it holds the
/// session's first `at` records, then only records of that writer's host.
fn check_forks(history: &History, truth: &BTreeMap<String, Vec<(String, [u8; 32])>>, verdict: &mut Verdict) {
    let mut told = BTreeSet::new();
    for operation in history.operations() {
        if let Outcome::Forked(fork) = &operation.outcome {
            told.insert((operation.session.clone(), fork.clone(), operation.client.clone()));
        }
    }
    for (session, fork, client) in told {
        let at = fork.rsplit_once('-').and_then(|(_, at)| at.split('.').next()?.parse::<usize>().ok());
        let (Some(at), Some(forked), Some(parent)) = (at, truth.get(&fork), truth.get(&session)) else {
            verdict
                .violations
                .push(format!("{client}: fork {fork:?} of {session:?} is not on the fleet as named"));
            continue;
        };
        if forked.len() < at || parent.len() < at || forked[..at] != parent[..at] {
            verdict
                .violations
                .push(format!("{client}: fork {fork:?} does not hold the first {at} records of {session:?}"));
        }
        if let Some((id, _)) = forked.iter().skip(at).find(|(id, _)| !id.starts_with(&format!("{client}-"))) {
            verdict.violations.push(format!("{client}: fork {fork:?} holds {id}, another writer's record"));
        }
    }
}

/// Each writer of a shared session got appends acknowledged: with fair retries a slow one (a
/// process per append) takes positions too.
fn check_shares(history: &History, verdict: &mut Verdict) {
    let mut tried: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for operation in history.operations() {
        if !crate::workload::SHARED.contains(&operation.session.as_str()) {
            continue;
        }
        let writer = operation.client.split('.').next().unwrap_or_default().to_owned();
        let entry = tried.entry(writer).or_default();
        entry.0 += 1;
        entry.1 += usize::from(matches!(operation.outcome, Outcome::Acknowledged(_)));
        entry.2 += usize::from(operation.outcome == Outcome::Conflict);
    }
    for (writer, (attempts, acknowledged, _)) in &tried {
        if *attempts >= 20 && *acknowledged == 0 {
            verdict.violations.push(format!("{writer}: starved, 0 of {attempts} appends acknowledged"));
        }
    }
    verdict.shares = tried;
}
