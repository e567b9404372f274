//! A compaction's requests to the writer: claiming a key (waiting for another owner's claim to
//! resolve), releasing it, and how refusals become errors.

use std::time::{Duration, Instant};

use crate::hash::{hash_to_hex, Hash};
use crate::reply::{reply, Reply};
use crate::store::Store;
use crate::writer::Request;

use super::claims::{Attempt, Claim, Owner, Refusal};
use super::durable::{CheckpointRequest, CommitRefused};
use super::key::now_ms;
use super::options::CompactOptions;
use super::CompactError;
use crate::writer::WriteFailure;

/// A claim held on both sides: the registry's (process-local token) and the table's (the
/// fencing token that counts).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub(crate) durable: Claim,
    pub(crate) local_token: u64,
}

pub(crate) enum Claimed {
    Granted(Held),
    Committed,
}

pub(crate) fn write_error(failure: WriteFailure) -> CompactError {
    match failure {
        WriteFailure::Busy(waited) => CompactError::Busy { waited },
        WriteFailure::Io(source) => CompactError::Io { source },
        WriteFailure::Corrupted(reason) => CompactError::Corrupted { reason },
        WriteFailure::Poisoned => CompactError::Poisoned,
    }
}

impl Store {
    pub(crate) fn checkpoint_request<T>(
        &self,
        build: impl FnOnce(Reply<Result<T, WriteFailure>>) -> CheckpointRequest,
    ) -> Result<T, CompactError> {
        if self.is_poisoned() {
            return Err(CompactError::Poisoned);
        }
        let (reply, answer) = reply();
        self.submit(Request::Side(Box::new(build(reply))));
        answer.recv().map_err(|_| CompactError::Closed)?.map_err(write_error)
    }

    /// Claims `key`, waiting up to `claim_wait` for another owner's claim to resolve.
    pub(crate) fn claim(
        &self,
        session: &str,
        key: Hash,
        owner: Owner,
        options: &CompactOptions,
    ) -> Result<Claimed, CompactError> {
        let lease_ms = u64::try_from(options.lease.as_millis()).unwrap_or(u64::MAX);
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            let other = match self.claims().claim(key, owner, now_ms(), lease_ms) {
                Attempt::Committed => return Ok(Claimed::Committed),
                Attempt::Held(other) => other,
                Attempt::Granted(local) => {
                    let attempt = self.checkpoint_request(|reply| CheckpointRequest::Claim {
                        key,
                        owner,
                        lease_ms,
                        reply,
                    });
                    match attempt {
                        Ok(Attempt::Granted(durable)) => {
                            return Ok(Claimed::Granted(Held { durable, local_token: local.token }))
                        }
                        Ok(Attempt::Committed) => {
                            self.claims().mark_committed(key);
                            return Ok(Claimed::Committed);
                        }
                        Ok(Attempt::Held(other)) => {
                            self.claims().release(key, owner, local.token);
                            other
                        }
                        Err(err) => {
                            self.claims().release(key, owner, local.token);
                            return Err(err);
                        }
                    }
                }
            };
            let waited = started.elapsed();
            if waited >= options.claim_wait {
                return Err(CompactError::Claimed {
                    session: session.to_owned(),
                    key,
                    owner: other.owner,
                    token: other.token,
                    until_ms: other.until_ms,
                });
            }
            std::thread::sleep(pause.min(options.claim_wait - waited));
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }
}

pub(crate) fn refusal_error(session: &str, key: Hash, token: u64, refused: CommitRefused) -> CompactError {
    match refused {
        CommitRefused::Claim(Refusal::Fenced { current }) => {
            CompactError::Fenced { session: session.to_owned(), key, token, current }
        }
        CommitRefused::Claim(Refusal::Committed) => {
            CompactError::Fenced { session: session.to_owned(), key, token, current: None }
        }
        CommitRefused::Receipt(err) => CompactError::Receipt(err),
        CommitRefused::Missing | CommitRefused::AlreadyCurrent => CompactError::Corrupted {
            reason: format!("checkpoint {} changed while it was being reinstated", hash_to_hex(&key)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::durable::CommitMode;
    use crate::options::StoreOptions;
    use crate::prepare::prepare_batch;
    use crate::record::{Record, Role};

    fn claim(store: &Store, key: Hash, owner: Owner, lease_ms: u64) -> Attempt {
        let attempt =
            store.checkpoint_request(|reply| CheckpointRequest::Claim { key, owner, lease_ms, reply });
        attempt.unwrap_or(Attempt::Committed)
    }

    /// The claims table applies the protocol by itself, without the in-process registry in
    /// front of it: what another process sees.
    #[test]
    fn the_claims_table_fences_across_owners() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Store::open(dir.path().join("s.redb"), StoreOptions::default())?;
        store.append("s", Some(0), vec![Record::text("e1", Role::User, "hello")])?;
        let key = [9; 32];
        let (a, b) = ([1; 16], [2; 16]);
        let Attempt::Granted(first) = claim(&store, key, a, 60_000) else { panic!("first claim refused") };
        assert_eq!(first.token, 1);
        assert!(matches!(claim(&store, key, b, 60_000), Attempt::Held(held) if held.owner == a));
        // A lease of 0 ms has expired at once: the next claim takes over with the next token.
        let Attempt::Granted(_) = claim(&store, key, a, 0) else { panic!("own claim refused") };
        let Attempt::Granted(taken) = claim(&store, key, b, 60_000) else { panic!("takeover refused") };
        assert_eq!(taken.token, 3);
        let commit = |owner: Owner, token: u64| {
            let receipt = prepare_batch(
                "s",
                vec![Record::text(format!("r{token}"), Role::System, "r")],
                store.options(),
            )?;
            let mode = CommitMode::Claimed { owner, token, plan: vec![1, 2, 3] };
            let result: Result<u64, CommitRefused> = store.checkpoint_request(|reply| {
                CheckpointRequest::Commit { key, session: "s".into(), mode, receipt, reply }
            })?;
            Ok::<_, Box<dyn std::error::Error>>(result)
        };
        assert!(matches!(commit(a, 2)?, Err(CommitRefused::Claim(Refusal::Fenced { current: Some(3) }))));
        assert_eq!(commit(b, 3)?.ok(), Some(1));
        assert!(matches!(commit(b, 3)?, Err(CommitRefused::Claim(Refusal::Committed))));
        assert_eq!(claim(&store, key, a, 60_000), Attempt::Committed);
        // Nothing of the refused commits was written: one record and one receipt.
        assert_eq!(store.snapshot()?.session("s")?.map(|s| s.len), Some(2));
        Ok(())
    }
}
