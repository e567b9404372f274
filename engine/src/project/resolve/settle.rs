//! The tail settled against the originals: widened back to the calls its results answer, then
//! cut block by block past its cap; and the search for a result's call before the tail.

use crate::view::BlockView;

use super::super::history::CUT_NOTE_TOKENS_PLANNED;
use super::super::item::Item;
use super::super::loaded::Loaded;
use super::super::plan::BlockCut;
use super::super::tail::{is_safe, suffix_sums, TailChoice};
use super::super::verbatim::unpaired_results;
use super::super::ProjectError;
use super::{
    count, DeriveInput, BLOCK_CUT_HEAD_TOKENS, BLOCK_CUT_TAIL_TOKENS, CALL_SEARCH_RECORDS_MAX,
    WIDEN_RECORDS_MAX, WIDEN_ROUNDS_MAX,
};

/// Settles the tail: widens it for pairing, then cuts blocks past its cap. Returns the start
/// index, the cuts and the tail's planned tokens.
pub(super) fn resolve_tail<'s>(
    input: &DeriveInput<'_, 's>,
    loaded: &mut Loaded<'s>,
    choice: TailChoice,
) -> Result<(usize, Vec<BlockCut>, u64), ProjectError> {
    let items = input.outline.items();
    let suffix = suffix_sums(items);
    let mut start = choice.start;
    for _ in 0..WIDEN_ROUNDS_MAX {
        if start >= items.len() {
            break;
        }
        let orders: Vec<u64> = items[start..].iter().map(|item| item.order).collect();
        loaded.ensure(input.source, input.outline, &orders)?;
        let missing: Option<String> = {
            let views = loaded.views();
            let tail = orders.iter().map(|o| views.get(*o)).collect::<Result<Vec<_>, _>>()?;
            unpaired_results(&tail).first().map(|(_, call_id)| (*call_id).to_owned())
        };
        let Some(call_id) = missing else { break };
        let lowest = start.saturating_sub(WIDEN_RECORDS_MAX);
        let calls: Vec<u64> = items[lowest..start].iter().filter(|i| i.is_call()).map(|i| i.order).collect();
        loaded.ensure(input.source, input.outline, &calls)?;
        let found = {
            let views = loaded.views();
            let mut found = None;
            for j in (lowest..start).rev().filter(|&j| items[j].is_call()) {
                let view = views.get(items[j].order)?;
                if view.blocks().any(|b| matches!(b, BlockView::ToolCall { call_id: c, .. } if c == call_id))
                {
                    found = Some(j);
                    break;
                }
            }
            found
        };
        let Some(mut j) = found else { break };
        while !is_safe(items, j) {
            j -= 1;
        }
        if suffix[j] > choice.cap_tokens {
            break;
        }
        start = j;
    }
    let mut total = suffix[start];
    let mut cuts = Vec::new();
    if total > choice.cap_tokens {
        let cap = choice.cap_tokens;
        let head = BLOCK_CUT_HEAD_TOKENS.min(u32::try_from(cap / 8).unwrap_or(u32::MAX));
        let tail = BLOCK_CUT_TAIL_TOKENS.min(u32::try_from(cap / 16).unwrap_or(u32::MAX));
        let keep = u64::from(head) + u64::from(tail) + CUT_NOTE_TOKENS_PLANNED;
        let orders: Vec<u64> = items[start..].iter().map(|item| item.order).collect();
        loaded.ensure(input.source, input.outline, &orders)?;
        let views = loaded.views();
        let snapshot = input.source.snapshot();
        let mut blocks = Vec::new();
        for &order in &orders {
            for (b, block) in views.get(order)?.blocks().enumerate() {
                let size = match block {
                    BlockView::Text { text } | BlockView::Thinking { text } => {
                        count(input.counter, &snapshot.text(text)?)
                    }
                    BlockView::ToolCall { input: text, .. } | BlockView::ToolResult { output: text, .. } => {
                        count(input.counter, &snapshot.text(text)?)
                    }
                    BlockView::Blob { .. } => 0,
                };
                blocks.push((size, order, b));
            }
        }
        // Largest first; ties in sourceOrder and block order.
        blocks.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for (size, order, block) in blocks {
            if total <= cap || size <= keep {
                break;
            }
            let block = u32::try_from(block).unwrap_or(u32::MAX);
            cuts.push(BlockCut { order, block, head_tokens: head, tail_tokens: tail });
            total -= size - keep;
        }
        cuts.sort_by_key(|c| (c.order, c.block));
    }
    Ok((start, cuts, total))
}

/// Finds the call block answering `call_id` among the call records at or before `near`.
pub(super) fn find_call(
    views: &super::super::loaded::Views<'_, '_>,
    items: &[Item],
    near: Option<usize>,
    call_id: &str,
) -> Result<Option<(u64, u32)>, ProjectError> {
    let Some(near) = near else { return Ok(None) };
    for j in call_records_before(items, near + 1) {
        let Ok(view) = views.get(items[j].order) else { continue };
        for (b, block) in view.blocks().enumerate() {
            if matches!(block, BlockView::ToolCall { call_id: c, .. } if c == call_id) {
                return Ok(Some((items[j].order, u32::try_from(b).unwrap_or(u32::MAX))));
            }
        }
    }
    Ok(None)
}

/// Up to [`CALL_SEARCH_RECORDS_MAX`] call records before index `end`, newest first.
pub(super) fn call_records_before(items: &[Item], end: usize) -> impl Iterator<Item = usize> + '_ {
    (0..end).rev().filter(|&j| items[j].is_call()).take(CALL_SEARCH_RECORDS_MAX)
}
