//! Steps 2 and 3 over digests: the fate of every text record before the tail.
//!
//! The history is a sequence of slots (records with user, assistant or system text, in order).
//! A slot is kept verbatim, cut to head and tail (user text only, under the capacity rule), or
//! omitted; each maximal run of omitted slots becomes one marker in their place. User text is
//! kept whole unless it alone would pass the capacity; assistant text fills what the history
//! target leaves, newest first; system text before the tail is always omitted.
//!
//! The ledger keeps the cost of the current fates (content tokens and the number of marker
//! runs) up to date in O(1) per change, so the whole plan is O(n) in the slots.

use super::item::{Item, SlotKind};

/// Tokens planned per marker until a measurement says otherwise (`resolve.rs` plans again with
/// the measured average when markers come out longer, as they do with very long entry ids).
pub(crate) const MARKER_TOKENS_PLANNED: u64 = 40;
/// Tokens planned for the evidence label.
pub(crate) const EVIDENCE_LABEL_TOKENS_PLANNED: u64 = 110;
/// What a user message cut under the capacity rule keeps from its start, at most.
pub(crate) const USER_CUT_HEAD_TOKENS: u32 = 256;
/// What it keeps from its end, at most.
pub(crate) const USER_CUT_TAIL_TOKENS: u32 = 128;
/// Tokens planned for the note inside a cut text.
pub(crate) const CUT_NOTE_TOKENS_PLANNED: u64 = 40;

/// What becomes of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    Kept,
    Cut { head_tokens: u32, tail_tokens: u32 },
    Omitted,
}

/// A record whose text appears in the history (or that a marker names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Its index in the items.
    pub(crate) index: usize,
    pub(crate) order: u64,
    pub(crate) kind: SlotKind,
    /// Its text tokens.
    pub(crate) tokens: u64,
}

/// The slots among `items`, in order.
pub(crate) fn slots(items: &[Item]) -> Vec<Slot> {
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            item.slot_kind().map(|kind| Slot {
                index,
                order: item.order,
                kind,
                tokens: u64::from(item.tokens_text),
            })
        })
        .collect()
}

/// The planned cost of a slot under a fate (a marker's share is counted by the ledger).
fn content_tokens(slot: &Slot, fate: Fate) -> u64 {
    match fate {
        Fate::Kept => slot.tokens,
        Fate::Cut { head_tokens, tail_tokens } => {
            slot.tokens.min(u64::from(head_tokens) + u64::from(tail_tokens)) + CUT_NOTE_TOKENS_PLANNED
        }
        Fate::Omitted => 0,
    }
}

/// The fates of the slots and their planned cost.
#[derive(Clone, Debug)]
pub(crate) struct Ledger {
    pub(crate) slots: Vec<Slot>,
    pub(crate) fates: Vec<Fate>,
    content: u64,
    markers: u64,
    marker_tokens: u64,
}

impl Ledger {
    /// Users kept, everything else omitted; each marker planned at `marker_tokens`.
    pub(crate) fn new(slots: Vec<Slot>, marker_tokens: u64) -> Ledger {
        let fates: Vec<Fate> =
            slots.iter().map(|s| if s.kind == SlotKind::User { Fate::Kept } else { Fate::Omitted }).collect();
        let content = slots.iter().zip(&fates).map(|(s, f)| content_tokens(s, *f)).sum();
        let markers = (0..fates.len())
            .filter(|&i| fates[i] == Fate::Omitted && (i == 0 || fates[i - 1] != Fate::Omitted))
            .count() as u64;
        Ledger { slots, fates, content, markers, marker_tokens }
    }

    fn omitted(&self, i: usize) -> bool {
        self.fates.get(i) == Some(&Fate::Omitted)
    }

    /// The marker count after slot `i` changes from `from` to `to`, relative to now.
    fn marker_delta(&self, i: usize, from: Fate, to: Fate) -> i64 {
        let was = from == Fate::Omitted;
        let will = to == Fate::Omitted;
        if was == will {
            return 0;
        }
        let left = i > 0 && self.omitted(i - 1);
        let right = self.omitted(i + 1);
        // Becoming omitted: joins both neighbours' runs (-1), one (0), or starts a run (+1).
        let joining = match (left, right) {
            (true, true) => -1,
            (false, false) => 1,
            _ => 0,
        };
        if will {
            joining
        } else {
            -joining
        }
    }

