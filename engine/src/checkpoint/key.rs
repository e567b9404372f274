//! Claim owners and the lease clock of compactions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::claims::Owner;

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
    fn owners_are_fresh() {
        assert_ne!(new_owner(), new_owner());
    }
}
