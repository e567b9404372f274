//! deterministic-v1 through the facade (`annal::Annal::project`), on sessions built for one rule
//! each: the newest turn kept whole, a tail opening mid-turn with its request ahead, a huge output
//! cut to head and tail, user text past the capacity (cut to one level), evidence rows (errors
//! first, whole JSON objects), markers, the order and shape of a compacted view, unpaired blocks,
//! the JSON output and its hash.
#![allow(clippy::unwrap_used)]

use annal::snapshot::hash_to_hex;
use annal::{
    Annal, Block, Budget, Message, MessageBlock, ProjectOptions, Projection, Record, Role, ViewSource,
};
// The canonical message bytes and their hash are the engine's; the facade hands out the result.
use annal_engine::{projection_hash, write_messages_json};

use crate::projection_support::{
    annal, call, check_pairs, check_projection, filler, marker_range, record, result, shaped, texts, Shape,
};

fn project(annal: &Annal, session: &str, budget: Budget) -> Projection<'static> {
    annal.project(session, &ProjectOptions::new(budget)).unwrap()
}

fn filled(records: &[Record]) -> (tempfile::TempDir, Annal) {
    let (dir, annal) = annal();
    annal.append("s", Some(0), records.to_vec()).unwrap();
    (dir, annal)
}

fn orders(records: &[Record]) -> Vec<u64> {
    (0..records.len() as u64).collect()
}

