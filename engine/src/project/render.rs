//! Rendering a plan into messages, in the order docs/projection.md fixes ("Output"): the
//! compacted history in sourceOrder (user text, kept assistant text, a marker in place of each
//! run of omitted records), then one labelled message with the summary and the evidence index,
//! then the tail verbatim (`verbatim.rs`). Text is borrowed from the stored records (blob
//! payloads are loaded). The same code measures a plan (`count_only`), so what planning measures
//! is what rendering writes.

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::ReadError;
use crate::read::Snapshot;
use crate::record::Role;
use crate::tokens::TokenCounter;
use crate::view::{BlockView, RecordView};

use super::cache::ProjectionCache;
use super::history::{Fate, Slot};
use super::item::{Item, SlotKind};
use super::loaded::Views;
use super::message::{Message, MessageBlock};
use super::omitted::{tool_records, Omission, OmissionReason, OmittedEntry};
use super::outline::Outline;
use super::plan::{history_items, Plan, RowRef};
use super::stats::ProjectionStats;
use super::text;
use super::verbatim::{render_tail, TailInput};

/// Entry ids of records rendering names without showing them (marker ends): from the store's
/// cache when there, else from the loaded record (and then cached).
pub(crate) struct EntryIds<'a> {
    pub(crate) cache: Option<&'a ProjectionCache>,
    pub(crate) outline: &'a Outline,
}

impl EntryIds<'_> {
    fn cached(&self, order: u64) -> Option<Arc<str>> {
        self.cache?.entry_id(self.outline.stored_at(order)?)
    }

    fn get(&self, snapshot: &Snapshot, views: &Views<'_, '_>, order: u64) -> Result<Arc<str>, ReadError> {
        if let Some(id) = self.cached(order) {
            return Ok(id);
        }
        let id: Arc<str> = match views.get(order) {
            Ok(view) => Arc::from(view.entry_id()),
            // Cached when the records to load were chosen, dropped from the cache since.
            Err(_) => Arc::from(read_entry_id(snapshot, self.outline.stored_at(order), order)?),
        };
        if let (Some(cache), Some(at)) = (self.cache, self.outline.stored_at(order)) {
            cache.keep_entry_id(at, &id);
        }
        Ok(id)
    }
}

/// The entry id of the record stored at `at`, read and verified on its own.
fn read_entry_id(snapshot: &Snapshot, at: Option<(u64, u64)>, order: u64) -> Result<String, ReadError> {
    let corrupted =
        |reason: String| ReadError::Corrupted { reason: format!("record at sourceOrder {order}: {reason}") };
    let at = at.ok_or_else(|| corrupted("past the session's records".into()))?;
    let held = snapshot.journal_get(at)?.ok_or_else(|| corrupted("missing from the journal".into()))?;
    let archive = held.archive().map_err(corrupted)?;
    let archived = crate::codec::access(archive).map_err(corrupted)?;
    crate::hash::check_archived(archived).map_err(|reason| corrupted(reason.into()))?;
    Ok(archived.entry_id.as_str().to_owned())
}

/// What rendering needs besides the records.
pub(crate) struct RenderInput<'a> {
    pub(crate) snapshot: &'a Snapshot,
    /// The outline items the view covers (sourceOrder below its end), receipts left out.
    pub(crate) items: &'a [Item],
    pub(crate) plan: &'a Plan,
    pub(crate) counter: &'a dyn TokenCounter,
    pub(crate) ids: &'a EntryIds<'a>,
    /// The plan's evidence rows already formatted (by its derivation, from the same snapshot).
    pub(crate) rows: Option<&'a [String]>,
    /// Only measure: text kept verbatim before the tail is counted from its digest, not read.
    pub(crate) count_only: bool,
}

/// Rendered messages and their stats.
pub(crate) struct Rendered<'g> {
    pub(crate) messages: Vec<Message<'g>>,
    pub(crate) stats: ProjectionStats,
    /// The evidence rows, when rendering formatted them (none were handed in).
    pub(crate) rows: Option<Vec<String>>,
    /// What is left out or cut, in sourceOrder (empty when only measuring).
    pub(crate) omissions: Vec<Omission>,
}

fn tokens(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::from(counter.count_tokens(text))
}

/// The sourceOrders rendering `input` reads: kept and cut history records (cut ones only, when
/// counting), the ends of marker runs whose entry ids are not cached, evidence rows and their
/// calls (unless formatted already), and the tail.
pub(crate) fn needed_orders(input: &RenderInput<'_>) -> Vec<u64> {
    let (items, plan) = (input.items, input.plan);
    let history = history_items(items, plan);
    let slots = input.ids.outline.slots_before(plan.tail_start);
    let mut orders = Vec::new();
    let mut i = 0;
    while i < slots.len() {
        match plan.fate(&slots[i]) {
            Fate::Omitted => {
                let end = run_end(slots, plan, i);
                for order in [slots[i].order, slots[end - 1].order] {
                    if input.ids.cached(order).is_none() {
                        orders.push(order);
                    }
                }
                i = end;
            }
            Fate::Kept if input.count_only => i += 1,
            Fate::Kept | Fate::Cut { .. } => {
                orders.push(slots[i].order);
                i += 1;
            }
        }
    }
    if input.rows.is_none() {
        for row in &plan.rows {
            orders.push(row.order);
            if let Some((call, _)) = row.call {
                orders.push(call);
            }
        }
    }
    orders.extend(items[history.len()..].iter().map(|item| item.order));
    orders.sort_unstable();
    orders.dedup();
    orders
}