    /// The planned cost of everything the history shows.
    pub(crate) fn cost(&self) -> u64 {
        self.content + self.markers * self.marker_tokens
    }

    /// What setting slot `i` to `fate` would add to the cost (negative: saves).
    pub(crate) fn cost_change(&self, i: usize, fate: Fate) -> i64 {
        let from = self.fates[i];
        let content =
            content_tokens(&self.slots[i], fate) as i64 - content_tokens(&self.slots[i], from) as i64;
        content + self.marker_delta(i, from, fate) * self.marker_tokens as i64
    }

    pub(crate) fn set(&mut self, i: usize, fate: Fate) {
        let from = self.fates[i];
        let delta = self.marker_delta(i, from, fate);
        self.content =
            self.content - content_tokens(&self.slots[i], from) + content_tokens(&self.slots[i], fate);
        self.markers = self.markers.saturating_add_signed(delta);
        self.fates[i] = fate;
    }

    #[cfg(test)]
    pub(crate) fn marker_count(&self) -> u64 {
        self.markers
    }
}

/// What the history may use, in tokens.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HistoryRoom {
    /// Capacity less the tail and the summary: the hard limit for everything before the tail.
    pub(crate) hard_tokens: u64,
    /// Trigger less the tail and the summary: where the optional parts (evidence rows,
    /// assistant text) stop, so a fresh view leaves room to grow before the next compaction.
    pub(crate) fill_tokens: u64,
    /// The history target less the summary.
    pub(crate) history_tokens: u64,
    /// The evidence budget.
    pub(crate) evidence_tokens: u64,
    /// Whether tool results lie before the tail (the evidence label is then always shown).
    pub(crate) has_evidence: bool,
    /// Tokens planned per marker.
    pub(crate) marker_tokens: u64,
}

/// The planned fates and the evidence budget they leave.
#[derive(Clone, Debug)]
pub(crate) struct HistoryPlan {
    pub(crate) ledger: Ledger,
    pub(crate) evidence_budget: u64,
}

/// Plans the fates of `slots` (all before the tail). `protected` are item indices of user text
/// cut only as a last resort: the task prompt and the tail's opening request.
pub(crate) fn plan_history(slots: Vec<Slot>, protected: &[usize], room: &HistoryRoom) -> HistoryPlan {
    let mut ledger = Ledger::new(slots, room.marker_tokens);
    let label = if room.has_evidence { EVIDENCE_LABEL_TOKENS_PLANNED } else { 0 };
    let fits = |ledger: &Ledger| ledger.cost() + label <= room.hard_tokens;
    if !fits(&ledger) {
        cut_user_text(&mut ledger, protected, room.hard_tokens, label);
    }
    let used = ledger.cost();
    let evidence_budget = if room.has_evidence {
        room.evidence_tokens
            .min(room.fill_tokens.saturating_sub(used))
            .max(label)
            .min(room.hard_tokens.saturating_sub(used))
    } else {
        0
    };
    let assistant_room =
        room.history_tokens.saturating_sub(used).min(room.fill_tokens.saturating_sub(used + evidence_budget));
    fill_assistant_text(&mut ledger, assistant_room);
    HistoryPlan { ledger, evidence_budget }
}

