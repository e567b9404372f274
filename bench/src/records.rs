//! The append workload: the agent profile of annal-support's session family (a deterministic
//! agent session of mixed roles, tool calls and outputs, about 2% of records tool outputs of
//! 45–55 KB), and what the reports say about records: payload sizes and the JSON a SQLite user
//! would store.

use annal_engine::{Block, Record};
pub use annal_support::sessions::payload_bytes;
use annal_support::sessions::{Profile, SessionSpec};
use serde_json::{json, Value};

/// `count` records of the agent session of `seed`: the same on every machine.
pub fn generate(count: usize, seed: u64) -> Vec<Record> {
    SessionSpec { profile: Profile::Agent, seed }.records().take(count).collect()
}

/// Whether a record carries a tool output of at least 40 KB.
pub fn is_large(record: &Record) -> bool {
    record.blocks.iter().any(|b| matches!(b, Block::ToolResult { output, .. } if output.len() >= 40_000))
}

/// The record as one JSON object, the way a SQLite user would keep it in a TEXT column.
pub fn to_json(record: &Record) -> String {
    let blocks: Vec<Value> = record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } => json!({ "type": "text", "text": text }),
            Block::Thinking { text } => json!({ "type": "thinking", "text": text }),
            Block::ToolCall { call_id, tool, input, .. } => {
                json!({ "type": "toolCall", "callId": call_id, "tool": tool, "input": input })
            }
            Block::ToolResult { call_id, tool, is_error, output } => json!({
                "type": "toolResult", "callId": call_id, "tool": tool, "isError": is_error, "output": output,
            }),
            Block::Blob { media_type, data } => {
                json!({ "type": "blob", "mediaType": media_type, "size": data.len() })
            }
        })
        .collect();
    json!({
        "entryId": record.entry_id,
        "role": record.role.as_str(),
        "timestamp": record.timestamp,
        "blocks": blocks,
        "meta": record.meta,
    })
    .to_string()
}

/// A summary of a workload, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// How many records.
    pub records: usize,
    /// Their payload text bytes.
    pub payload_bytes: usize,
    /// How many carry a large tool output.
    pub large: usize,
    /// Payload bytes of the other records.
    pub ordinary_payload_bytes: usize,
}

impl Workload {
    /// Summarises `records`.
    pub fn of(records: &[Record]) -> Workload {
        let large = records.iter().filter(|r| is_large(r)).count();
        let payload = records.iter().map(payload_bytes).sum();
        let ordinary = records.iter().filter(|r| !is_large(r)).map(payload_bytes).sum();
        Workload { records: records.len(), payload_bytes: payload, large, ordinary_payload_bytes: ordinary }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped() {
        let a = generate(2000, 7);
        assert_eq!(a, generate(2000, 7));
        let workload = Workload::of(&a);
        assert!(workload.large > 10 && workload.large < 80, "{workload:?}");
        let ordinary_mean = workload.ordinary_payload_bytes / (workload.records - workload.large);
        assert!((600..1000).contains(&ordinary_mean), "{ordinary_mean}");
        assert!(serde_json::from_str::<Value>(&to_json(&a[3])).is_ok());
    }
}
