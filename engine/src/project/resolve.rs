//! Deriving a `deterministic-v1` plan for records `[0, upto)` from the originals: the digest
//! steps (tail, history, evidence order), then the reads that settle what digests cannot know.
//!
//! - The tail's pairing is checked by call id; a result whose call lies before the tail widens
//!   the tail back to that call (at a safe boundary, within the tail's cap). What still has no
//!   partner is rendered as a note (see `render.rs`).
//! - A tail past its cap has its largest blocks cut to head and tail.
//! - Evidence rows are formatted in evidence order and kept whole while they fit.
//! - The plan is rendered once to measure it: markers and rows are counted as written. Over
//!   the trigger, the oldest kept assistant outputs go first; over the capacity, the last rows.
//!
//! Every step is a pure function of the journal prefix, the budget and the summary text.

use crate::tokens::TokenCounter;
use crate::view::BlockView;

use super::budget::{Algorithm, Budget};
use super::evidence::{candidate_order, Candidate};
use super::history::{
    cut_user_text, plan_history, Fate, HistoryPlan, HistoryRoom, Ledger, MARKER_TOKENS_PLANNED,
};
use super::item::{Item, SlotKind};
use super::loaded::Loaded;
use super::outline::Outline;
use super::plan::{Plan, RowRef};
use super::render::{needed_orders, render, row_text, EntryIds, RenderInput};
use super::source::ProjectionSnapshot;
use super::stats::ProjectionStats;
use super::tail::{choose_tail, first_user, opening_request};
use super::{text, ProjectError};

mod settle;

use settle::{call_records_before, find_call, resolve_tail};

/// How far back before the tail a missing call is looked for.
pub(crate) const WIDEN_RECORDS_MAX: usize = 32;
/// How many times the tail may widen for pairing.
pub(crate) const WIDEN_ROUNDS_MAX: usize = 4;
/// How many call records before a result are searched for its call.
pub(crate) const CALL_SEARCH_RECORDS_MAX: usize = 16;
/// Evidence rows stop when less than this is left.
pub(crate) const ROW_TOKENS_MIN: u64 = 24;
/// Evidence rows stop after this many rows in a row did not fit.
pub(crate) const ROW_MISSES_MAX: usize = 16;
/// What a cut tail block keeps from its start, at most (and at most 1/8 of the cap).
pub(crate) const BLOCK_CUT_HEAD_TOKENS: u32 = 1_024;
/// What a cut tail block keeps from its end, at most (and at most 1/16 of the cap).
pub(crate) const BLOCK_CUT_TAIL_TOKENS: u32 = 512;
/// Measurement rounds before giving up on fitting.
const FIT_ROUNDS_MAX: usize = 16;

/// What a derivation starts from.
pub(crate) struct DeriveInput<'a, 's> {
    pub(crate) source: &'s ProjectionSnapshot,
    pub(crate) session: &'a str,
    /// The session's outline up to `end` (see [`Outline::truncated`]).
    pub(crate) outline: &'a Outline,
    /// The plan covers `[0, upto)`; the items from `upto` to `end` are a pending exchange.
    pub(crate) upto: u64,
    pub(crate) budget: Budget,
    pub(crate) algorithm: Algorithm,
    pub(crate) summary: Option<&'a str>,
    pub(crate) counter: &'a dyn TokenCounter,
}

/// A derived plan, the records it renders (already loaded), and its evidence rows formatted.
pub(crate) struct Derivation<'s> {
    pub(crate) plan: Plan,
    pub(crate) loaded: Loaded<'s>,
    pub(crate) rows: Vec<String>,
}

fn count(counter: &dyn TokenCounter, text: &str) -> u64 {
    u64::from(counter.count_tokens(text))
}

