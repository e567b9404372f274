//! The verbatim part of a view: the tail (and a checkpoint view's later records), every record as
//! stored, with the pairing rule and the plan's block cuts applied.
//!
//! Pairing rule: a call is rendered as a call only if a result with its id follows it here, and
//! a result as a result only if its call precedes it here; either without its partner is
//! rendered as a text note carrying its content, so no message list annal produces has an orphan
//! call or result. Blocks are matched first come, first served. A call answered only after a
//! later model step began stays a note, and its result is a note too (see [`pairs`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

use crate::error::ReadError;
use crate::read::Snapshot;
use crate::record::Role;
use crate::tokens::TokenCounter;
use crate::view::{BlockView, RecordView};

use super::item::Item;
use super::loaded::Views;
use super::message::{Message, MessageBlock};
use super::omitted::{Omission, OmissionReason};
use super::plan::Plan;
use super::stats::ProjectionStats;
use super::text;

fn tokens(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::from(counter.count_tokens(text))
}

/// Call and result blocks (record, block) that have their partner among the views, and the
/// results whose call is there but was answered late.
struct Pairs {
    paired: HashSet<(usize, usize)>,
    late: HashSet<(usize, usize)>,
}

/// Partners by call id, first come, first served. With `late_as_notes`, a pair with a model
/// step starting between its call and its result is not a pair: a model step starts at an
/// assistant record after a record of another role, so the model was asked for a step while the
/// call still waited, and the view it was shown had the call as a note. Keeping that note (and
/// showing the late result as a note too) keeps the bytes of every view since a prefix of the
/// next, until a compaction derives the view again.
fn pairs(views: &[RecordView<'_>], late_as_notes: bool) -> Pairs {
    let mut open: HashMap<&str, VecDeque<(usize, usize)>> = HashMap::new();
    let mut out = Pairs { paired: HashSet::new(), late: HashSet::new() };
    // `steps[r]`: model steps started in records `1..=r`.
    let mut steps = Vec::with_capacity(views.len());
    for (r, view) in views.iter().enumerate() {
        let starts = r > 0 && view.role() == Role::Assistant && views[r - 1].role() != Role::Assistant;
        steps.push(steps.last().copied().unwrap_or(0u64) + u64::from(starts));
        for (b, block) in view.blocks().enumerate() {
            match block {
                BlockView::ToolCall { call_id, .. } => open.entry(call_id).or_default().push_back((r, b)),
                BlockView::ToolResult { call_id, .. } => {
                    let Some(call) = open.get_mut(call_id).and_then(VecDeque::pop_front) else { continue };
                    if late_as_notes && steps[call.0] != steps[r] {
                        out.late.insert((r, b));
                    } else {
                        out.paired.insert(call);
                        out.paired.insert((r, b));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The tail's records that are unpaired results, with the call id each one lacks.
pub(crate) fn unpaired_results<'g>(views: &[RecordView<'g>]) -> Vec<(usize, &'g str)> {
    let paired = pairs(views, false).paired;
    let mut out = Vec::new();
    for (r, view) in views.iter().enumerate() {
        for (b, block) in view.blocks().enumerate() {
            if let BlockView::ToolResult { call_id, .. } = block {
                if !paired.contains(&(r, b)) {
                    out.push((r, call_id));
                }
            }
        }
    }
    out
}

/// What rendering the tail needs of the render it is part of.
pub(crate) struct TailInput<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) plan: &'a Plan,
    pub(crate) counter: &'a dyn TokenCounter,
    /// Only measure: a record shown as stored is counted from its digest, not read.
    pub(crate) count_only: bool,
}

pub(crate) fn render_tail<'g>(
    input: &TailInput<'_>,
    views: &Views<'g, '_>,
    tail: &[Item],
    messages: &mut Vec<Message<'g>>,
    stats: &mut ProjectionStats,
    omissions: &mut Vec<Omission>,
) -> Result<(), ReadError> {
    let (snapshot, plan, counter) = (input.snapshot, input.plan, input.counter);
    let tail_views = tail.iter().map(|item| views.get(item.order)).collect::<Result<Vec<_>, _>>()?;
    let Pairs { paired, late } = pairs(&tail_views, true);
    for (r, (item, view)) in tail.iter().zip(&tail_views).enumerate() {
        if input.count_only {
            // A record shown as stored costs what its digest says; only a changed one is read.
            let unchanged = view.blocks().enumerate().all(|(b, block)| {
                plan.cut(item.order, b).is_none()
                    && (!matches!(block, BlockView::ToolCall { .. } | BlockView::ToolResult { .. })
                        || paired.contains(&(r, b)))
            });
            if unchanged {
                if view.block_count() > 0 {
                    stats.tokens.tail += u64::from(item.tokens_total);
                    stats.kept.tail_records += 1;
                }
                continue;
            }
        }
        let mut blocks = Vec::with_capacity(view.block_count());
        let mut altered = false;
        let mut block_tokens = 0u64;
        for (b, block) in view.blocks().enumerate() {
            let cut = plan.cut(item.order, b);
            let mut cut_text = |whole: Cow<'g, str>| -> Cow<'g, str> {
                match cut {
                    Some(cut) => {
                        let left_out = std::cell::Cell::new(None);
                        let note = |omitted| {
                            left_out.set(Some(omitted));
                            text::cut_note(view.entry_id(), item.order, Some(b), omitted)
                        };
                        let text = text::cut_text(&whole, cut.head_tokens, cut.tail_tokens, note, counter);
                        if let (Some(omitted), false) = (left_out.get(), input.count_only) {
                            let reason = OmissionReason::BlockCut { block: cut.block };
                            omissions.push(Omission::one(reason, view.entry_id(), item.order, omitted));
                        }
                        match text {
                            Some(text) => Cow::Owned(text),
                            None => whole,
                        }
                    }
                    None => whole,
                }
            };
            if cut.is_some() {
                altered = true;
                stats.omitted.cut_blocks += 1;
            }
            let rendered = match block {
                BlockView::Text { text } => {
                    let text = cut_text(snapshot.text(text)?);
                    block_tokens += tokens(counter, &text);
                    MessageBlock::Text { text }
                }
                BlockView::Thinking { text } => {
                    let text = cut_text(snapshot.text(text)?);
                    block_tokens += tokens(counter, &text);
                    MessageBlock::Thinking { text }
                }
                BlockView::ToolCall { call_id, tool, input, target } => {
                    let input = cut_text(snapshot.text(input)?);
                    if paired.contains(&(r, b)) {
                        block_tokens += tokens(counter, &input) + tokens(counter, tool);
                        MessageBlock::ToolCall {
                            call_id: Cow::Borrowed(call_id),
                            tool: Cow::Borrowed(tool),
                            input,
                            target: Cow::Borrowed(target),
                        }
                    } else {
                        altered = true;
                        stats.omitted.unpaired_blocks += 1;
                        let note = text::unanswered_call_note(tool, call_id, target, &input);
                        block_tokens += tokens(counter, &note);
                        MessageBlock::Text { text: Cow::Owned(note) }
                    }
                }
                BlockView::ToolResult { call_id, tool, is_error, output } => {
                    let output = cut_text(snapshot.text(output)?);
                    if paired.contains(&(r, b)) {
                        block_tokens += tokens(counter, &output);
                        MessageBlock::ToolResult {
                            call_id: Cow::Borrowed(call_id),
                            tool: Cow::Borrowed(tool),
                            is_error,
                            output,
                        }
                    } else {
                        altered = true;
                        stats.omitted.unpaired_blocks += 1;
                        let note = if late.contains(&(r, b)) {
                            text::late_result_note(tool, call_id, is_error, &output)
                        } else {
                            text::unpaired_result_note(tool, call_id, is_error, &output)
                        };
                        block_tokens += tokens(counter, &note);
                        MessageBlock::Text { text: Cow::Owned(note) }
                    }
                }
                BlockView::Blob { hash, media_type, size_bytes } => {
                    MessageBlock::Blob { hash, media_type: Cow::Borrowed(media_type), size_bytes }
                }
            };
            blocks.push(rendered);
        }
        if blocks.is_empty() {
            continue;
        }
        // The digest's estimate is the sum of the same per-block counts; recounting is needed
        // only where a block changed.
        stats.tokens.tail += if altered { block_tokens } else { u64::from(item.tokens_total) };
        stats.kept.tail_records += 1;
        messages.push(Message { role: view.role(), blocks });
    }
    Ok(())
}
