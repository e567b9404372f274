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
/// The least a user message cut under the capacity rule keeps (head and tail together): below
/// it, ordinary messages are reduced to markers instead.
pub(crate) const USER_CUT_TOKENS_MIN: u64 = 96;
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
    let capacity_rule = !fits(&ledger);
    if capacity_rule {
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
    if capacity_rule {
        // An output shorter than the marker it would leave costs less kept than omitted, so
        // keeping it frees room the cut level was chosen without: it goes back to user text.
        raise_cut_level(&mut ledger, room.hard_tokens.saturating_sub(evidence_budget));
    }
    HistoryPlan { ledger, evidence_budget }
}

/// Raises the cut level of the user messages not omitted to the largest under which the plan
/// fits `room`, when some are cut and that level is higher than theirs.
fn raise_cut_level(ledger: &mut Ledger, room: u64) {
    let users: Vec<usize> = (0..ledger.slots.len())
        .filter(|&i| ledger.slots[i].kind == SlotKind::User && ledger.fates[i] != Fate::Omitted)
        .collect();
    if !users.iter().any(|&i| matches!(ledger.fates[i], Fate::Cut { .. })) || ledger.cost() > room {
        return;
    }
    if let Some(level) = level_that_fits(ledger, &users, room) {
        cut_to_level(ledger, &users, level);
    }
}

/// The capacity rule: user text alone would pass what the capacity leaves, so the longest user
/// messages are cut, all to one level (head and tail together), the largest level that fits:
/// what is left of the room is filled, and a short request stays whole while a longer text can
/// still give. Only when every longer text is down to [`USER_CUT_TOKENS_MIN`] are ordinary
/// messages (not the task prompt, not the tail's opening request) reduced to markers, oldest
/// first; the level is then raised again over what is left. Every fate is planned afresh, so a
/// second call with less room (after measuring) cuts on from the originals.
pub(crate) fn cut_user_text(ledger: &mut Ledger, protected: &[usize], hard_tokens: u64, label: u64) {
    let users: Vec<usize> =
        (0..ledger.slots.len()).filter(|&i| ledger.slots[i].kind == SlotKind::User).collect();
    for &i in &users {
        ledger.set(i, Fate::Kept);
    }
    let room = hard_tokens.saturating_sub(label);
    if ledger.cost() <= room {
        return;
    }
    if let Some(level) = level_that_fits(ledger, &users, room) {
        cut_to_level(ledger, &users, level);
        return;
    }
    cut_to_level(ledger, &users, USER_CUT_TOKENS_MIN);
    let first = users.first().copied();
    let is_protected =
        |ledger: &Ledger, i: usize| Some(i) == first || protected.contains(&ledger.slots[i].index);
    for &i in &users {
        if ledger.cost() <= room {
            break;
        }
        if !is_protected(ledger, i) && ledger.cost_change(i, Fate::Omitted) < 0 {
            ledger.set(i, Fate::Omitted);
        }
    }
    let left: Vec<usize> = users.into_iter().filter(|&i| ledger.fates[i] != Fate::Omitted).collect();
    if let Some(level) = level_that_fits(ledger, &left, room) {
        cut_to_level(ledger, &left, level);
    }
}

/// The fate of a user message of `tokens` at cut level `level`: whole when cutting would not
/// save anything (the note costs more than what it replaces).
fn fate_at_level(tokens: u64, level: u64) -> Fate {
    if tokens <= level + CUT_NOTE_TOKENS_PLANNED {
        return Fate::Kept;
    }
    // Two thirds head, one third tail: an opening states the request, its end the latest detail.
    let level = u32::try_from(level).unwrap_or(u32::MAX);
    let head_tokens = level - level / 3;
    Fate::Cut { head_tokens, tail_tokens: level - head_tokens }
}

fn cut_to_level(ledger: &mut Ledger, users: &[usize], level: u64) {
    users.iter().for_each(|&i| ledger.set(i, fate_at_level(ledger.slots[i].tokens, level)));
}

/// The largest cut level at or above [`USER_CUT_TOKENS_MIN`] under which `users` (none of them
/// omitted) fit `room` with everything else the ledger plans; `None` if even the least does not.
/// Cutting never changes markers, so the cost is exact for the plan: binary search over levels.
fn level_that_fits(ledger: &Ledger, users: &[usize], room: u64) -> Option<u64> {
    let now: u64 = users.iter().map(|&i| content_tokens(&ledger.slots[i], ledger.fates[i])).sum();
    let rest = ledger.cost() - now;
    let cost = |level: u64| -> u64 {
        rest + users
            .iter()
            .map(|&i| content_tokens(&ledger.slots[i], fate_at_level(ledger.slots[i].tokens, level)))
            .sum::<u64>()
    };
    if cost(USER_CUT_TOKENS_MIN) > room {
        return None;
    }
    let (mut low, mut high) = (USER_CUT_TOKENS_MIN, users.iter().map(|&i| ledger.slots[i].tokens).max()?);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if cost(mid) <= room {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    Some(low)
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
mod tests;
