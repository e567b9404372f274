//! The claim protocol of compactions: who may work on a checkpoint key, and whose commit counts.
//!
//! A compaction claims its key before doing any work (a summarizer call may take minutes). A
//! claim has an owner, a fencing token and a lease deadline:
//!
//! - nobody else may claim a key before its lease expires (no claim stealing);
//! - a claim after expiry takes over and increments the token;
//! - a commit succeeds only with the current owner and token, so an owner that was taken over
//!   is fenced off and never commits; and a committed key is never claimed again (it is
//!   reused).
//!
//! The transitions are pure functions (`claim`, `commit`, `release`). Two places apply them
//! atomically: [`ClaimRegistry`], in memory behind a mutex of the sync shim (what loom model-
//! checks, and the in-process fast path), and the `claims` table, inside the writer's redb write
//! transactions (durable, and atomic across processes because redb serialises write
//! transactions). Both run the same functions on the same state, so the interleavings loom
//! proves safe for the registry are exactly those the table can see.

use std::collections::BTreeMap;

use crate::hash::Hash;
use crate::sync::{lock, Mutex};

/// Who holds a claim: random per compaction attempt.
pub(crate) type Owner = [u8; 16];

/// A held claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    pub(crate) owner: Owner,
    /// Incremented by every takeover; a commit must present the current one.
    pub(crate) token: u64,
    /// Milliseconds since the Unix epoch after which others may take over (0: released).
    pub(crate) until_ms: u64,
}

/// The outcome of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// The caller holds the key now, with this token.
    Granted(Claim),
    /// Someone else holds it until its lease expires.
    Held(Claim),
    /// A checkpoint for the key is committed: reuse it.
    Committed,
}

/// Why a commit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The caller is not the current owner with this token (taken over, or released).
    Fenced { current: Option<u64> },
    /// Someone else committed the key.
    Committed,
}

/// The claim transition: grants a free, expired or own key; refuses a key held by another.
pub(crate) fn claim(
    committed: bool,
    current: Option<Claim>,
    owner: Owner,
    now_ms: u64,
    lease_ms: u64,
) -> Attempt {
    if committed {
        return Attempt::Committed;
    }
    let until_ms = now_ms.saturating_add(lease_ms);
    match current {
        Some(held) if held.owner != owner && now_ms < held.until_ms => Attempt::Held(held),
        Some(held) => Attempt::Granted(Claim { owner, token: held.token + 1, until_ms }),
        None => Attempt::Granted(Claim { owner, token: 1, until_ms }),
    }
}

/// The commit check: only the current owner with the current token commits. A lease that ran
/// out without a takeover still commits: the token, not the clock, decides.
pub(crate) fn commit(
    committed: bool,
    current: Option<Claim>,
    owner: Owner,
    token: u64,
) -> Result<(), Refusal> {
    if committed {
        return Err(Refusal::Committed);
    }
    match current {
        Some(held) if held.owner == owner && held.token == token => Ok(()),
        other => Err(Refusal::Fenced { current: other.map(|c| c.token) }),
    }
}

/// The owner of a released claim: nobody, so no commit matches it.
pub(crate) const RELEASED: Owner = [0; 16];

/// The release transition: an owner gives up its claim (work failed). Nobody owns it after,
/// so the releaser can no longer commit, and the token is kept so the next claim still
/// increments it.
pub(crate) fn release(current: Option<Claim>, owner: Owner, token: u64) -> Option<Claim> {
    match current {
        Some(held) if held.owner == owner && held.token == token => {
            Some(Claim { owner: RELEASED, until_ms: 0, token: held.token })
        }
        other => other,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Claimed(Claim),
    Committed,
}

/// The claims of one process, in memory: the model loom checks and the fast path that keeps
/// two threads of one process from both going to disk for the same key.
#[derive(Debug, Default)]
pub(crate) struct ClaimRegistry {
    entries: Mutex<BTreeMap<Hash, Entry>>,
}

impl crate::store::Store {
    /// This process's compaction claims on the store: the fast path in front of the durable
    /// claims table.
    pub(crate) fn claims(&self) -> std::sync::Arc<ClaimRegistry> {
        self.extension()
    }
}

impl ClaimRegistry {
    fn parts(entry: Option<&Entry>) -> (bool, Option<Claim>) {
        match entry {
            Some(Entry::Committed) => (true, None),
            Some(Entry::Claimed(claim)) => (false, Some(*claim)),
            None => (false, None),
        }
    }

    /// Applies [`claim`] atomically.
    pub(crate) fn claim(&self, key: Hash, owner: Owner, now_ms: u64, lease_ms: u64) -> Attempt {
        let mut entries = lock(&self.entries);
        let (committed, current) = Self::parts(entries.get(&key));
        let attempt = claim(committed, current, owner, now_ms, lease_ms);
        if let Attempt::Granted(granted) = attempt {
            entries.insert(key, Entry::Claimed(granted));
        }
        attempt
    }

    /// Applies [`commit`] atomically; on success the key is committed for good.
    pub(crate) fn commit(&self, key: Hash, owner: Owner, token: u64) -> Result<(), Refusal> {
        let mut entries = lock(&self.entries);
        let (committed, current) = Self::parts(entries.get(&key));
        commit(committed, current, owner, token)?;
        entries.insert(key, Entry::Committed);
        Ok(())
    }

    /// Applies [`release`] atomically.
    pub(crate) fn release(&self, key: Hash, owner: Owner, token: u64) {
        let mut entries = lock(&self.entries);
        if let (false, current @ Some(_)) = Self::parts(entries.get(&key)) {
            if let Some(released) = release(current, owner, token) {
                entries.insert(key, Entry::Claimed(released));
            }
        }
    }

    /// Records that the durable table found the key committed (by another process).
    pub(crate) fn mark_committed(&self, key: Hash) {
        lock(&self.entries).insert(key, Entry::Committed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const A: Owner = [1; 16];
    const B: Owner = [2; 16];
    const KEY: Hash = [7; 32];

    #[test]
    fn no_claim_before_the_lease_expires() {
        let registry = ClaimRegistry::default();
        let Attempt::Granted(a) = registry.claim(KEY, A, 0, 100) else { panic!("first claim refused") };
        assert_eq!(a.token, 1);
        assert_eq!(registry.claim(KEY, B, 99, 100), Attempt::Held(a));
        let Attempt::Granted(b) = registry.claim(KEY, B, 100, 100) else { panic!("takeover refused") };
        assert_eq!(b.token, 2);
        assert_eq!(registry.commit(KEY, A, a.token), Err(Refusal::Fenced { current: Some(2) }));
        assert_eq!(registry.commit(KEY, B, b.token), Ok(()));
        assert_eq!(registry.claim(KEY, A, 1_000, 100), Attempt::Committed);
        assert_eq!(registry.commit(KEY, A, a.token), Err(Refusal::Committed));
    }

    #[test]
    fn a_release_keeps_the_token_counting() {
        let registry = ClaimRegistry::default();
        let Attempt::Granted(a) = registry.claim(KEY, A, 0, 100) else { panic!("claim refused") };
        registry.release(KEY, B, a.token);
        assert!(matches!(registry.claim(KEY, B, 1, 100), Attempt::Held(_)));
        registry.release(KEY, A, a.token);
        assert_eq!(registry.commit(KEY, A, a.token), Err(Refusal::Fenced { current: Some(1) }));
        let Attempt::Granted(b) = registry.claim(KEY, B, 1, 100) else {
            panic!("claim after release refused")
        };
        assert_eq!(b.token, 2);
        assert!(registry.commit(KEY, A, a.token).is_err());
    }
}
