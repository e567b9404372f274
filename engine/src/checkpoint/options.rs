//! What a compaction is asked ([`CompactOptions`]) and what it answers ([`CompactOutcome`]).

use std::sync::Arc;
use std::time::Duration;

use crate::hash::Hash;
use crate::project::{Algorithm, ProjectOptions, ProjectionStats};

use super::summarize::Summarizer;

/// How long a claim holds by default: longer than a summarizer's default timeout.
pub const LEASE_DEFAULT: Duration = Duration::from_secs(600);

/// How to compact.
#[derive(Clone, Debug)]
pub struct CompactOptions {
    /// Budget and algorithm.
    pub project: ProjectOptions,
    /// Writes the handoff summary for summarized-v1.
    pub summarizer: Option<Arc<dyn Summarizer>>,
    /// How long the claim on the checkpoint key holds before another compaction may take it
    /// over; keep it longer than the summarizer's timeout.
    pub lease: Duration,
    /// How long to wait for another owner's claim on the same key to resolve (0: fail at once).
    pub claim_wait: Duration,
    /// Compact even when the view fits under the trigger.
    pub force: bool,
}

impl CompactOptions {
    /// Options for `project`, no summarizer, the default lease, no waiting.
    pub fn new(project: ProjectOptions) -> CompactOptions {
        CompactOptions {
            project,
            summarizer: None,
            lease: LEASE_DEFAULT,
            claim_wait: Duration::ZERO,
            force: false,
        }
    }
}

/// What a compaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactStatus {
    /// A new checkpoint and its receipt were committed.
    Committed,
    /// The key was already committed and current: nothing was written, no summarizer called.
    Reused,
    /// The key was committed but another checkpoint was current: a new receipt made it current
    /// again (no summarizer call).
    Reinstated,
    /// The view fits under the trigger: nothing to do.
    NotNeeded,
}

/// The outcome of a compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactOutcome {
    /// What happened.
    pub status: CompactStatus,
    /// The checkpoint key (none when not needed).
    pub key: Option<Hash>,
    /// The checkpoint covers sourceOrders `[0, upto)`.
    pub upto: u64,
    /// The algorithm asked for.
    pub requested: Algorithm,
    /// The algorithm of the checkpoint (deterministic-v1 when a summary failed).
    pub algorithm: Algorithm,
    /// Why the asked-for algorithm was not used.
    pub fallback_reason: Option<String>,
    /// The sourceOrder of the receipt that makes the checkpoint current.
    pub receipt: Option<u64>,
    /// The fencing token the checkpoint was committed with.
    pub fencing_token: u64,
    /// The hash of the checkpoint's own projection (records `[0, upto)`), as the receipt says;
    /// for `NotNeeded`, the hash of the current view.
    pub projection_hash: Hash,
    /// Its stats.
    pub stats: ProjectionStats,
    /// Tokens of the view before the compaction.
    pub view_tokens: u64,
}
