//! What the loom tests drive (built only with `--cfg loom`): the claim registry and the
//! durable-position watermark through a small public surface, with one-byte keys and owners.

use crate::watermark::Watermark;

use super::claims::{Attempt, ClaimRegistry};

/// The claim registry under test.
#[derive(Debug, Default)]
pub struct Registry(ClaimRegistry);

/// The outcome of a claim, as the tests see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Granted with this fencing token.
    Granted {
        /// The token.
        token: u64,
    },
    /// Held by `owner` with `token`.
    Held {
        /// The holder.
        owner: u8,
        /// Its token.
        token: u64,
    },
    /// The key is committed.
    Committed,
}

fn key(key: u8) -> [u8; 32] {
    [key; 32]
}

fn owner(owner: u8) -> [u8; 16] {
    [owner; 16]
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry(ClaimRegistry::default())
    }

    /// Claims `k` for `o` at `now_ms` with a lease of `lease_ms`.
    pub fn claim(&self, k: u8, o: u8, now_ms: u64, lease_ms: u64) -> Outcome {
        match self.0.claim(key(k), owner(o), now_ms, lease_ms) {
            Attempt::Granted(claim) => Outcome::Granted { token: claim.token },
            Attempt::Held(claim) => Outcome::Held { owner: claim.owner[0], token: claim.token },
            Attempt::Committed => Outcome::Committed,
        }
    }

    /// Commits `k` as `o` with `token`; whether it was accepted.
    pub fn commit(&self, k: u8, o: u8, token: u64) -> bool {
        self.0.commit(key(k), owner(o), token).is_ok()
    }

    /// Releases `k` as `o` with `token`.
    pub fn release(&self, k: u8, o: u8, token: u64) {
        self.0.release(key(k), owner(o), token);
    }
}

/// What the writer does after a commit: raises the watermark.
pub fn advance(watermark: &Watermark, position: u64) {
    watermark.advance(position);
}
