//! The properties every projection must have, checked on its messages: no orphan call or
//! result, tokens as counted within the capacity, user text shown or marked, every omitted record
//! named by a marker, every tool result before the tail a row of the evidence index or counted
//! by its label as left out, everything verbatim under the trigger.

use std::collections::HashMap;

use annal_engine::{
    Block, Budget, CharsPerFour, Message, MessageBlock, Projection, Record, Role, TokenCounter,
};

mod left_out;

use left_out::{check_evidence, check_omissions};

pub fn count(text: &str) -> u64 {
    u64::from(CharsPerFour.count_tokens(text))
}

/// The tokens of a message list, counted the way the store estimates records.
pub fn message_tokens(messages: &[Message<'_>]) -> u64 {
    let mut total = 0;
    for message in messages {
        for block in &message.blocks {
            total += match block {
                MessageBlock::Text { text } | MessageBlock::Thinking { text } => count(text),
                MessageBlock::ToolCall { tool, input, .. } => count(input) + count(tool),
                MessageBlock::ToolResult { output, .. } => count(output),
                MessageBlock::Blob { .. } => 0,
            };
        }
    }
    total
}

/// The tokens of records, as the store estimates them.
pub fn record_tokens(records: &[Record]) -> u64 {
    let mut total = 0;
    for record in records {
        for block in &record.blocks {
            total += match block {
                Block::Text { text } | Block::Thinking { text } => count(text),
                Block::ToolCall { tool, input, .. } => count(input) + count(tool),
                Block::ToolResult { output, .. } => count(output),
                Block::Blob { .. } => 0,
            };
        }
    }
    total
}

/// No call without its result after it, no result without its call before it.
pub fn check_pairs(messages: &[Message<'_>]) -> Result<(), String> {
    let mut open: HashMap<&str, usize> = HashMap::new();
    for (m, message) in messages.iter().enumerate() {
        for block in &message.blocks {
            match block {
                MessageBlock::ToolCall { call_id, .. } => *open.entry(call_id.as_ref()).or_default() += 1,
                MessageBlock::ToolResult { call_id, .. } => match open.get_mut(call_id.as_ref()) {
                    Some(n) if *n > 0 => *n -= 1,
                    _ => return Err(format!("message {m}: result of {call_id} without its call")),
                },
                _ => {}
            }
        }
    }
    match open.iter().find(|(_, n)| **n > 0) {
        Some((id, _)) => Err(format!("call {id} without its result")),
        None => Ok(()),
    }
}

/// A marker's sourceOrder range and its named entry ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerRange {
    pub first: u64,
    pub last: u64,
    pub first_id: String,
    pub last_id: String,
}

fn number_after(text: &str, label: &str) -> Option<u64> {
    let at = text.find(label)? + label.len();
    let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn word_after<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    let at = text.find(label)? + label.len();
    text[at..].split([',', ' ']).next()
}

/// Parses an omission marker.
pub fn marker_range(text: &str) -> Option<MarkerRange> {
    let body = text.strip_prefix("[omitted / not summarised: ")?;
    if body.starts_with("entry ") {
        let id = word_after(body, "entry ")?.to_owned();
        let order = number_after(body, "sourceOrder ")?;
        return Some(MarkerRange { first: order, last: order, first_id: id.clone(), last_id: id });
    }
    let first_id = word_after(body, "from entry ")?.to_owned();
    let first = number_after(body, "(sourceOrder ")?;
    let rest = &body[body.find(" to entry ")?..];
    let last_id = word_after(rest, " to entry ")?.to_owned();
    let last = number_after(rest, "(sourceOrder ")?;
    Some(MarkerRange { first, last, first_id, last_id })
}

/// The sourceOrder range the evidence label names.
pub fn evidence_range(messages: &[Message<'_>]) -> Option<(u64, u64)> {
    texts(messages).find_map(|text| {
        let body = text.strip_prefix("[evidence index")?;
        let first = number_after(body, "from sourceOrder ")?;
        let last = number_after(body, " to ")?;
        Some((first, last))
    })
}

pub fn texts<'m>(messages: &'m [Message<'_>]) -> impl Iterator<Item = &'m str> + 'm {
    messages.iter().flat_map(|m| &m.blocks).filter_map(|b| match b {
        MessageBlock::Text { text } => Some(text.as_ref()),
        _ => None,
    })
}

fn text_blocks(record: &Record) -> Vec<&str> {
    record
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Whether some message carries exactly `record`'s text blocks, in order.
pub fn shown_verbatim(messages: &[Message<'_>], record: &Record) -> bool {
    let wanted = text_blocks(record);
    messages.iter().filter(|m| m.role == record.role).any(|m| {
        let got: Vec<&str> = m
            .blocks
            .iter()
            .filter_map(|b| match b {
                MessageBlock::Text { text } => Some(text.as_ref()),
                _ => None,
            })
            .collect();
        got == wanted
    })
}

/// Room a full view may leave idle whatever its capacity, because the planner budgets some parts
/// before they are written (the engine's constants): the tail's reserve for the marker one
/// earlier request may become (`MARKER_TOKENS_RESERVED`), each cut's note (of a user message or
/// a tail block: `CUT_NOTE_TOKENS_PLANNED`), each marker (`MARKER_TOKENS_PLANNED`) and the evidence label
/// (`EVIDENCE_LABEL_TOKENS_PLANNED`). What is written shorter than planned stays idle.
const MARKER_RESERVE_TOKENS: u64 = 64;
const CUT_NOTE_TOKENS_PLANNED: u64 = 40;
const MARKER_TOKENS_PLANNED: u64 = 40;
const EVIDENCE_LABEL_TOKENS_PLANNED: u64 = 110;

/// The idle room a full view of `projection` may leave: see the constants above.
fn planned_slack(projection: &Projection<'_>) -> u64 {
    let stats = &projection.stats;
    // A cut user message and a cut tail block each plan a note.
    let cuts = (stats.kept.user_messages_cut + stats.omitted.cut_blocks).max(1);
    let markers = (MARKER_TOKENS_PLANNED * stats.omitted.markers).saturating_sub(stats.tokens.markers);
    let label = if stats.tokens.evidence > 0 { EVIDENCE_LABEL_TOKENS_PLANNED } else { 0 };
    MARKER_RESERVE_TOKENS + CUT_NOTE_TOKENS_PLANNED * cuts + markers + label
}

/// Checks the properties of a projection of `records` (the session's records in sourceOrder,
/// receipts left out; `orders[i]` is the sourceOrder of `records[i]`) under `budget`.
pub fn check_projection(
    records: &[Record],
    orders: &[u64],
    projection: &Projection<'_>,
    budget: &Budget,
) -> Result<(), String> {
    let messages = &projection.messages;
    check_pairs(messages)?;
    let by_order: HashMap<u64, &Record> = orders.iter().copied().zip(records).collect();
    check_evidence(&by_order, messages, projection.stats.tail_start)?;
    let total = message_tokens(messages);
    if total != projection.stats.tokens.total {
        return Err(format!("stats say {} tokens, the messages hold {total}", projection.stats.tokens.total));
    }
    if total > u64::from(budget.capacity_tokens()) {
        return Err(format!("{total} tokens past the capacity {}", budget.capacity_tokens()));
    }
    // User text gives only when nothing else can: a view that cuts or omits it is full, but
    // for what is planned before it is measured (`planned_slack`). At a capacity of a few
    // thousand tokens that is more than 5%.
    let capacity = u64::from(budget.capacity_tokens());
    let user_given = projection.stats.kept.user_messages_cut + projection.stats.omitted.user_messages;
    if user_given > 0 && total * 100 < capacity * 95 && capacity - total > planned_slack(projection) {
        return Err(format!(
            "{user_given} user messages cut or omitted with {total} of {capacity} tokens used ({:?})",
            projection.stats
        ));
    }
    let markers: Vec<MarkerRange> = texts(messages).filter_map(marker_range).collect();
    for marker in &markers {
        let named = |order: u64, id: &str| by_order.get(&order).is_some_and(|r| r.entry_id == id);
        if !named(marker.first, &marker.first_id) || !named(marker.last, &marker.last_id) {
            return Err(format!("marker {marker:?} names entries that are not at its sourceOrders"));
        }
    }
    check_omissions(projection, &markers)?;
    let marked = |order: u64| markers.iter().any(|m| m.first <= order && order <= m.last);
    let all_text: Vec<&str> = texts(messages).collect();
    let cut = |record: &Record, order: u64| {
        let note = format!("[… cut: entry {}, sourceOrder {order},", record.entry_id);
        all_text.iter().any(|t| t.contains(&note))
    };
    let tool_range = evidence_range(messages);
    let tail_start = projection.stats.tail_start;
    for (record, &order) in records.iter().zip(orders) {
        let has_text = !text_blocks(record).is_empty();
        if has_text && record.role == Role::User {
            if !(shown_verbatim(messages, record) || cut(record, order) || marked(order)) {
                return Err(format!(
                    "user text of {} (sourceOrder {order}) is neither shown nor marked",
                    record.entry_id
                ));
            }
            continue;
        }
        if order >= tail_start {
            continue;
        }
        if has_text && record.role != Role::Tool {
            if !(shown_verbatim(messages, record) || marked(order)) {
                return Err(format!("{} (sourceOrder {order}) is omitted without a marker", record.entry_id));
            }
        } else if record.blocks.iter().any(|b| matches!(b, Block::ToolCall { .. } | Block::ToolResult { .. }))
        {
            let covered = tool_range.is_some_and(|(a, b)| a <= order && order <= b);
            if !covered {
                return Err(format!(
                    "tool record {} (sourceOrder {order}) is outside the evidence range",
                    record.entry_id
                ));
            }
        }
    }
    Ok(())
}

/// Everything verbatim: every record's blocks appear in a message of the same role, in order.
pub fn check_verbatim(records: &[Record], projection: &Projection<'_>) -> Result<(), String> {
    let shown: Vec<&Message<'_>> = projection.messages.iter().collect();
    let records: Vec<&Record> = records.iter().filter(|r| !r.blocks.is_empty()).collect();
    if shown.len() != records.len() {
        return Err(format!("{} messages for {} records", shown.len(), records.len()));
    }
    for (message, record) in shown.iter().zip(records) {
        if message.role != record.role || message.blocks.len() != record.blocks.len() {
            return Err(format!("message for {} differs in role or block count", record.entry_id));
        }
        for (got, want) in message.blocks.iter().zip(&record.blocks) {
            let same = match (got, want) {
                (MessageBlock::Text { text: a }, Block::Text { text: b })
                | (MessageBlock::Thinking { text: a }, Block::Thinking { text: b }) => a == b,
                (
                    MessageBlock::ToolCall { call_id: a, input: x, .. },
                    Block::ToolCall { call_id: b, input: y, .. },
                ) => a == b && x == y,
                (
                    MessageBlock::ToolResult { call_id: a, output: x, .. },
                    Block::ToolResult { call_id: b, output: y, .. },
                ) => a == b && x == y,
                // A call whose result has not arrived is shown as a note carrying its input.
                (MessageBlock::Text { text }, Block::ToolCall { call_id, input, .. }) => {
                    text.contains(call_id.as_str()) && text.contains(input.as_str())
                }
                // A result whose call is not in the session is shown as a note carrying its output.
                (MessageBlock::Text { text }, Block::ToolResult { call_id, output, .. }) => {
                    text.contains(&format!("(call {call_id}")) && text.ends_with(output.as_str())
                }
                _ => false,
            };
            if !same {
                return Err(format!("a block of {} is not verbatim", record.entry_id));
            }
        }
    }
    Ok(())
}
