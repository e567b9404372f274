//! Checkpoint keys: what names the checkpoint of a session's prefix under one budget and
//! algorithm.

use crate::hash::Hash;

use super::budget::{Algorithm, Budget};

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
    }
}
