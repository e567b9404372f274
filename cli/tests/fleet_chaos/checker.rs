//! The checker over a run's whole history, once every fault is healed and every host has
//! published and followed: every acknowledged append is in its session exactly once at the
//! sourceOrder it was acknowledged at, or its writer was told it forked and it is in that fork;
//! no entryId twice in any session; every session verifies (its chain, so its sourceOrders,
//! gapless); every host holds the same chain as the fleet for each session it holds.

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
