//! `status`: per session, what this store holds against what the fleet holds.

use annal_engine::Store;

use crate::client::Fleet;
use crate::error::FleetError;
use crate::pattern::glob;
use crate::state::State;

/// One session's standing against the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionStatus {
    /// The session.
    pub session: String,
    /// Records here.
    pub local: u64,
    /// Records on the fleet (0 when the fleet has none).
    pub fleet: u64,
    /// Records here the fleet lacks: what waits to be published.
    pub unpublished: u64,
    /// Records on the fleet this store lacks: how far following lags.
    pub lag: u64,
    /// Why following it stopped, if it did.
    pub stopped: Option<String>,
    /// Where this store's own records of it went instead: an offline or diverged fork.
    pub forked_to: Option<String>,
    /// Who signed the session's own records here (a fork's from its fork point): each signer
    /// by its trusted name, `this host`, or its public key's first 16 hex digits and `…`, with
    /// how many records it signed, most first.
    pub signers: Vec<(String, u64)>,
    /// The session's own records here that no signature is kept for: appended here and not
    /// yet published, or applied from an unsigned message (a writer older than signatures).
    pub unsigned: u64,
}

/// The standing of every session of `store` (or those matching `pattern`) and every session
/// of the fleet this store has followed or published.
///
/// # Errors
/// The stream cannot be asked or the store read.
pub fn status(fleet: &Fleet, store: &Store, pattern: Option<&str>) -> Result<Vec<SessionStatus>, FleetError> {
    let state = State::load(store, &fleet.options().stream)?;
    let snapshot = store.snapshot()?;
    let mut out = Vec::new();
    for info in snapshot.sessions()? {
        if pattern.is_some_and(|pattern| !glob(pattern, &info.name)) {
            continue;
        }
        // A session whose last message on the fleet is bad is listed with the reason.
        let (last, bad) = match fleet.block_on(fleet.last(&info.name)) {
            Err(err @ FleetError::Stopped { .. }) => (None, Some(err.to_string())),
            other => (other?, None),
        };
        let on_fleet = last.map_or(0, |last| last.next);
        let forked_to = state.offline.get(&info.name).or_else(|| state.diverged.get(&info.name)).cloned();
        let (signers, unsigned) = crate::trust::signers(store, &snapshot, &info.name)?;
        out.push(SessionStatus {
            local: info.len,
            fleet: on_fleet,
            unpublished: if forked_to.is_some() { 0 } else { info.len.saturating_sub(on_fleet) },
            lag: on_fleet.saturating_sub(info.len),
            stopped: state.stopped.get(&info.name).cloned().or(bad),
            forked_to,
            signers,
            unsigned,
            session: info.name,
        });
    }
    Ok(out)
}