/// Derives the plan of records `[0, upto)`, counting the pending exchange up to `end` in the
/// tail.
pub(crate) fn derive<'s>(input: &DeriveInput<'_, 's>) -> Result<Derivation<'s>, ProjectError> {
    let (items, budget, counter) = (input.outline.items(), input.budget, input.counter);
    let capacity = u64::from(budget.capacity_tokens());
    let trigger = u64::from(budget.trigger_tokens());
    let mut loaded = Loaded::default();
    let total: u64 = items.iter().map(|item| u64::from(item.tokens_total)).sum();
    if total <= trigger {
        let plan = Plan::verbatim(budget, input.upto, input.outline.len);
        let stats = measure(input, &mut loaded, &plan, &[])?;
        // Notes for calls whose results are not in the view cost more than their digests: one
        // that passes the capacity that way is derived like any session over the trigger.
        if stats.tokens.total <= capacity {
            return Ok(finish(plan, loaded, stats, Vec::new()));
        }
    }
    let summary_tokens = input.summary.map_or(0, |s| count(counter, &text::summary_block(input.upto, s)));
    let mut choice = choose_tail(items, u64::from(budget.tail_tokens), capacity, summary_tokens);
    // The pending exchange after `upto` is always verbatim: the tail starts at `upto` at the
    // latest (a safe boundary: it follows a result or user text).
    choice.start = choice.start.min(items.partition_point(|item| item.order < input.upto));
    let (start, cuts, tail_tokens) = resolve_tail(input, &mut loaded, choice)?;
    let history = &items[..start];
    let protected: Vec<usize> =
        first_user(history).into_iter().chain(opening_request(items, start)).collect();
    let room = HistoryRoom {
        hard_tokens: capacity.saturating_sub(tail_tokens + summary_tokens),
        fill_tokens: trigger.saturating_sub(tail_tokens + summary_tokens),
        history_tokens: u64::from(budget.history_tokens).saturating_sub(summary_tokens),
        evidence_tokens: u64::from(budget.evidence_tokens),
        has_evidence: history.iter().any(|item| item.is_call() || item.is_result()),
        marker_tokens: MARKER_TOKENS_PLANNED,
    };
    let tail_order = items.get(start).map_or(input.upto, |item| item.order);
    let slots = input.outline.slots_before(tail_order);
    let HistoryPlan { mut ledger, evidence_budget } = plan_history(slots.to_vec(), &protected, &room);
    let (rows, mut row_texts) = choose_rows(input, &mut loaded, history, evidence_budget)?;
    let mut plan = Plan {
        algorithm: input.algorithm,
        budget,
        upto: input.upto,
        end: input.outline.len,
        tail_start: items.get(start).map_or(input.upto, |item| item.order).min(input.upto),
        kept_assistant: Vec::new(),
        user_cuts: Vec::new(),
        rows,
        cuts,
        summary: input.summary.map(|s| *blake3::hash(s.as_bytes()).as_bytes()),
        frozen_tokens: 0,
        tail_tokens: 0,
    };
    plan.set_fates(&ledger.slots, &ledger.fates);
    let mut replanned = false;
    for _ in 0..FIT_ROUNDS_MAX {
        let stats = measure(input, &mut loaded, &plan, &row_texts)?;
        let total = stats.tokens.total;
        let markers = stats.omitted.markers;
        if !replanned && markers > 0 && stats.tokens.markers > markers * room.marker_tokens {
            // Markers came out longer than planned: plan the history again with what they
            // measured, once, rather than trimming by a wrong estimate.
            replanned = true;
            let room = HistoryRoom { marker_tokens: stats.tokens.markers.div_ceil(markers), ..room };
            ledger = plan_history(slots.to_vec(), &protected, &room).ledger;
            plan.set_fates(&ledger.slots, &ledger.fates);
            continue;
        }
        let limit = if total > capacity {
            capacity
        } else if total > trigger {
            trigger
        } else {
            return Ok(finish(plan, loaded, stats, row_texts));
        };
        let over = total - limit;
        if drop_oldest_assistant_text(&mut ledger, over) {
            plan.set_fates(&ledger.slots, &ledger.fates);
        } else if total > capacity && !plan.rows.is_empty() {
            plan.rows.pop();
            row_texts.pop();
        } else if total > capacity {
            // Markers and notes measured longer than planned: the capacity rule cuts on.
            let before = ledger.cost();
            cut_user_text(&mut ledger, &protected, before.saturating_sub(over), 0);
            if ledger.cost() >= before {
                return Err(ProjectError::DoesNotFit {
                    session: input.session.to_owned(),
                    tokens: total,
                    capacity,
                });
            }
            plan.set_fates(&ledger.slots, &ledger.fates);
        } else {
            // Over the trigger only by what may not shrink (user text, the tail): fine.
            return Ok(finish(plan, loaded, stats, row_texts));
        }
    }
    Err(ProjectError::DoesNotFit { session: input.session.to_owned(), tokens: 0, capacity })
}

