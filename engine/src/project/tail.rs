//! Step 1 over digests: where the recent tail starts.
//!
//! A tail starts only at a safe boundary, so no tool result is kept without its call and no
//! call without its results (parallel calls included). From digests alone, index `b` is safe
//! when it is the first item, or when item `b` carries no tool results and either starts a turn
//! or follows an item that made no calls: results follow their calls, so a boundary before a
//! result, or right after a call, could split an exchange. Rendering checks the pairing by call
//! id and widens the tail where this rule was not enough (see `resolve.rs`).
//!
//! The tail reaches back to the tail budget. The newest turn is kept whole even when larger, up
//! to what the capacity leaves after the user text before it and the framing of the compacted
//! history (at least an eighth of the capacity); a newest turn larger than that keeps its newest
//! part from a safe boundary (its older steps go to the evidence index), and its opening user
//! request stays in the history ahead of it, verbatim.

use super::item::{Item, SlotKind};

/// Tokens held back from a newest turn for what a compacted view always carries besides the
/// tail: two markers and the evidence label.
pub(crate) const TAIL_FRAMING_TOKENS: u64 =
    2 * super::history::MARKER_TOKENS_PLANNED + super::history::EVIDENCE_LABEL_TOKENS_PLANNED;

/// Tokens held back per user message before the newest turn for the marker that may follow it
/// (a run's marker names two entry ids, about 45 tokens with UUIDs; planned markers are 40).
pub(crate) const MARKER_TOKENS_RESERVED: u64 = 64;

/// The tail may hold at least this share of the capacity (`capacity / 8`) however much user
/// text there is: the newest steps are what the model acts on next. Below it, user text gives.
pub(crate) const TAIL_FLOOR_DIVISOR: u64 = 8;

/// Whether the tail may start at index `b` of `items`.
pub(crate) fn is_safe(items: &[Item], b: usize) -> bool {
    if b == 0 || b >= items.len() {
        return true;
    }
    let item = &items[b];
    !item.is_result() && (item.is_turn_start() || !items[b - 1].is_call())
}

/// The index of the turn start at or before `index` (the newest user text), if any.
pub(crate) fn turn_start_at_or_before(items: &[Item], index: usize) -> Option<usize> {
    items[..=index.min(items.len().saturating_sub(1))].iter().rposition(Item::is_turn_start)
}

/// The first user text of the session: the task prompt, never cut unless nothing else helps.
pub(crate) fn first_user(items: &[Item]) -> Option<usize> {
    items.iter().position(|item| item.slot_kind() == Some(SlotKind::User))
}

/// Where the tail starts and the most it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TailChoice {
    /// Index into the items of the first tail item (`items.len()` for an empty tail).
    pub(crate) start: usize,
    /// The most tokens the tail may hold; tail blocks are cut to fit when even the newest safe
    /// boundary leaves more.
    pub(crate) cap_tokens: u64,
}

/// The opening user request of the turn a tail starting at `start` opens into, when the tail
/// opens mid-turn.
pub(crate) fn opening_request(items: &[Item], start: usize) -> Option<usize> {
    if start == 0 || start >= items.len() || items[start].is_turn_start() {
        return None;
    }
    turn_start_at_or_before(items, start - 1)
}

