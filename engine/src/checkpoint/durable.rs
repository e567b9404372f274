//! The durable side of compactions: claims, releases and checkpoint commits, applied by group
//! commit inside its transaction so they are atomic with everything else it commits (a group
//! with one is committed durably in the store file, never only to the log), and serialised
//! across processes by redb's write lock.
//!
//! A commit checks the claim (owner and fencing token), appends the receipt to the session,
//! stores the plan and clears the claim, all in one transaction: a checkpoint never exists
//! without its receipt, and a fenced owner writes nothing.
//!
//! Claim row (`claims` table, 40 bytes, little endian): owner `[u8; 16]`, fencing token `u64`,
//! lease deadline `u64` (ms since the Unix epoch; 0 once released), reserved `[u8; 8]`.

use redb::{ReadableTable, WriteTransaction};

use crate::apply::{Decide, Tables};
use crate::error::{AppendError, Failure};
use crate::hash::Hash;
use crate::prepare::Prepared;
use crate::read::SessionLookup;
use crate::reply::Reply;
use crate::tables::{CHECKPOINTS, CLAIMS};
use crate::writer::{Answer, SideWrite, WriteFailure};

use super::claims::{self, Attempt, Claim, Owner, Refusal};
use super::key::now_ms;

const CLAIM_ROW_LEN: usize = 40;

fn encode_claim(claim: &Claim) -> [u8; CLAIM_ROW_LEN] {
    let mut out = [0u8; CLAIM_ROW_LEN];
    out[..16].copy_from_slice(&claim.owner);
    out[16..24].copy_from_slice(&claim.token.to_le_bytes());
    out[24..32].copy_from_slice(&claim.until_ms.to_le_bytes());
    out
}

fn decode_claim(bytes: &[u8; CLAIM_ROW_LEN]) -> Claim {
    let mut owner = [0u8; 16];
    owner.copy_from_slice(&bytes[..16]);
    let mut token = [0u8; 8];
    token.copy_from_slice(&bytes[16..24]);
    let mut until = [0u8; 8];
    until.copy_from_slice(&bytes[24..32]);
    Claim { owner, token: u64::from_le_bytes(token), until_ms: u64::from_le_bytes(until) }
}

/// What a commit presents.
#[derive(Debug)]
pub(crate) enum CommitMode {
    /// A new checkpoint, by the owner of its claim.
    Claimed { owner: Owner, token: u64, plan: Vec<u8> },
    /// An existing checkpoint made current again by a new receipt.
    Reinstate,
}

/// Why a commit wrote nothing.
#[derive(Debug)]
pub(crate) enum CommitRefused {
    Claim(Refusal),
    Receipt(AppendError),
    /// Reinstating a key that has no checkpoint.
    Missing,
    /// Reinstating a checkpoint that is already current.
    AlreadyCurrent,
}

/// The result of a commit: the receipt's sourceOrder, or why nothing was written.
pub(crate) type CommitResult = Result<Result<u64, CommitRefused>, WriteFailure>;

/// A compaction's request to the writer.
#[derive(Debug)]
pub(crate) enum CheckpointRequest {
    Claim {
        key: Hash,
        owner: Owner,
        lease_ms: u64,
        reply: Reply<Result<Attempt, WriteFailure>>,
    },
    Release {
        key: Hash,
        owner: Owner,
        token: u64,
        reply: Reply<Result<(), WriteFailure>>,
    },
    Commit {
        key: Hash,
        session: String,
        mode: CommitMode,
        receipt: Vec<Prepared>,
        reply: Reply<CommitResult>,
    },
}

/// The checkpoint key named by the newest receipt visible in `session`.
fn latest_receipt_key(tables: &Tables<'_>, session: &str) -> Result<Option<Hash>, Failure> {
    let Some(row) = tables.row_by_name(session)? else { return Ok(None) };
    for segment in tables.lineage(&row)?.iter().rev() {
        let (start, end) = segment.orders;
        if start >= end {
            continue;
        }
        if let Some(entry) = tables.receipts.range((segment.key, start)..(segment.key, end))?.next_back() {
            return Ok(Some(entry?.1.value()));
        }
    }
    Ok(None)
}

impl SideWrite for CheckpointRequest {
    /// Applies the request inside the writer's transaction. The outer error aborts the group;
    /// a refusal is this request's answer and writes nothing.
    fn apply(&mut self, txn: &WriteTransaction, tables: &mut Tables<'_>) -> Result<Answer, Failure> {
        let mut checkpoints = txn.open_table(CHECKPOINTS)?;
        let mut claims_table = txn.open_table(CLAIMS)?;
        match self {
            CheckpointRequest::Claim { key, owner, lease_ms, reply } => {
                let committed = checkpoints.get(&*key)?.is_some();
                let current = claims_table.get(&*key)?.map(|v| decode_claim(&v.value()));
                let attempt = claims::claim(committed, current, *owner, now_ms(), *lease_ms);
                if let Attempt::Granted(claim) = attempt {
                    claims_table.insert(&*key, encode_claim(&claim))?;
                }
                Ok(Answer::of(reply, attempt))
            }
            CheckpointRequest::Release { key, owner, token, reply } => {
                let current = claims_table.get(&*key)?.map(|v| decode_claim(&v.value()));
                if let Some(released) = claims::release(current, *owner, *token) {
                    if Some(released) != current {
                        claims_table.insert(&*key, encode_claim(&released))?;
                    }
                }
                Ok(Answer::of(reply, ()))
            }
            CheckpointRequest::Commit { key, session, mode, receipt, reply } => {
                let committed = checkpoints.get(&*key)?.is_some();
                let refused = match mode {
                    CommitMode::Claimed { owner, token, .. } => {
                        let current = claims_table.get(&*key)?.map(|v| decode_claim(&v.value()));
                        claims::commit(committed, current, *owner, *token).err().map(CommitRefused::Claim)
                    }
                    CommitMode::Reinstate if !committed => Some(CommitRefused::Missing),
                    CommitMode::Reinstate if latest_receipt_key(tables, session)? == Some(*key) => {
                        Some(CommitRefused::AlreadyCurrent)
                    }
                    CommitMode::Reinstate => None,
                };
                if let Some(refused) = refused {
                    return Ok(Answer::of(reply, Err(refused)));
                }
                let order = match tables.append(session, None, std::mem::take(receipt), &[])? {
                    Ok(appended) => appended.source_orders.first().copied().unwrap_or(0),
                    Err(err) => return Ok(Answer::of(reply, Err(CommitRefused::Receipt(err)))),
                };
                if let CommitMode::Claimed { plan, .. } = mode {
                    checkpoints.insert(&*key, plan.as_slice())?;
                    claims_table.remove(&*key)?;
                }
                Ok(Answer::of(reply, Ok(order)))
            }
        }
    }

    /// Answers the request with a failure of the whole group.
    fn fail(self: Box<Self>, failure: WriteFailure) {
        // A caller that gave up waiting dropped its end: the answer goes with the slot.
        match *self {
            CheckpointRequest::Claim { reply, .. } => reply.send(Err(failure)),
            CheckpointRequest::Release { reply, .. } => reply.send(Err(failure)),
            CheckpointRequest::Commit { reply, .. } => reply.send(Err(failure)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_rows_round_trip() {
        let claim = Claim { owner: [3; 16], token: 42, until_ms: 1_700_000_000_000 };
        assert_eq!(decode_claim(&encode_claim(&claim)), claim);
    }
}