fn run_end(slots: &[Slot], plan: &Plan, start: usize) -> usize {
    let mut end = start;
    while end < slots.len() && plan.fate(&slots[end]) == Fate::Omitted {
        end += 1;
    }
    end
}

fn text_blocks<'g>(snapshot: &Snapshot, view: &RecordView<'g>) -> Result<Vec<Cow<'g, str>>, ReadError> {
    let mut out = Vec::new();
    for block in view.blocks() {
        if let BlockView::Text { text } = block {
            out.push(snapshot.text(text)?);
        }
    }
    Ok(out)
}

/// Renders `plan` over `input.items`; `summary` is the summary text for summarized-v1.
pub(crate) fn render<'g>(
    input: &RenderInput<'_>,
    views: &Views<'g, '_>,
    summary: Option<&str>,
) -> Result<Rendered<'g>, ReadError> {
    let mut stats = ProjectionStats {
        records: input.items.len() as u64,
        upto: input.plan.upto,
        tail_start: input.plan.tail_start,
        later_records: input.items.iter().filter(|item| item.order >= input.plan.upto).count() as u64,
        ..ProjectionStats::default()
    };
    let mut messages = Vec::new();
    let mut omissions = Vec::new();
    let history = history_items(input.items, input.plan);
    render_history(input, views, history, &mut messages, &mut stats, &mut omissions)?;
    let rows = render_index(input, views, history, summary, &mut messages, &mut stats)?;
    if !input.count_only {
        let entry = |order: u64| -> Result<OmittedEntry, ReadError> {
            let entry_id = input.ids.get(input.snapshot, views, order)?.to_string();
            Ok(OmittedEntry { entry_id, source_order: order })
        };
        omissions.extend(tool_records(history, stats.kept.evidence_rows, entry)?);
        omissions.sort_by_key(|o| o.first.source_order);
    }
    let tail_input = TailInput {
        snapshot: input.snapshot,
        plan: input.plan,
        counter: input.counter,
        count_only: input.count_only,
    };
    render_tail(
        &tail_input,
        views,
        &input.items[history.len()..],
        &mut messages,
        &mut stats,
        &mut omissions,
    )?;
    let t = &mut stats.tokens;
    t.total = t.user + t.assistant + t.markers + t.summary + t.evidence + t.tail;
    Ok(Rendered { messages, stats, rows, omissions })
}

fn render_history<'g>(
    input: &RenderInput<'_>,
    views: &Views<'g, '_>,
    history: &[Item],
    messages: &mut Vec<Message<'g>>,
    stats: &mut ProjectionStats,
    omissions: &mut Vec<Omission>,
) -> Result<(), ReadError> {
    let (snapshot, plan, counter, ids) = (input.snapshot, input.plan, input.counter, input.ids);
    let slots = ids.outline.slots_before(plan.tail_start);
    stats.omitted.tool_records = history.iter().filter(|i| i.is_call() || i.is_result()).count() as u64;
    stats.omitted.tool_results = history.iter().filter(|i| i.is_result()).count() as u64;
    let mut i = 0;
    while i < slots.len() {
        let slot = &slots[i];
        match plan.fate(slot) {
            Fate::Omitted => {
                let end = run_end(slots, plan, i);
                let run = &slots[i..end];
                for s in run {
                    match s.kind {
                        SlotKind::User => stats.omitted.user_messages += 1,
                        SlotKind::Assistant => stats.omitted.assistant_outputs += 1,
                        SlotKind::System => stats.omitted.system_records += 1,
                    }
                }
                let (first, last) = (run[0].order, run[run.len() - 1].order);
                let (first_id, last_id) = (ids.get(snapshot, views, first)?, ids.get(snapshot, views, last)?);
                let run_tokens = run.iter().map(|s| s.tokens).sum();
                let marker = text::marker(&text::MarkerSpan {
                    first_id: &first_id,
                    first_order: first,
                    last_id: &last_id,
                    last_order: last,
                    count: run.len() as u64,
                    tokens: run_tokens,
                });
                if !input.count_only {
                    omissions.push(Omission {
                        reason: OmissionReason::Marker,
                        first: OmittedEntry { entry_id: first_id.to_string(), source_order: first },
                        last: OmittedEntry { entry_id: last_id.to_string(), source_order: last },
                        records: run.len() as u64,
                        tokens: run_tokens,
                    });
                }
                stats.tokens.markers += tokens(counter, &marker);
                stats.omitted.markers += 1;
                let role =
                    if run.iter().all(|s| s.kind == SlotKind::User) { Role::User } else { Role::Assistant };
                messages.push(Message::text(role, marker));
                i = end;
                continue;
            }
            Fate::Kept => {
                let role = if slot.kind == SlotKind::User { Role::User } else { Role::Assistant };
                if slot.kind == SlotKind::User {
                    stats.kept.user_messages += 1;
                    stats.tokens.user += slot.tokens;
                } else {
                    stats.kept.assistant_outputs += 1;
                    stats.tokens.assistant += slot.tokens;
                }
                if input.count_only {
                    i += 1;
                    continue;
                }
                let blocks = text_blocks(snapshot, &views.get(slot.order)?)?;
                messages.push(Message {
                    role,
                    blocks: blocks.into_iter().map(|text| MessageBlock::Text { text }).collect(),
                });
            }
            Fate::Cut { head_tokens, tail_tokens } => {
                let view = views.get(slot.order)?;
                let whole = text_blocks(snapshot, &view)?.join("\n\n");
                let left_out = std::cell::Cell::new(0);
                let note = |omitted| {
                    left_out.set(omitted);
                    text::cut_note(view.entry_id(), slot.order, None, omitted)
                };
                let text = text::cut_text(&whole, head_tokens, tail_tokens, note, counter).unwrap_or(whole);
                if !input.count_only {
                    let omitted = left_out.get();
                    omissions.push(Omission::one(
                        OmissionReason::UserCut,
                        view.entry_id(),
                        slot.order,
                        omitted,
                    ));
                }
                stats.kept.user_messages_cut += 1;
                stats.tokens.user += tokens(counter, &text);
                messages.push(Message::text(Role::User, text));
            }
        }
        i += 1;
    }
    Ok(())
}

