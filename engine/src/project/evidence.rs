//! Step 4 over digests: the order in which tool results before the tail are offered to the
//! evidence index. Rendering (`resolve.rs`) then reads them in this order, writes one bounded
//! row per result block, and keeps each row that fits the evidence budget whole; a row that
//! does not fit is skipped, never cut.
//!
//! Order: error results, newest first; then one group per (tool, target), configuration /
//! schema / validation / test targets first and otherwise the group with the newest result
//! first, offering each group's latest result and then its first; then every other result,
//! newest first.
//!
//! Digests carry the tool and target keys of a record's first call, not call ids, so a result
//! is grouped under the nearest call record before it: results of parallel calls made in one
//! record share that record's group. Rows still name each result's own call (rendering reads
//! the call by id).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::digest::flags;

use super::item::Item;

/// A tool result record offered to the evidence index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Its index in the items.
    pub(crate) index: usize,
    /// The nearest call record before it, where its call most likely is.
    pub(crate) call_index: Option<usize>,
}

/// Group keys are already the first bytes of blake3 digests: mixing them once is enough, and
/// much cheaper than the default hasher on the 10^5 results of a long session.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(23) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Clone, Copy)]
struct Group {
    priority: bool,
    first: usize,
    latest: usize,
}

/// The result records among `items` in evidence order.
pub(crate) fn candidate_order(items: &[Item]) -> Vec<Candidate> {
    let mut candidates = Vec::new();
    let mut last_call = None;
    for (index, item) in items.iter().enumerate() {
        if item.is_result() {
            candidates.push(Candidate { index, call_index: last_call });
        }
        if item.is_call() {
            last_call = Some(index);
        }
    }
    let mut chosen = vec![false; candidates.len()];
    let mut order = Vec::with_capacity(candidates.len());
    let take = |c: usize, order: &mut Vec<Candidate>, chosen: &mut Vec<bool>| {
        if !chosen[c] {
            chosen[c] = true;
            order.push(candidates[c]);
        }
    };
    // Errors first, newest first.
    for c in (0..candidates.len()).rev() {
        if items[candidates[c].index].has(flags::ERROR) {
            take(c, &mut order, &mut chosen);
        }
    }
    // Groups by (tool, target).
    let mut groups: HashMap<(u64, u64), Group, BuildHasherDefault<KeyHasher>> = HashMap::default();
    for (c, candidate) in candidates.iter().enumerate() {
        let (key, priority) = match candidate.call_index {
            Some(call) => {
                let call = &items[call];
                ((call.tool_key, call.target_key), call.has(flags::PRIORITY_TARGET))
            }
            None => ((items[candidate.index].tool_key, 0), false),
        };
        groups.entry(key).and_modify(|group| group.latest = c).or_insert(Group {
            priority,
            first: c,
            latest: c,
        });
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    // `latest` is unique per group, so this order does not depend on the map's.
    groups.sort_by(|a, b| b.priority.cmp(&a.priority).then(b.latest.cmp(&a.latest)));
    for group in &groups {
        take(group.latest, &mut order, &mut chosen);
        take(group.first, &mut order, &mut chosen);
    }
    // The rest by recency.
    for c in (0..candidates.len()).rev() {
        take(c, &mut order, &mut chosen);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Role;

    fn item(order: u64, role: Role, flags: u8, tool: u64, target: u64) -> Item {
        Item { order, role, flags, tokens_total: 10, tokens_text: 0, tool_key: tool, target_key: target }
    }

    #[test]
    fn errors_then_priority_groups_then_recency() {
        let call = |o, target, priority: bool| {
            let bits = flags::TOOL_CALL | if priority { flags::PRIORITY_TARGET } else { 0 };
            item(o, Role::Assistant, bits, 1, target)
        };
        let result = |o, error: bool| {
            item(o, Role::Tool, flags::TOOL_RESULT | if error { flags::ERROR } else { 0 }, 1, 0)
        };
        let items = vec![
            call(0, 10, false),
            result(1, false), // group 10, first
            call(2, 20, true),
            result(3, false), // group 20 (priority), first
            call(4, 10, false),
            result(5, true), // error
            call(6, 10, false),
            result(7, false), // group 10, latest
            call(8, 20, true),
            result(9, false), // group 20, latest
            call(10, 30, false),
            result(11, false), // group 30, only
        ];
        let orders: Vec<u64> = candidate_order(&items).iter().map(|c| items[c.index].order).collect();
        assert_eq!(orders, vec![5, 9, 3, 11, 7, 1]);
    }
}