/// The capacity rule: user text alone would pass the capacity, so the oldest user messages
/// after the first are cut to head and tail, then (if still too much) to their marker alone;
/// the protected ones only after that.
pub(crate) fn cut_user_text(ledger: &mut Ledger, protected: &[usize], hard_tokens: u64, label: u64) {
    let head_tokens = USER_CUT_HEAD_TOKENS.min(u32::try_from(hard_tokens / 8).unwrap_or(u32::MAX));
    let tail_tokens = USER_CUT_TAIL_TOKENS.min(u32::try_from(hard_tokens / 16).unwrap_or(u32::MAX));
    let cut = Fate::Cut { head_tokens, tail_tokens };
    let users: Vec<usize> =
        (0..ledger.slots.len()).filter(|&i| ledger.slots[i].kind == SlotKind::User).collect();
    let is_protected = |ledger: &Ledger, i: usize| protected.contains(&ledger.slots[i].index);
    let ordinary: Vec<usize> = users.iter().copied().skip(1).filter(|&i| !is_protected(ledger, i)).collect();
    let fits = |ledger: &Ledger| ledger.cost() + label <= hard_tokens;
    for fate in [cut, Fate::Omitted] {
        for &i in &ordinary {
            if fits(ledger) {
                return;
            }
            if ledger.cost_change(i, fate) < 0 {
                ledger.set(i, fate);
            }
        }
    }
    // The tail's opening request first, then the task prompt.
    let mut last_resort: Vec<usize> = users.iter().copied().filter(|&i| is_protected(ledger, i)).collect();
    if let Some(&first) = users.first() {
        last_resort.retain(|&i| i != first);
        last_resort.push(first);
    }
    for i in last_resort {
        if fits(ledger) {
            return;
        }
        if ledger.cost_change(i, cut) < 0 {
            ledger.set(i, cut);
        }
    }
}

/// Keeps assistant text newest first while `room` lasts; an output that does not fit stays
/// omitted and an older, smaller one may still fit.
fn fill_assistant_text(ledger: &mut Ledger, room: u64) {
    let mut left = i64::try_from(room).unwrap_or(i64::MAX);
    for i in (0..ledger.slots.len()).rev() {
        if ledger.slots[i].kind != SlotKind::Assistant {
            continue;
        }
        let change = ledger.cost_change(i, Fate::Kept);
        if change <= left {
            ledger.set(i, Fate::Kept);
            left -= change;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::flags;
    use crate::record::Role;

    fn text(order: u64, role: Role, tokens: u32) -> Item {
        Item {
            order,
            role,
            flags: flags::TEXT,
            tokens_total: tokens,
            tokens_text: tokens,
            tool_key: 0,
            target_key: 0,
        }
    }

    fn room(hard: u64, history: u64) -> HistoryRoom {
        HistoryRoom {
            hard_tokens: hard,
            fill_tokens: hard,
            history_tokens: history,
            evidence_tokens: 0,
            has_evidence: false,
            marker_tokens: MARKER_TOKENS_PLANNED,
        }
    }

    #[test]
    fn the_ledger_counts_marker_runs() {
        let items: Vec<Item> = (0..6).map(|i| text(i, Role::Assistant, 10)).collect();
        let mut ledger = Ledger::new(slots(&items), MARKER_TOKENS_PLANNED);
        assert_eq!(ledger.marker_count(), 1);
        ledger.set(2, Fate::Kept);
        assert_eq!(ledger.marker_count(), 2);
        ledger.set(0, Fate::Kept);
        assert_eq!(ledger.marker_count(), 2);
        ledger.set(1, Fate::Kept);
        assert_eq!(ledger.marker_count(), 1);
        let recount = (0..6)
            .filter(|&i| ledger.fates[i] == Fate::Omitted && (i == 0 || ledger.fates[i - 1] != Fate::Omitted))
            .count() as u64;
        assert_eq!(recount, ledger.marker_count());
    }

    #[test]
    fn assistant_text_is_kept_newest_first() {
        let items = vec![
            text(0, Role::User, 50),
            text(1, Role::Assistant, 100),
            text(2, Role::Assistant, 100),
            text(3, Role::Assistant, 100),
        ];
        let plan = plan_history(slots(&items), &[], &room(10_000, 50 + 250));
        assert_eq!(plan.ledger.fates, vec![Fate::Kept, Fate::Omitted, Fate::Kept, Fate::Kept]);
    }

    #[test]
    fn user_text_is_cut_only_past_the_capacity() {
        let items: Vec<Item> = (0..10).map(|i| text(i, Role::User, 1_000)).collect();
        let plan = plan_history(slots(&items), &[], &room(20_000, 100));
        assert!(plan.ledger.fates.iter().all(|f| *f == Fate::Kept));
        let plan = plan_history(slots(&items), &[9], &room(6_000, 100));
        assert_eq!(plan.ledger.fates[0], Fate::Kept);
        assert_eq!(plan.ledger.fates[9], Fate::Kept);
        assert!(matches!(plan.ledger.fates[1], Fate::Cut { .. }));
        assert!(plan.ledger.cost() <= 6_000);
    }
}