fn finish(mut plan: Plan, loaded: Loaded<'_>, stats: ProjectionStats, rows: Vec<String>) -> Derivation<'_> {
    let t = &stats.tokens;
    plan.frozen_tokens = t.user + t.assistant + t.markers + t.summary + t.evidence;
    plan.tail_tokens = t.tail;
    Derivation { plan, loaded, rows }
}

/// Measures `plan` exactly, by the same code that renders it, without reading the text kept
/// verbatim before the tail (its tokens are in the digests).
fn measure<'s>(
    input: &DeriveInput<'_, 's>,
    loaded: &mut Loaded<'s>,
    plan: &Plan,
    rows: &[String],
) -> Result<ProjectionStats, ProjectError> {
    let ids = EntryIds { cache: input.source.cache(), outline: input.outline };
    let render_input = RenderInput {
        snapshot: input.source.snapshot(),
        items: input.outline.items(),
        plan,
        counter: input.counter,
        ids: &ids,
        rows: Some(rows),
        count_only: true,
    };
    loaded.ensure(input.source, input.outline, &needed_orders(&render_input))?;
    let views = loaded.views();
    Ok(render(&render_input, &views, input.summary)?.stats)
}

/// Omits kept assistant text, oldest first, until about `over` tokens are freed. An output
/// shorter than the marker it would leave stays: omitting it would add tokens, not free them.
fn drop_oldest_assistant_text(ledger: &mut Ledger, over: u64) -> bool {
    let mut freed = 0u64;
    let mut dropped = false;
    for i in 0..ledger.slots.len() {
        if freed >= over {
            break;
        }
        if ledger.slots[i].kind != SlotKind::Assistant || ledger.fates[i] != Fate::Kept {
            continue;
        }
        let change = ledger.cost_change(i, Fate::Omitted);
        if change < 0 {
            freed += change.unsigned_abs();
            ledger.set(i, Fate::Omitted);
            dropped = true;
        }
    }
    dropped
}

/// Chooses evidence rows in evidence order while they fit `budget` (the label included);
/// returns them with their text.
fn choose_rows<'s>(
    input: &DeriveInput<'_, 's>,
    loaded: &mut Loaded<'s>,
    history: &[Item],
    budget: u64,
) -> Result<(Vec<RowRef>, Vec<String>), ProjectError> {
    let n = history.iter().filter(|item| item.is_result()).count() as u64;
    let is_tool = |item: &&Item| item.is_call() || item.is_result();
    let (Some(first), Some(last), true) =
        (history.iter().find(is_tool), history.iter().rfind(is_tool), n > 0)
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    // Counted with the most rows it could name, so the real label never takes more.
    let label = count(input.counter, &text::evidence_label(first.order, last.order, n, n));
    let mut left = budget.saturating_sub(label);
    let mut rows = Vec::new();
    let mut texts = Vec::new();
    let mut misses = 0;
    for Candidate { index, call_index } in candidate_order(history) {
        if left < ROW_TOKENS_MIN || misses >= ROW_MISSES_MAX {
            break;
        }
        let order = history[index].order;
        // The nearest call record first; the ones before it only if a call is not there
        // (`find_call` passes over records not loaded).
        let near: Vec<u64> = call_index.into_iter().map(|c| history[c].order).chain([order]).collect();
        loaded.ensure(input.source, input.outline, &near)?;
        let search_further = {
            let views = loaded.views();
            let mut further = false;
            for block in views.get(order)?.blocks() {
                if let BlockView::ToolResult { call_id, .. } = block {
                    further |= find_call(&views, history, call_index, call_id)?.is_none();
                }
            }
            further
        };
        if let (true, Some(near)) = (search_further, call_index) {
            let mut wanted: Vec<u64> =
                call_records_before(history, near + 1).map(|j| history[j].order).collect();
            wanted.sort_unstable();
            loaded.ensure(input.source, input.outline, &wanted)?;
        }
        let views = loaded.views();
        let view = views.get(order)?;
        for (b, block) in view.blocks().enumerate() {
            let BlockView::ToolResult { call_id, .. } = block else { continue };
            let call = find_call(&views, history, call_index, call_id)?;
            let row = RowRef { order, block: u32::try_from(b).unwrap_or(u32::MAX), call };
            let text = row_text(input.source.snapshot(), &views, &row)?;
            let cost = count(input.counter, &text) + 1;
            if cost <= left {
                left -= cost;
                rows.push(row);
                texts.push(text);
                misses = 0;
            } else {
                misses += 1;
            }
        }
    }
    Ok((rows, texts))
}
