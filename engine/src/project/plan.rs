//! The plan of a projection: which records are kept, which become markers, which evidence rows
//! are shown and which tail blocks are cut. A checkpoint stores this, never rendered text, so
//! it stays derived data: rendering a plan against the journal gives the same bytes every time.
//!
//! Only what differs from the defaults is listed: before the tail, user text is kept and
//! assistant and system text omitted unless the plan says otherwise; from the tail on, every
//! record is verbatim except for the listed block cuts.

use super::budget::{Algorithm, Budget};
use super::history::{Fate, Slot};
use super::item::{Item, SlotKind};
use crate::hash::Hash;

/// An evidence row: a tool result block, and the call block it answers when found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowRef {
    pub(crate) order: u64,
    pub(crate) block: u32,
    pub(crate) call: Option<(u64, u32)>,
}

/// A tail block cut to head and tail because the tail would pass its cap otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockCut {
    pub(crate) order: u64,
    pub(crate) block: u32,
    pub(crate) head_tokens: u32,
    pub(crate) tail_tokens: u32,
}

/// A user message not kept whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UserCut {
    pub(crate) order: u64,
    /// `Fate::Cut` or `Fate::Omitted`.
    pub(crate) fate: Fate,
}

/// Everything needed to render a projection of records `[0, upto)` (and, for a view, the
/// records after it) from the journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The algorithm whose output this is.
    pub(crate) algorithm: Algorithm,
    pub(crate) budget: Budget,
    /// The plan covers sourceOrders `[0, upto)`: what a checkpoint of it is keyed by.
    pub(crate) upto: u64,
    /// It was derived over the records `[0, end)` (`end >= upto`): the records after `upto` are a
    /// pending exchange, always verbatim, but their tokens count in the view.
    pub(crate) end: u64,
    /// Records from here on are rendered verbatim.
    pub(crate) tail_start: u64,
    /// Assistant text kept before the tail, ascending.
    pub(crate) kept_assistant: Vec<u64>,
    /// User text before the tail not kept whole, ascending.
    pub(crate) user_cuts: Vec<UserCut>,
    /// Evidence rows in priority order.
    pub(crate) rows: Vec<RowRef>,
    /// Tail block cuts, ascending.
    pub(crate) cuts: Vec<BlockCut>,
    /// The blake3 of the summary text (summarized-v1), which the receipt carries.
    pub(crate) summary: Option<Hash>,
    /// Measured tokens of everything before the tail (history, markers, summary, evidence).
    pub(crate) frozen_tokens: u64,
    /// Measured tokens of the tail `[tail_start, upto)`.
    pub(crate) tail_tokens: u64,
}

impl Plan {
    /// Everything verbatim: a session at or under the trigger.
    pub(crate) fn verbatim(budget: Budget, upto: u64, end: u64) -> Plan {
        Plan {
            algorithm: Algorithm::DeterministicV1,
            budget,
            upto,
            end,
            tail_start: 0,
            kept_assistant: Vec::new(),
            user_cuts: Vec::new(),
            rows: Vec::new(),
            cuts: Vec::new(),
            summary: None,
            frozen_tokens: 0,
            tail_tokens: 0,
        }
    }

    /// Whether it shows every record as stored (nothing before a tail, nothing cut).
    pub(crate) fn is_verbatim(&self) -> bool {
        self.tail_start == 0 && self.cuts.is_empty() && self.rows.is_empty() && self.user_cuts.is_empty()
    }

    /// The fate of a history slot under this plan.
    pub(crate) fn fate(&self, slot: &Slot) -> Fate {
        match slot.kind {
            SlotKind::User => match self.user_cuts.binary_search_by_key(&slot.order, |c| c.order) {
                Ok(at) => self.user_cuts[at].fate,
                Err(_) => Fate::Kept,
            },
            SlotKind::Assistant if self.kept_assistant.binary_search(&slot.order).is_ok() => Fate::Kept,
            SlotKind::Assistant | SlotKind::System => Fate::Omitted,
        }
    }

    /// The cut of a tail block, if any.
    pub(crate) fn cut(&self, order: u64, block: usize) -> Option<BlockCut> {
        self.cuts.iter().find(|c| c.order == order && c.block as usize == block).copied()
    }

    /// Records the fates of a ledger's slots as exceptions to the defaults.
    pub(crate) fn set_fates(&mut self, slots: &[Slot], fates: &[Fate]) {
        self.kept_assistant.clear();
        self.user_cuts.clear();
        for (slot, fate) in slots.iter().zip(fates) {
            match (slot.kind, fate) {
                (SlotKind::Assistant, Fate::Kept) => self.kept_assistant.push(slot.order),
                (SlotKind::User, Fate::Kept) => {}
                (SlotKind::User, fate) => self.user_cuts.push(UserCut { order: slot.order, fate: *fate }),
                _ => {}
            }
        }
    }
}

/// The items of the history (before the tail) of `plan`.
pub(crate) fn history_items<'i>(items: &'i [Item], plan: &Plan) -> &'i [Item] {
    let end = items.partition_point(|item| item.order < plan.tail_start);
    &items[..end]
}
