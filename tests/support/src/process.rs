//! What the multi-process test's helper binary writes: records whose whole content follows
//! from their entryId, so a reader in another process can check every record it sees without
//! knowing which writer made it (a torn or mixed-up record cannot pass).

use annal_engine::{Block, Record, Role};

/// Every this many records, one carries a tool output past the blob threshold.
const BIG_EVERY: u64 = 5;

/// The record with this entryId (`<prefix>-<index>`).
pub fn record_for(entry_id: &str) -> Record {
    let index: u64 = entry_id.rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let mut blocks = vec![Block::Text { text: format!("payload of {entry_id}") }];
    if index.is_multiple_of(BIG_EVERY) {
        blocks.push(Block::ToolResult {
            call_id: format!("{entry_id}-call"),
            tool: "Bash".to_owned(),
            is_error: false,
            // Over 16 KiB, so it lives in the blob table.
            output: format!("{entry_id};").repeat(20_000 / (entry_id.len() + 1) + 1),
        });
    }
    Record {
        entry_id: entry_id.to_owned(),
        role: Role::Tool,
        timestamp: None,
        blocks,
        meta: Default::default(),
    }
}
