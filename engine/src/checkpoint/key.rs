//! Checkpoint keys, claim owners and the lease clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::hash::Hash;
use crate::project::{Algorithm, Budget};

use super::claims::Owner;

const KEY_DOMAIN: &[u8] = b"annal.checkpoint.v1\0";

/// `blake3(session, upto, algorithm_version, config)`: the key of a checkpoint. The budget's
/// fields are the config; every field enters with a fixed width or a length prefix.
pub fn checkpoint_key(session: &str, upto: u64, algorithm: Algorithm, budget: &Budget) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(KEY_DOMAIN);
    hasher.update(&(session.len() as u64).to_le_bytes());
    hasher.update(session.as_bytes());
    hasher.update(&upto.to_le_bytes());
    let version = algorithm.as_str();
    hasher.update(&(version.len() as u64).to_le_bytes());
    hasher.update(version.as_bytes());
    for field in budget.fields() {
        hasher.update(&field.to_le_bytes());
    }
    *hasher.finalize().as_bytes()
}

/// Milliseconds since the Unix epoch: leases are compared across processes, so they use the
/// wall clock (a clock stepped back lengthens leases; one stepped forward shortens them).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A fresh owner id: distinct across processes, threads and attempts.
pub(crate) fn new_owner() -> Owner {
    static ATTEMPTS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.owner\0");
    hasher.update(&std::process::id().to_le_bytes());
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    hasher.update(&nanos.to_le_bytes());
    hasher.update(&ATTEMPTS.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hasher.update(format!("{:?}", std::thread::current().id()).as_bytes());
    let mut owner = [0u8; 16];
    owner.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    // All zeros names a released claim's owner (nobody).
    if owner == super::claims::RELEASED {
        owner[0] = 1;
    }
    owner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_their_inputs() {
        let budget = Budget::new(100_000, 8_000);
        let key = checkpoint_key("s", 10, Algorithm::DeterministicV1, &budget);
        assert_eq!(key, checkpoint_key("s", 10, Algorithm::DeterministicV1, &budget));
        assert_ne!(key, checkpoint_key("s", 11, Algorithm::DeterministicV1, &budget));
        assert_ne!(key, checkpoint_key("t", 10, Algorithm::DeterministicV1, &budget));
        assert_ne!(key, checkpoint_key("s", 10, Algorithm::SummarizedV1, &budget));
        let other = Budget { tail_tokens: 4_096, ..budget };
        assert_ne!(key, checkpoint_key("s", 10, Algorithm::DeterministicV1, &other));
        assert_ne!(new_owner(), new_owner());
    }
}
