//! The history plan's tests: marker runs, which text is kept, cut or omitted under each room.

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
    // Ten equal messages share the room: each is cut to the same level, none is a marker.
    let plan = plan_history(slots(&items), &[9], &room(6_000, 100));
    assert!(plan.ledger.fates.iter().all(|f| matches!(f, Fate::Cut { .. })), "{:?}", plan.ledger.fates);
    assert!(plan.ledger.cost() <= 6_000);
    assert!(plan.ledger.cost() + 10 * 3 > 6_000, "the cuts fill the room: {}", plan.ledger.cost());
}

#[test]
fn a_paste_is_cut_before_any_short_request() {
    // A pasted specification as the task prompt, then short requests between replies.
    let mut items = vec![text(0, Role::User, 17_000)];
    for (i, tokens) in [11u32, 160, 40, 90].into_iter().enumerate() {
        items.push(text(2 * i as u64 + 1, Role::Assistant, 500));
        items.push(text(2 * i as u64 + 2, Role::User, tokens));
    }
    let plan = plan_history(slots(&items), &[], &room(9_000, 100));
    let fates = &plan.ledger.fates;
    assert!(matches!(fates[0], Fate::Cut { .. }), "{fates:?}");
    for i in (2..fates.len()).step_by(2) {
        assert_eq!(fates[i], Fate::Kept, "short request {i} is kept whole: {fates:?}");
    }
    let cost = plan.ledger.cost();
    assert!((9_000 - 3..=9_000).contains(&cost), "the cut fills what is left: {cost}");
    let Fate::Cut { head_tokens, tail_tokens } = fates[0] else { unreachable!() };
    assert!(head_tokens > tail_tokens && tail_tokens > 0);
}

#[test]
fn room_freed_by_short_replies_goes_back_to_the_cut() {
    // Long pastes with empty or one-word replies between them: each reply kept costs less
    // than the marker it would leave, and the room that frees is the pastes' again.
    let mut items = Vec::new();
    for (i, (user, reply)) in [(1_978u32, 0u32), (1_319, 3), (319, 0), (320, 0)].into_iter().enumerate() {
        items.push(text(2 * i as u64, Role::User, user));
        items.push(text(2 * i as u64 + 1, Role::Assistant, reply));
    }
    let plan = plan_history(slots(&items), &[], &room(2_457, 2_000));
    let fates = &plan.ledger.fates;
    assert!(fates.iter().skip(1).step_by(2).all(|f| *f == Fate::Kept), "replies kept: {fates:?}");
    assert_eq!(plan.ledger.marker_count(), 0);
    assert!(matches!(fates[0], Fate::Cut { .. }) && matches!(fates[2], Fate::Cut { .. }), "{fates:?}");
    let cost = plan.ledger.cost();
    assert!((2_457 - 2..=2_457).contains(&cost), "the cuts fill what the replies left: {cost}");
}

#[test]
fn markers_only_when_every_long_text_is_at_its_least() {
    let mut items = vec![text(0, Role::User, 5_000)];
    items.extend((1..40).map(|i| text(i, Role::User, 200)));
    let protected = [39];
    let plan = plan_history(slots(&items), &protected, &room(3_000, 100));
    let fates = &plan.ledger.fates;
    assert!(plan.ledger.cost() <= 3_000);
    assert!(matches!(fates[0], Fate::Cut { .. }) && fates[39] != Fate::Omitted, "protected: {fates:?}");
    assert!(fates[1] == Fate::Omitted, "the oldest ordinary request goes first: {fates:?}");
    assert!(fates[1..39].iter().any(|f| *f != Fate::Omitted), "only as many as needed go: {fates:?}");
    // Omitted ones are the oldest: no omitted message after a kept ordinary one.
    let last_omitted = fates.iter().rposition(|f| *f == Fate::Omitted).unwrap_or(0);
    assert!(fates[1..=last_omitted].iter().all(|f| *f == Fate::Omitted), "{fates:?}");
}
