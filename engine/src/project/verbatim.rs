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

/// Renders the tail's records into `messages`, each as stored but for the plan's block cuts and
/// the pairing rule, counting what it shows into `stats` and what it cuts into `omissions`.
pub(crate) fn render_tail<'g>(
    input: &TailInput<'_>,
    views: &Views<'g, '_>,
    tail: &[Item],
    messages: &mut Vec<Message<'g>>,
    stats: &mut ProjectionStats,
    omissions: &mut Vec<Omission>,
) -> Result<(), ReadError> {
    let tail_views = tail.iter().map(|item| views.get(item.order)).collect::<Result<Vec<_>, _>>()?;
    let mut render = TailRender { input, pairs: pairs(&tail_views, true), stats, omissions };
    for (index, (item, view)) in tail.iter().zip(&tail_views).enumerate() {
        let record = TailRecord { index, item, view };
        // A record shown as stored costs what its digest says; only a changed one is read.
        if input.count_only && render.shown_as_stored(&record) {
            if view.block_count() > 0 {
                render.stats.tokens.tail += u64::from(item.tokens_total);
                render.stats.kept.tail_records += 1;
            }
            continue;
        }
        let rendered = render.record(&record)?;
        if rendered.blocks.is_empty() {
            continue;
        }
        // The digest's estimate is the sum of the same per-block counts; recounting is needed
        // only where a block changed.
        render.stats.tokens.tail +=
            if rendered.altered { rendered.tokens } else { u64::from(item.tokens_total) };
        render.stats.kept.tail_records += 1;
        messages.push(Message { role: view.role(), blocks: rendered.blocks });
    }
    Ok(())
}

/// One record of the tail: its place among the tail's views (the pairs' first index), its item
/// and its view.
struct TailRecord<'t, 'g> {
    index: usize,
    item: &'t Item,
    view: &'t RecordView<'g>,
}

/// A record's rendered blocks and what they cost.
struct RenderedRecord<'g> {
    blocks: Vec<MessageBlock<'g>>,
    /// A block was cut or shown as a note, so the digest's token estimate no longer holds.
    altered: bool,
    /// The blocks' tokens, counted as rendered.
    tokens: u64,
}

/// Rendering the tail: what it reads, the pairs found among its records, and the counts it adds
/// to.
struct TailRender<'a, 'o> {
    input: &'a TailInput<'a>,
    pairs: Pairs,
    stats: &'o mut ProjectionStats,
    omissions: &'o mut Vec<Omission>,
}

impl TailRender<'_, '_> {
    fn paired(&self, record: &TailRecord<'_, '_>, block: usize) -> bool {
        self.pairs.paired.contains(&(record.index, block))
    }

    /// Whether a record is shown exactly as stored: no block of it cut, every call and result
    /// in it paired.
    fn shown_as_stored(&self, record: &TailRecord<'_, '_>) -> bool {
        record.view.blocks().enumerate().all(|(b, block)| {
            self.input.plan.cut(record.item.order, b).is_none()
                && (!matches!(block, BlockView::ToolCall { .. } | BlockView::ToolResult { .. })
                    || self.paired(record, b))
        })
    }

    fn record<'g>(&mut self, record: &TailRecord<'_, 'g>) -> Result<RenderedRecord<'g>, ReadError> {
        let mut out = RenderedRecord {
            blocks: Vec::with_capacity(record.view.block_count()),
            altered: false,
            tokens: 0,
        };
        for (b, block) in record.view.blocks().enumerate() {
            if self.input.plan.cut(record.item.order, b).is_some() {
                out.altered = true;
                self.stats.omitted.cut_blocks += 1;
            }
            let rendered = self.block(record, b, block, &mut out)?;
            out.blocks.push(rendered);
        }
        Ok(out)
    }

    /// Block `b` of a record, its tokens counted into `out`.
    fn block<'g>(
        &mut self,
        record: &TailRecord<'_, 'g>,
        b: usize,
        block: BlockView<'g>,
        out: &mut RenderedRecord<'g>,
    ) -> Result<MessageBlock<'g>, ReadError> {
        let (snapshot, counter) = (self.input.snapshot, self.input.counter);
        Ok(match block {
            BlockView::Text { text } => {
                let text = self.cut(record, b, snapshot.text(text)?);
                out.tokens += tokens(counter, &text);
                MessageBlock::Text { text }
            }
            BlockView::Thinking { text } => {
                let text = self.cut(record, b, snapshot.text(text)?);
                out.tokens += tokens(counter, &text);
                MessageBlock::Thinking { text }
            }
            BlockView::ToolCall { call_id, tool, input, target } => {
                let input = self.cut(record, b, snapshot.text(input)?);
                if self.paired(record, b) {
                    out.tokens += tokens(counter, &input) + tokens(counter, tool);
                    let (call_id, tool, target) =
                        (Cow::Borrowed(call_id), Cow::Borrowed(tool), Cow::Borrowed(target));
                    MessageBlock::ToolCall { call_id, tool, input, target }
                } else {
                    self.note(text::unanswered_call_note(tool, call_id, target, &input), out)
                }
            }
            BlockView::ToolResult { call_id, tool, is_error, output } => {
                let output = self.cut(record, b, snapshot.text(output)?);
                if self.paired(record, b) {
                    out.tokens += tokens(counter, &output);
                    MessageBlock::ToolResult {
                        call_id: Cow::Borrowed(call_id),
                        tool: Cow::Borrowed(tool),
                        is_error,
                        output,
                    }
                } else if self.pairs.late.contains(&(record.index, b)) {
                    self.note(text::late_result_note(tool, call_id, is_error, &output), out)
                } else {
                    self.note(text::unpaired_result_note(tool, call_id, is_error, &output), out)
                }
            }
            BlockView::Blob { hash, media_type, size_bytes } => {
                MessageBlock::Blob { hash, media_type: Cow::Borrowed(media_type), size_bytes }
            }
        })
    }

    /// A call or result without its partner here, shown as the text `note`.
    fn note<'g>(&mut self, note: String, out: &mut RenderedRecord<'g>) -> MessageBlock<'g> {
        out.altered = true;
        self.stats.omitted.unpaired_blocks += 1;
        out.tokens += tokens(self.input.counter, &note);
        MessageBlock::Text { text: Cow::Owned(note) }
    }

    /// `whole`, the text of block `b`, with the plan's cut of that block applied; what a cut
    /// leaves out is an omission (when the view is rendered, not only measured).
    fn cut<'g>(&mut self, record: &TailRecord<'_, 'g>, b: usize, whole: Cow<'g, str>) -> Cow<'g, str> {
        let Some(cut) = self.input.plan.cut(record.item.order, b) else { return whole };
        let (entry_id, order) = (record.view.entry_id(), record.item.order);
        let mut left_out = None;
        let note = |omitted| {
            left_out = Some(omitted);
            text::cut_note(entry_id, order, Some(b), omitted)
        };
        let text = text::cut_text(&whole, cut.head_tokens, cut.tail_tokens, note, self.input.counter);
        if let (Some(omitted), false) = (left_out, self.input.count_only) {
            let reason = OmissionReason::BlockCut { block: cut.block };
            self.omissions.push(Omission::one(reason, entry_id, order, omitted));
        }
        match text {
            Some(text) => Cow::Owned(text),
            None => whole,
        }
    }
}
