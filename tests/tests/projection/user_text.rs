//! User requests come first in deterministic-v1, projected through the facade
//! (`annal::Annal::project`), on the two shapes real sessions showed: a
//! specification pasted into the first message (the paste is cut to fill the room left, every
//! later request stays whole) and a newest turn of dozens of tool steps (its older steps move to
//! the evidence index before any earlier request gives way).
#![allow(clippy::unwrap_used)]

use annal::{Block, Budget, OmissionReason, ProjectOptions, Projection, Record, Role};

use crate::projection_support::{
    annal, call, check_projection, filler, record, result, shown_verbatim, texts,
};

/// Real-world text: multi-byte spaces, CJK, emoji, combining marks and long lines.
fn paste(chars: usize) -> String {
    let line = "§ 4.2 Der Dienst MUSS Anfragen\u{2009}wiederholen — 再試行は最大3回 🚀 e\u{301}tat; ";
    line.chars().cycle().take(chars).collect()
}

/// The view of `records` appended to a fresh store, after the shared projection checks.
fn checked_view(records: &[Record], budget: Budget) -> Projection<'static> {
    let (_dir, annal) = annal();
    annal.append("s", Some(0), records.to_vec()).unwrap();
    let view = annal.project("s", &ProjectOptions::new(budget)).unwrap();
    let orders: Vec<u64> = (0..records.len() as u64).collect();
    check_projection(records, &orders, &view, &budget).unwrap();
    view
}

/// One coding step: a reply with a call, and its result of `output_chars`.
fn step(records: &mut Vec<Record>, id: &str, output_chars: usize) {
    let input = format!(r#"{{"command":"cargo test -p {id}"}}"#);
    records.push(record(
        &format!("{id}-call"),
        Role::Assistant,
        vec![Block::Text { text: format!("Running the tests of {id}.") }, call(id, "Bash", &input)],
    ));
    records.push(record(
        &format!("{id}-out"),
        Role::Tool,
        vec![result(id, "Bash", false, filler(output_chars, &format!("{id}-line")))],
    ));
}

fn requests_shown(view: &Projection<'_>, records: &[Record], ids: &[&str]) {
    for id in ids {
        let request = records.iter().find(|r| r.entry_id == *id).unwrap();
        assert!(shown_verbatim(&view.messages, request), "request {id} is not shown whole");
    }
}

#[test]
fn a_pasted_specification_is_cut_before_any_later_request() {
    // ~25,000 tokens of specification, then four short requests, each followed by a turn of
    // tool steps, as the real session that showed the fault.
    let mut records = vec![Record::text("spec", Role::User, paste(100_000))];
    let asks = [
        "let's add a few things to the implementation: an AGENTS.md with the conventions",
        "when it comes to the UI, we should modify the plan so the settings page comes first",
        "we dont need to add the pixel-precise references",
        "shouldnt hte docker compose include a redis instance?",
    ];
    for (t, ask) in asks.iter().enumerate() {
        records.push(Record::text(format!("ask{t}"), Role::User, *ask));
        for s in 0..8 {
            step(&mut records, &format!("t{t}s{s}"), 2_400);
        }
        records.push(Record::text(format!("done{t}"), Role::Assistant, format!("Done with step {t}.")));
    }
    let budget = Budget::new(32_000, 4_000);
    let view = checked_view(&records, budget);
    requests_shown(&view, &records, &["ask0", "ask1", "ask2", "ask3"]);
    // The paste gives: cut to head and tail around a note naming it, filling the room.
    let cut = view.omissions.iter().find(|o| o.reason == OmissionReason::UserCut).unwrap();
    assert_eq!((cut.first.entry_id.as_str(), cut.first.source_order), ("spec", 0));
    let all: Vec<&str> = texts(&view.messages).collect();
    let shown = all.iter().find(|t| t.contains("[… cut: entry spec, sourceOrder 0,")).unwrap();
    assert!(shown.starts_with("§ 4.2 Der Dienst"), "the cut keeps the opening");
    let capacity = u64::from(budget.capacity_tokens());
    assert!(view.stats.tokens.total * 100 >= capacity * 95, "{:?}", view.stats.tokens);
    assert!(view.stats.tokens.user > 10_000, "the paste keeps what the room allows: {:?}", view.stats.tokens);
}

#[test]
fn a_long_newest_turn_moves_its_older_steps_to_evidence_first() {
    // Four earlier requests of ~1,000 tokens, then a turn whose steps pass the capacity.
    let mut records = Vec::new();
    for t in 0..4 {
        records.push(Record::text(format!("ask{t}"), Role::User, paste(4_000)));
        step(&mut records, &format!("early{t}"), 400);
        records.push(Record::text(format!("done{t}"), Role::Assistant, "Done."));
    }
    records.push(Record::text("newest", Role::User, "now make the whole suite pass, one crate at a time"));
    for s in 0..40 {
        step(&mut records, &format!("n{s}"), 2_400);
    }
    let budget = Budget::new(32_000, 4_000);
    let view = checked_view(&records, budget);
    requests_shown(&view, &records, &["ask0", "ask1", "ask2", "ask3", "newest"]);
    let newest = records.iter().position(|r| r.entry_id == "newest").unwrap() as u64;
    assert!(view.stats.tail_start > newest + 1, "the turn's older steps left the tail: {:?}", view.stats);
    let tools =
        view.omissions.iter().find(|o| matches!(o.reason, OmissionReason::ToolRecords { .. })).unwrap();
    assert!(tools.last.source_order > newest, "the older steps are in the evidence index");
    assert_eq!(view.stats.kept.user_messages_cut + view.stats.omitted.user_messages, 0);
}