/// Formats one evidence row from the loaded records.
pub(crate) fn row_text(
    snapshot: &Snapshot,
    views: &Views<'_, '_>,
    row: &RowRef,
) -> Result<String, ReadError> {
    let view = views.get(row.order)?;
    let Some(BlockView::ToolResult { tool, is_error, output, .. }) = view.block(row.block as usize) else {
        return Err(ReadError::Corrupted {
            reason: format!(
                "evidence row names block {} of sourceOrder {}, not a tool result",
                row.block, row.order
            ),
        });
    };
    let (call_tool, target) = match row.call {
        Some((order, block)) => match views.get(order)?.block(block as usize) {
            Some(BlockView::ToolCall { tool, target, .. }) => (tool, target),
            _ => (tool, ""),
        },
        None => (tool, ""),
    };
    let output = snapshot.text(output)?;
    Ok(text::evidence_row(&text::RowFields {
        entry_id: view.entry_id(),
        block_index: row.block as usize,
        source_order: row.order,
        tool: if call_tool.is_empty() { tool } else { call_tool },
        target,
        is_error,
        output: &output,
    }))
}

fn render_index<'g>(
    input: &RenderInput<'_>,
    views: &Views<'g, '_>,
    history: &[Item],
    summary: Option<&str>,
    messages: &mut Vec<Message<'g>>,
    stats: &mut ProjectionStats,
) -> Result<Option<Vec<String>>, ReadError> {
    let counter = input.counter;
    let mut formatted = None;
    let results = history.iter().filter(|item| item.is_result()).count() as u64;
    let is_tool = |item: &&Item| item.is_call() || item.is_result();
    let (first_tool, last_tool) = (history.iter().find(is_tool), history.iter().rfind(is_tool));
    // A call before the tail whose result lies in the tail (the pairing could not widen to it)
    // is still named by the label, even with no result before the tail.
    if summary.is_none() && first_tool.is_none() {
        return Ok(None);
    }
    let mut blocks = Vec::new();
    if let Some(summary) = summary {
        let block = text::summary_block(input.plan.upto, summary);
        stats.tokens.summary = tokens(counter, &block);
        blocks.push(MessageBlock::Text { text: Cow::Owned(block) });
    }
    if let (Some(first), Some(last)) = (first_tool, last_tool) {
        let rows = match input.rows {
            Some(rows) => rows.to_vec(),
            None => {
                let rows = input
                    .plan
                    .rows
                    .iter()
                    .map(|row| row_text(input.snapshot, views, row))
                    .collect::<Result<Vec<_>, _>>()?;
                formatted = Some(rows.clone());
                rows
            }
        };
        let label = text::evidence_label(first.order, last.order, results, rows.len() as u64);
        stats.tokens.evidence += tokens(counter, &label);
        blocks.push(MessageBlock::Text { text: Cow::Owned(label) });
        if !rows.is_empty() {
            let rows = rows.join("\n");
            stats.tokens.evidence += tokens(counter, &rows);
            blocks.push(MessageBlock::Text { text: Cow::Owned(rows) });
        }
        stats.kept.evidence_rows = input.plan.rows.len() as u64;
    }
    messages.push(Message { role: Role::User, blocks });
    Ok(formatted)
}
