//! What a projection kept and left out, and the tokens of each part.

use serde_json::{json, Value};

/// Counts of what a projection shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptCounts {
    /// User messages before the tail kept verbatim.
    pub user_messages: u64,
    /// User messages before the tail cut to head and tail under the capacity rule.
    pub user_messages_cut: u64,
    /// Assistant outputs before the tail kept verbatim.
    pub assistant_outputs: u64,
    /// Records rendered verbatim from the tail on (a checkpoint view's later records included).
    pub tail_records: u64,
    /// Rows of the evidence index.
    pub evidence_rows: u64,
}

/// Counts of what a projection leaves out (all of it stays in the journal, verbatim).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OmittedCounts {
    /// User messages before the tail reduced to a marker (capacity rule, last step).
    pub user_messages: u64,
    /// Assistant outputs before the tail named by a marker.
    pub assistant_outputs: u64,
    /// System records before the tail named by a marker.
    pub system_records: u64,
    /// Markers written (each names one omitted record or a run of them).
    pub markers: u64,
    /// Records before the tail that carry tool calls or results (not rendered as calls).
    pub tool_records: u64,
    /// Of those, the records carrying results (what the evidence index draws rows from).
    pub tool_results: u64,
    /// Tail blocks shown as a note because their call or result is not in the view.
    pub unpaired_blocks: u64,
    /// Tail blocks cut to head and tail to fit the capacity.
    pub cut_blocks: u64,
}

/// Estimated tokens of each part of a projection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartTokens {
    /// User text before the tail (cut messages with their notes).
    pub user: u64,
    /// Assistant text before the tail.
    pub assistant: u64,
    /// Omission markers.
    pub markers: u64,
    /// The labelled summary (summarized-v1).
    pub summary: u64,
    /// The evidence label and rows.
    pub evidence: u64,
    /// The verbatim tail (and a view's later records).
    pub tail: u64,
    /// Everything.
    pub total: u64,
}

/// Kept and omitted counts and tokens per part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProjectionStats {
    /// Records the view covers (visible, receipts left out).
    pub records: u64,
    /// The projection plan covers sourceOrders `[0, upto)`.
    pub upto: u64,
    /// Records from this sourceOrder on are verbatim.
    pub tail_start: u64,
    /// Records after `upto` (a checkpoint view's records appended since the compaction).
    pub later_records: u64,
    /// What is shown.
    pub kept: KeptCounts,
    /// What is left out.
    pub omitted: OmittedCounts,
    /// Tokens per part.
    pub tokens: PartTokens,
}

impl ProjectionStats {
    /// The stats as a JSON object with camelCase keys.
    fn json(self) -> Value {
        let kept = &self.kept;
        let omitted = &self.omitted;
        let tokens = &self.tokens;
        json!({
            "records": self.records,
            "upto": self.upto,
            "tailStart": self.tail_start,
            "laterRecords": self.later_records,
            "kept": {
                "userMessages": kept.user_messages,
                "userMessagesCut": kept.user_messages_cut,
                "assistantOutputs": kept.assistant_outputs,
                "tailRecords": kept.tail_records,
                "evidenceRows": kept.evidence_rows,
            },
            "omitted": {
                "userMessages": omitted.user_messages,
                "assistantOutputs": omitted.assistant_outputs,
                "systemRecords": omitted.system_records,
                "markers": omitted.markers,
                "toolRecords": omitted.tool_records,
                "toolResults": omitted.tool_results,
                "unpairedBlocks": omitted.unpaired_blocks,
                "cutBlocks": omitted.cut_blocks,
            },
            "tokens": {
                "user": tokens.user,
                "assistant": tokens.assistant,
                "markers": tokens.markers,
                "summary": tokens.summary,
                "evidence": tokens.evidence,
                "tail": tokens.tail,
                "total": tokens.total,
            },
        })
    }
}

/// `stats` as a JSON object with camelCase keys, as `project --json` and a compaction's
/// receipt write them. A free function, so that no JSON library type is in a method of a type
/// the `annal` crate re-exports.
pub fn stats_json(stats: &ProjectionStats) -> Value {
    stats.json()
}
