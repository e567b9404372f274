//! OpenCode's rules (sst/opencode at commit `31e22f65`, `session/compaction.ts` and
//! `session/overflow.ts`): the overflow trigger, the prune of old tool output, and the
//! compaction that keeps a summary and a recent tail of turns.
//!
//! OpenCode keeps a tool call and its result in one message; here they are separate messages,
//! so a tail never starts at a result (that would orphan it) where OpenCode's could not either.

use std::sync::Arc;

use annal_engine::{Budget, Role};

use super::request::{Msg, Part, PartKind, Request};

/// Tool output tokens protected from pruning, counted from the second-newest user message back
/// (the two newest user turns are never pruned).
const PRUNE_PROTECT: u64 = 40_000;
/// A prune happens only when it frees more than this.
const PRUNE_MINIMUM: u64 = 20_000;
/// Tools whose output is never pruned.
const PRUNE_PROTECTED_TOOLS: [&str; 1] = ["skill"];
/// What a pruned output reads as in the model's input.
pub const CLEARED: &str = "[Old tool result content cleared]";
/// The recent tail: a quarter of the usable context, within these bounds.
const TAIL_MIN: u64 = 2_000;
const TAIL_MAX: u64 = 15_000;
/// Reserved below the usable context, at most the output ceiling.
const COMPACTION_BUFFER: u64 = 20_000;
/// `OUTPUT_TOKEN_MAX`: the output reserve is at most this.
const OUTPUT_TOKEN_MAX: u64 = 32_000;
/// The summary message when the slot is empty.
const EMPTY_SUMMARY: &str = "[summary of the earlier conversation: empty, no model in this exam]";

/// `usable`: the context less the output reserve less `min(20K, output reserve)`; a history of
/// this many tokens or more overflows.
pub fn usable_tokens(budget: Budget) -> u64 {
    let output = u64::from(budget.max_output_tokens).min(OUTPUT_TOKEN_MAX);
    u64::from(budget.window_tokens).saturating_sub(output + COMPACTION_BUFFER.min(output))
}

fn is_summary(message: &Msg) -> bool {
    message.role == Role::Assistant && message.synthetic
}

/// Clears completed tool output older than the newest 40K tokens of it. The walk goes from the
/// newest message back and skips everything up to the second-newest user message (the two
/// newest user turns are never pruned), stops at a summary or at output already cleared, and
/// clears only when that frees more than 20K tokens.
pub fn prune(history: &mut Request) {
    let mut users = 0;
    let mut total = 0;
    let mut pruned = 0;
    let mut clear: Vec<(usize, usize)> = Vec::new();
    'walk: for (i, message) in history.iter().enumerate().rev() {
        if message.is_user_text() {
            users += 1;
        }
        if users < 2 {
            continue;
        }
        if is_summary(message) {
            break;
        }
        for (p, part) in message.parts.iter().enumerate().rev() {
            if part.kind != PartKind::Result || PRUNE_PROTECTED_TOOLS.contains(&&*part.tool) {
                continue;
            }
            if &*part.text == CLEARED {
                break 'walk;
            }
            let tokens = super::session::text_tokens(&part.text);
            total += tokens;
            if total <= PRUNE_PROTECT {
                continue;
            }
            pruned += tokens;
            clear.push((i, p));
        }
    }
    if pruned <= PRUNE_MINIMUM {
        return;
    }
    for (i, p) in clear {
        let old = &history[i];
        let mut parts = old.parts.clone();
        parts[p] = Part { text: CLEARED.into(), ..parts[p].clone() };
        history[i] = Arc::new(Msg::new(old.role, parts, old.turn, old.synthetic));
    }
}

/// The summary message, then the newest turns that fit the tail budget (the oldest of them
/// split at a message when only its end fits); the newest user message is replayed right after
/// the summary when the tail does not hold it, as OpenCode replays it after an overflow.
pub fn compact(history: &Request, usable: u64, summary: &str) -> Request {
    let budget = (usable / 4).clamp(TAIL_MIN, TAIL_MAX);
    // Earlier compactions' summaries are hidden from the selection.
    let messages: Vec<&Arc<Msg>> = history.iter().filter(|m| !is_summary(m)).collect();
    let starts: Vec<usize> = (0..messages.len()).filter(|&i| messages[i].is_user_text()).collect();
    let size = |from: usize, to: usize| messages[from..to].iter().map(|m| m.tokens).sum::<u64>();
    let mut total = 0;
    let mut keep: Option<usize> = None;
    for (t, &start) in starts.iter().enumerate().rev() {
        let end = starts.get(t + 1).copied().unwrap_or(messages.len());
        let turn = size(start, end);
        if total + turn <= budget {
            total += turn;
            keep = Some(start);
            continue;
        }
        let remaining = budget.saturating_sub(total);
        let split = (start + 1..end)
            .filter(|&s| messages[s].role != Role::Tool)
            .find(|&s| remaining > 0 && size(s, end) <= remaining);
        if split.is_some() {
            keep = split;
        }
        break;
    }
    let retained: &[&Arc<Msg>] = match keep {
        Some(start) if start > 0 => &messages[start..],
        _ => &[],
    };
    let text = if summary.is_empty() { EMPTY_SUMMARY } else { summary };
    let mut out = vec![Arc::new(Msg::text(Role::Assistant, text, usize::MAX, true))];
    if let Some(user) = messages.iter().rev().find(|m| m.is_user_text()) {
        if !retained.iter().any(|m| Arc::ptr_eq(m, user)) {
            out.push(Arc::clone(user));
        }
    }
    out.extend(retained.iter().map(|m| Arc::clone(m)));
    out
}
