//! Which checkpoint a session's view starts from: the one named by its newest receipt (a fork
//! sees the receipts of its parent before the fork point, so it starts where its parent was).
//!
//! A receipt whose algorithm this build no longer knows is retired: its checkpoint is not a
//! checkpoint, the view is derived from the originals, and the next compaction re-covers it.
//! The plan comes from the `checkpoints` table, or, when that row is missing or does not
//! decode, is derived again from the receipt and the records before its `upto`.

use crate::hash::Hash;
use crate::project::{derive, Algorithm, DeriveInput, Outline, Plan, ProjectError, ProjectionSnapshot};

use super::receipt::{parse_receipt, receipt_summary, ReceiptInfo};
use super::stored::decode_plan;

/// The checkpoint a view starts from.
#[derive(Debug)]
pub(crate) enum Current {
    None,
    Retired { version: String },
    Checkpoint { key: Hash, receipt: u64, plan: Box<Plan> },
}

/// The current checkpoint of `session`.
pub(crate) fn current_checkpoint(
    source: &ProjectionSnapshot,
    session: &str,
    outline: &Outline,
) -> Result<Current, ProjectError> {
    match outline.latest_receipt() {
        Some(receipt) => checkpoint_at(source, session, outline, receipt.order),
        None => Ok(Current::None),
    }
}

/// Reads the receipt at `order`: the outer error is storage or damage, the inner one a record
/// whose metadata does not say what a receipt must.
pub(crate) fn read_receipt(
    source: &ProjectionSnapshot,
    session: &str,
    order: u64,
) -> Result<Result<ReceiptInfo, String>, ProjectError> {
    let guard = source.snapshot().record(session, order)?.ok_or_else(|| ProjectError::Corrupted {
        reason: format!("receipt at sourceOrder {order} of session {session:?} is missing"),
    })?;
    let view = guard.view()?;
    Ok(parse_receipt(&view))
}

/// The checkpoint named by the receipt at `order`.
pub(crate) fn checkpoint_at(
    source: &ProjectionSnapshot,
    session: &str,
    outline: &Outline,
    order: u64,
) -> Result<Current, ProjectError> {
    // A record that looks like a receipt but does not say what a receipt must (hand-made, or
    // from another tool) names no checkpoint: it is treated like one of a retired version.
    let info = match read_receipt(source, session, order)? {
        Ok(info) => info,
        Err(reason) => return Ok(Current::Retired { version: format!("an unreadable receipt ({reason})") }),
    };
    let Some(algorithm) = Algorithm::parse(&info.algorithm_version) else {
        return Ok(Current::Retired { version: info.algorithm_version });
    };
    if info.upto > info.end || info.end > order {
        let version = format!("a receipt at sourceOrder {order} covering records past itself");
        return Ok(Current::Retired { version });
    }
    if let Some(bytes) = source.checkpoint_row(&info.key)? {
        if let Ok(plan) = decode_plan(&bytes) {
            if plan.upto == info.upto && plan.algorithm == algorithm && plan.summary == info.summary_hash {
                return Ok(Current::Checkpoint { key: info.key, receipt: order, plan: Box::new(plan) });
            }
        }
    }
    let plan = rederive(source, session, outline, &info, algorithm, order)?;
    Ok(Current::Checkpoint { key: info.key, receipt: order, plan: Box::new(plan) })
}

/// Derives a checkpoint's plan again from its receipt: the same journal prefix, budget,
/// algorithm and summary give the same plan.
fn rederive(
    source: &ProjectionSnapshot,
    session: &str,
    outline: &Outline,
    info: &ReceiptInfo,
    algorithm: Algorithm,
    order: u64,
) -> Result<Plan, ProjectError> {
    let summary = match info.summary_hash {
        Some(_) => {
            let guard = source.snapshot().record(session, order)?.ok_or_else(|| ProjectError::Corrupted {
                reason: format!("receipt at sourceOrder {order} is missing"),
            })?;
            let view = guard.view()?;
            receipt_summary(source.snapshot(), &view)?.map(|s| s.into_owned())
        }
        None => None,
    };
    let derivation = derive(&DeriveInput {
        source,
        session,
        outline: &outline.truncated(info.end),
        upto: info.upto,
        budget: info.budget,
        algorithm,
        summary: summary.as_deref(),
        counter: source.counter(),
    })?;
    Ok(derivation.plan)
}