/// Chooses the tail over `items` for capacity `capacity_tokens` and tail budget `tail_tokens`;
/// `reserved_tokens` are taken by parts that do not shrink (a summary).
pub(crate) fn choose_tail(
    items: &[Item],
    tail_tokens: u64,
    capacity_tokens: u64,
    reserved_tokens: u64,
) -> TailChoice {
    let n = items.len();
    if n == 0 {
        return TailChoice { start: 0, cap_tokens: 0 };
    }
    let newest_turn = turn_start_at_or_before(items, n - 1).unwrap_or(0);
    let suffix = suffix_sums(items);
    // The most the tail may hold: the capacity less the user text before the newest turn and
    // the framing of the history. User requests outrank the newest turn's older steps, which
    // move to the evidence index instead; only past the floor does user text give way (the
    // capacity rule cuts it). Widening for pairing and the newest-turn rule stay within it;
    // past it, blocks are cut.
    let users_before = items[..newest_turn].iter().filter(|item| item.slot_kind() == Some(SlotKind::User));
    // Each user message may stand between two runs of omitted records: a marker after each.
    let user_before: u64 =
        users_before.map(|item| u64::from(item.tokens_text) + MARKER_TOKENS_RESERVED).sum();
    let hard_cap = capacity_tokens
        .saturating_sub(user_before)
        .saturating_sub(TAIL_FRAMING_TOKENS)
        .saturating_sub(reserved_tokens)
        .max(capacity_tokens / TAIL_FLOOR_DIVISOR);
    let budget = tail_tokens.min(hard_cap);
    if suffix[newest_turn] <= budget {
        // The smallest safe boundary whose suffix fits; the newest turn start is one of them.
        let mut start = newest_turn;
        for b in (0..newest_turn).rev() {
            if suffix[b] > budget {
                break;
            }
            if is_safe(items, b) {
                start = b;
            }
        }
        return TailChoice { start, cap_tokens: hard_cap };
    }
    if suffix[newest_turn] <= hard_cap {
        // Larger than the tail budget: the newest turn is kept whole.
        return TailChoice { start: newest_turn, cap_tokens: hard_cap };
    }
    // Larger than the capacity allows: its opening request moves to the history (verbatim), and
    // the tail keeps the newest part from a safe boundary.
    let opening =
        if items[newest_turn].is_turn_start() { u64::from(items[newest_turn].tokens_text) } else { 0 };
    let cap = hard_cap.saturating_sub(opening).max(capacity_tokens / TAIL_FLOOR_DIVISOR);
    let mut fitting = None;
    let mut newest_safe = None;
    for b in (newest_turn + 1..n).rev() {
        if suffix[b] > cap && (fitting.is_some() || newest_safe.is_some()) {
            break;
        }
        if is_safe(items, b) {
            if suffix[b] <= cap {
                fitting = Some(b);
            } else {
                newest_safe = Some(b);
            }
        }
    }
    // No boundary fits: the newest safe one is kept, and its largest blocks are cut to fit.
    match fitting.or(newest_safe) {
        Some(start) => TailChoice { start, cap_tokens: cap },
        None => TailChoice { start: newest_turn, cap_tokens: hard_cap },
    }
}

/// `suffix[b]` = tokens of items `b..`; `suffix[n]` = 0.
pub(crate) fn suffix_sums(items: &[Item]) -> Vec<u64> {
    let mut suffix = vec![0u64; items.len() + 1];
    for b in (0..items.len()).rev() {
        suffix[b] = suffix[b + 1] + u64::from(items[b].tokens_total);
    }
    suffix
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::flags;
    use crate::record::Role;

    fn item(order: u64, role: Role, flags: u8, tokens: u32) -> Item {
        Item { order, role, flags, tokens_total: tokens, tokens_text: tokens, tool_key: 0, target_key: 0 }
    }

    fn user(order: u64, tokens: u32) -> Item {
        item(order, Role::User, flags::TEXT, tokens)
    }
    fn call(order: u64, tokens: u32) -> Item {
        item(order, Role::Assistant, flags::TOOL_CALL, tokens)
    }
    fn result(order: u64, tokens: u32) -> Item {
        item(order, Role::Tool, flags::TOOL_RESULT, tokens)
    }

    #[test]
    fn boundaries_never_split_an_exchange() {
        // Split parallel calls: call, call, result, result.
        let items = vec![user(0, 10), call(1, 10), call(2, 10), result(3, 10), result(4, 10), user(5, 10)];
        let safe: Vec<bool> = (0..items.len()).map(|b| is_safe(&items, b)).collect();
        assert_eq!(safe, vec![true, true, false, false, false, true]);
    }

    #[test]
    fn the_tail_reaches_back_to_its_budget_at_a_safe_boundary() {
        let items = vec![
            user(0, 10),
            call(1, 10),
            result(2, 100),
            call(3, 10),
            result(4, 10),
            user(5, 10),
            call(6, 10),
        ];
        let choice = choose_tail(&items, 45, 10_000, 0);
        assert_eq!(choice.start, 3);
        // Newest turn alone is over the budget: kept whole.
        let choice = choose_tail(&items, 15, 10_000, 0);
        assert_eq!(choice.start, 5);
    }

    #[test]
    fn a_newest_turn_past_capacity_keeps_its_newest_part() {
        let mut items = vec![user(0, 10), user(1, 10)];
        for i in 0..20 {
            items.push(call(2 + 2 * i, 100));
            items.push(result(3 + 2 * i, 1_000));
        }
        let choice = choose_tail(&items, 100, 8_000, 0);
        assert!(choice.start > 1 && is_safe(&items, choice.start));
        let kept: u64 = items[choice.start..].iter().map(|i| u64::from(i.tokens_total)).sum();
        assert!(kept <= choice.cap_tokens);
        assert_eq!(opening_request(&items, choice.start), Some(1));
    }
}