fn text_of(message: &Message<'_>) -> String {
    message
        .blocks
        .iter()
        .filter_map(|b| match b {
            MessageBlock::Text { text } => Some(text.as_ref()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_newest_turn_larger_than_the_tail_is_kept_whole() {
    let mut shape = Shape::plain(21, 12);
    shape.big_newest_turn = true;
    let records = shaped("s", &shape);
    let budget = Budget { tail_tokens: 1_000, ..Budget::new(48_000, 4_000) };
    let budget = Budget { history_tokens: 2_000, ..budget };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let newest = records.iter().rposition(|r| r.role == Role::User).unwrap() as u64;
    assert_eq!(view.source, ViewSource::Derived);
    assert!(view.stats.tail_start <= newest, "the newest turn was split");
    assert!(view.stats.tokens.tail > 1_000);
    assert_eq!(view.stats.omitted.cut_blocks, 0);
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}

#[test]
fn a_tail_opening_mid_turn_keeps_its_request_ahead_of_it() {
    let mut shape = Shape::plain(22, 6);
    shape.big_newest_turn = true;
    let records = shaped("s", &shape);
    let budget = Budget { tail_tokens: 2_000, history_tokens: 4_000, ..Budget::new(24_000, 2_000) };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let newest = records.iter().rposition(|r| r.role == Role::User).unwrap();
    assert!(view.stats.tail_start > newest as u64, "the tail should open mid-turn here");
    let Block::Text { text: request } = &records[newest].blocks[0] else { panic!("a user text") };
    let index_message = view.messages.iter().position(|m| text_of(m).starts_with("[evidence index")).unwrap();
    let request_at =
        view.messages.iter().position(|m| m.role == Role::User && text_of(m) == *request).unwrap();
    assert!(request_at < index_message, "the opening request is in the history, ahead of the tail");
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}

#[test]
fn a_huge_output_the_tail_must_keep_is_cut_to_head_and_tail() {
    let output: String = (0..40_000).map(|i| format!("line {i} of the build log\n")).collect();
    let records = vec![
        Record::text("u1", Role::User, "Build the project and show me the full log."),
        record(
            "a1",
            Role::Assistant,
            vec![
                Block::Text { text: "Building.".into() },
                call("c1", "Bash", r#"{"command":"cargo build -vv"}"#),
            ],
        ),
        record("t1", Role::Tool, vec![result("c1", "Bash", false, output.clone())]),
    ];
    let budget = Budget::new(16_000, 2_000);
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    assert_eq!(view.stats.omitted.cut_blocks, 1);
    let shown = view
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .find_map(|b| match b {
            MessageBlock::ToolResult { call_id, output, .. } if call_id == "c1" => Some(output.to_string()),
            _ => None,
        })
        .unwrap();
    let (head, rest) = shown.split_once("\n[… cut: entry t1, sourceOrder 2, block 0, ~").unwrap();
    let (_, tail) = rest.split_once("…]\n").unwrap();
    assert!(output.starts_with(head) && output.ends_with(tail));
    assert!(!head.is_empty() && !tail.is_empty());
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}

#[test]
fn user_text_past_the_capacity_is_cut_to_one_level_filling_the_room() {
    let mut records = Vec::new();
    for turn in 0..6 {
        records.push(Record::text(
            format!("u{turn}"),
            Role::User,
            filler(40_000, &format!("constraint{turn}")),
        ));
        records.push(Record::text(format!("a{turn}"), Role::Assistant, "Understood."));
    }
    let budget = Budget::new(32_000, 4_000);
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let all: Vec<&str> = texts(&view.messages).collect();
    // Six equal messages, each larger than the room: each is cut (the newest request too, ahead
    // of the tail), none reduced to a marker, and every cut opens with its own text and names
    // its original.
    assert_eq!(view.stats.kept.user_messages_cut, 6, "{:?}", view.stats);
    assert_eq!(view.stats.omitted.user_messages, 0);
    for turn in 0..6 {
        let id = format!("[… cut: entry u{turn}, sourceOrder {},", 2 * turn);
        let cut = all.iter().find(|t| t.contains(&id)).unwrap_or_else(|| panic!("no cut names u{turn}"));
        assert!(cut.starts_with(&format!("constraint{turn} ")), "a cut keeps the opening");
    }
    let capacity = u64::from(budget.capacity_tokens());
    assert!(view.stats.tokens.total * 100 >= capacity * 95, "cuts fill the room: {:?}", view.stats.tokens);
    // The structured list names each cut original, and `--json` carries it.
    let cuts: Vec<(&str, u64)> = view
        .omissions
        .iter()
        .filter(|o| o.reason == annal_engine::OmissionReason::UserCut)
        .map(|o| (o.first.entry_id.as_str(), o.first.source_order))
        .collect();
    assert_eq!(
        cuts,
        (0..6).map(|t| (["u0", "u1", "u2", "u3", "u4", "u5"][t], 2 * t as u64)).collect::<Vec<_>>()
    );
    assert!(view.omissions.iter().all(|o| o.tokens > 0));
    let mut json = Vec::new();
    view.write_json(&mut json).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["omitted"][0]["why"], "userCut");
    assert_eq!(json["omitted"][0]["entryId"], "u0");
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}

fn tool_session() -> Vec<Record> {
    let mut records =
        vec![Record::text("u0", Role::User, "Fix the failing tests; keep the config schema stable.")];
    for i in 0..60 {
        let (tool, input) = match i % 4 {
            0 => ("Read", format!(r#"{{"file_path":"src/module{}.rs"}}"#, i % 7)),
            1 => ("Bash", r#"{"command":"cargo test --workspace"}"#.to_owned()),
            2 => ("Edit", format!(r#"{{"file_path":"config/app{}.toml","new":"a","old":"b"}}"#, i % 3)),
            _ => ("Grep", r#"{"pattern":"fn parse","path":"src"}"#.to_owned()),
        };
        let id = format!("c{i}");
        records.push(record(
            &format!("a{i}"),
            Role::Assistant,
            vec![Block::Text { text: filler(600, &format!("step{i}")) }, call(&id, tool, &input)],
        ));
        let failed = i % 13 == 5;
        records.push(record(
            &format!("t{i}"),
            Role::Tool,
            vec![result(&id, tool, failed, filler(2_000, &format!("out{i}")))],
        ));
    }
    records.push(Record::text("u1", Role::User, "Now summarise what changed."));
    records.push(Record::text("a-end", Role::Assistant, "Three modules and the config changed."));
    records
}

#[test]
fn evidence_rows_are_whole_json_objects_errors_first() {
    let records = tool_session();
    let budget = Budget {
        evidence_tokens: 2_048,
        history_tokens: 4_000,
        tail_tokens: 2_000,
        ..Budget::new(32_000, 4_000)
    };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let index = view.messages.iter().find(|m| text_of(m).starts_with("[evidence index")).unwrap();
    let [MessageBlock::Text { text: label }, MessageBlock::Text { text: rows }] = &index.blocks[..] else {
        panic!("the index is a label and a block of rows")
    };
    assert!(label.contains(&format!("{} of their", view.stats.kept.evidence_rows)));
    let rows: Vec<serde_json::Value> = rows.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len() as u64, view.stats.kept.evidence_rows);
    assert!(rows.len() >= 5);
    for row in &rows {
        let keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected =
            vec!["blockIndex", "entryId", "error", "head", "sourceOrder", "tail", "target", "tool"];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        let order = row["sourceOrder"].as_u64().unwrap() as usize;
        assert_eq!(row["entryId"], records[order].entry_id.as_str());
        let Block::ToolResult { output, .. } = &records[order].blocks[0] else { panic!("rows name results") };
        assert!(output.starts_with(row["head"].as_str().unwrap()));
        assert!(output.ends_with(row["tail"].as_str().unwrap()));
    }
    let errors = rows.iter().take_while(|r| r["error"] == true).count();
    let all_errors = rows.iter().filter(|r| r["error"] == true).count();
    assert!(errors >= 1 && errors == all_errors, "errors come first");
    assert!(rows.iter().any(|r| r["target"].as_str().unwrap().starts_with("config/")));
    assert!(view.stats.tokens.evidence <= 2_048);
    check_projection(&records, &orders(&records), &view, &budget).unwrap();

    // The shared checks see a row dropped from the index: the label then names one more.
    let mut dropped = view.clone();
    for message in &mut dropped.messages {
        if let [_, MessageBlock::Text { text }] = &mut message.blocks[..] {
            if text.starts_with("{\"entryId\"") {
                let kept: Vec<&str> = text.lines().skip(1).collect();
                *text = kept.join("\n").into();
            }
        }
    }
    let error = check_projection(&records, &orders(&records), &dropped, &budget).unwrap_err();
    assert!(error.contains("rows"), "{error}");
}

#[test]
fn a_compacted_view_is_history_then_index_then_tail() {
    let shape =
        Shape { thinking: true, system: true, parallel: true, split_parallel: true, ..Shape::plain(23, 20) };
    let records = shaped("s", &shape);
    let budget = Budget { tail_tokens: 2_000, history_tokens: 3_000, ..Budget::new(32_000, 4_000) };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let index = view.messages.iter().position(|m| text_of(m).starts_with("[evidence index")).unwrap();
    let (history, tail) = (&view.messages[..index], &view.messages[index + 1..]);
    for message in history {
        assert!(matches!(message.role, Role::User | Role::Assistant));
        assert!(
            message.blocks.iter().all(|b| matches!(b, MessageBlock::Text { .. })),
            "only text before the tail"
        );
    }
    assert_eq!(tail.len() as u64, view.stats.kept.tail_records);
    let tail_records: Vec<&Record> = records[view.stats.tail_start as usize..].iter().collect();
    for (message, record) in tail.iter().zip(&tail_records) {
        assert_eq!(message.role, record.role);
    }
    // History in sourceOrder: markers' ranges increase.
    let ranges: Vec<(u64, u64)> =
        texts(history).filter_map(marker_range).map(|m| (m.first, m.last)).collect();
    assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0));
    assert!(ranges.iter().all(|r| r.1 < view.stats.tail_start));
    for text in texts(history).filter(|t| t.starts_with("[omitted")) {
        let range = marker_range(text).unwrap();
        if range.first == range.last {
            let tokens = text.rsplit_once(", ~").unwrap().1;
            assert!(tokens.ends_with(" tokens]"), "{text}");
            assert_eq!(
                text,
                format!(
                    "[omitted / not summarised: entry {}, sourceOrder {}, ~{tokens}",
                    range.first_id, range.first
                )
            );
        }
    }
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}

#[test]
fn a_result_without_its_call_is_a_note_never_an_orphan() {
    let records = vec![
        record("t0", Role::Tool, vec![result("lost", "Read", false, "fn main() {}".into())]),
        Record::text("u0", Role::User, "What was that?"),
        record(
            "a0",
            Role::Assistant,
            vec![
                call("c1", "Read", r#"{"file_path":"a.rs"}"#),
                call("c2", "Read", r#"{"file_path":"b.rs"}"#),
            ],
        ),
        record(
            "t1",
            Role::Tool,
            vec![result("c2", "Read", false, "b".into()), result("c1", "Read", true, "no such file".into())],
        ),
    ];
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", Budget::new(32_000, 4_000));
    assert_eq!(view.source, ViewSource::Live);
    check_pairs(&view.messages).unwrap();
    assert_eq!(view.stats.omitted.unpaired_blocks, 1);
    assert!(texts(&view.messages).any(|t| t.contains("(call lost)") && t.ends_with("fn main() {}")));
    let calls = view
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter(|b| matches!(b, MessageBlock::ToolCall { .. }))
        .count();
    assert_eq!(calls, 2, "parallel calls answered out of order stay calls");
}

#[test]
fn the_json_output_carries_the_hash_of_its_messages() {
    let records = shaped("s", &Shape::plain(24, 16));
    let budget = Budget { history_tokens: 3_000, ..Budget::new(32_000, 4_000) };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    let mut out = Vec::new();
    view.write_json(&mut out).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["algorithmVersion", "hash", "messages", "omitted", "stats"]);
    assert_eq!(value["algorithmVersion"], "deterministic-v1");
    assert_eq!(value["hash"], hash_to_hex(&view.hash));
    assert_eq!(value["stats"]["tokens"]["total"], view.stats.tokens.total);
    assert_eq!(value["stats"]["source"]["kind"], "derived");
    let mut canonical = Vec::new();
    write_messages_json(&mut canonical, &view.messages).unwrap();
    assert_eq!(projection_hash(&view.messages), view.hash);
    let messages: serde_json::Value = serde_json::from_slice(&canonical).unwrap();
    assert_eq!(messages, value["messages"]);
    // What the command line prints is the same JSON.
    assert_eq!(annal::json::projection(&view).as_str().as_bytes(), out.as_slice());
    // The zero-copy path from the originals renders the same view while no checkpoint exists.
    let originals = annal.project_originals("s", &ProjectOptions::new(budget)).unwrap();
    assert_eq!(originals.hash, view.hash);
    assert_eq!(originals.messages, view.messages);
}

#[test]
fn markers_longer_than_planned_still_fit_the_capacity() {
    // Entry ids of 400 bytes make every marker cost about 230 tokens, not the 40 planned.
    let id = |n: usize| format!("{n:04}-{}", "x".repeat(395));
    let mut records = Vec::new();
    for turn in 0..40 {
        records.push(Record::text(id(3 * turn), Role::User, filler(1_200, &format!("ask{turn}"))));
        records.push(Record::text(id(3 * turn + 1), Role::Assistant, filler(2_000, &format!("work{turn}"))));
        records.push(Record::text(id(3 * turn + 2), Role::Assistant, filler(1_600, &format!("done{turn}"))));
    }
    let budget = Budget { tail_tokens: 1_000, history_tokens: 8_000, ..Budget::new(16_000, 2_000) };
    let (_dir, annal) = filled(&records);
    let view = project(&annal, "s", budget);
    assert!(view.stats.omitted.markers > 0);
    assert!(view.stats.tokens.markers > 40 * view.stats.omitted.markers, "markers are longer than planned");
    // Planned again with the measured markers: user text is cut no further than it must be.
    assert!(view.stats.tokens.total > u64::from(budget.capacity_tokens()) * 9 / 10, "{:?}", view.stats);
    check_projection(&records, &orders(&records), &view, &budget).unwrap();
}
