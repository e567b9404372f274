//! The compaction protocol through the public API: a checkpoint committed with its receipt, the
//! view as checkpoint plus later records (prefix-stable until the next compaction), re-derivation
//! from the originals, reuse without a second summarizer call, summaries that fail, time out or
//! come back empty, retired algorithm versions, forks, and checkpoints rebuilt from receipts
//! alone. Concurrent compactions are in checkpoint_claims.rs.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use annal_engine::{
    hash_to_hex, Algorithm, Block, CompactOptions, CompactStatus, MessageBlock, ProjectOptions, Record, Role,
    ViewSource,
};

use crate::projection_support::compaction::{
    budget, filled_store, len, options, receipt_meta, starts_with, turn, with_summarizer, Behaviour,
    Scripted, SESSION,
};
use crate::projection_support::{check_pairs, shaped, texts, Shape};

#[test]
fn a_compaction_commits_what_the_derived_view_showed() {
    let (_dir, store, records) = filled_store(1);
    let project = ProjectOptions::new(budget());
    let derived = store.project(SESSION, &project).unwrap();
    assert_eq!(derived.source, ViewSource::Derived);
    assert!(derived.compaction_due);
    let outcome = store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    assert_eq!(outcome.upto, records.len() as u64);
    assert_eq!(outcome.receipt, Some(records.len() as u64));
    assert_eq!(len(&store, SESSION), records.len() as u64 + 1);
    let meta = receipt_meta(&store, records.len() as u64);
    assert_eq!(meta["algorithmVersion"], "deterministic-v1");
    assert_eq!(meta["key"], hash_to_hex(&outcome.key.unwrap()));
    assert_eq!(meta["projectionHash"], hash_to_hex(&outcome.projection_hash));
    assert!(meta["fallbackReason"].is_null());
    let view = store.project(SESSION, &project).unwrap();
    assert_eq!(
        view.source,
        ViewSource::Checkpoint { key: outcome.key.unwrap(), receipt: records.len() as u64 }
    );
    assert!(!view.compaction_due);
    // Committing changed nothing the model sees: same bytes, receipt not shown.
    assert_eq!(view.hash, derived.hash);
    assert_eq!(view.messages, derived.messages);
    assert!(texts(&view.messages).all(|t| !t.starts_with("annal compaction receipt")));
}

#[test]
fn between_compactions_the_view_only_grows_at_its_end() {
    let (_dir, store, _) = filled_store(2);
    let project = ProjectOptions::new(budget());
    store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    let mut previous = store.project(SESSION, &project).unwrap();
    let mut n = 0;
    loop {
        n += 1;
        store.append(SESSION, None, turn(n)).unwrap();
        let view = store.project(SESSION, &project).unwrap();
        check_pairs(&view.messages).unwrap();
        if view.source == ViewSource::Derived {
            // The checkpoint plus the new turn would pass the capacity: derived anew.
            assert!(view.compaction_due);
            previous = view;
            break;
        }
        assert!(matches!(view.source, ViewSource::Checkpoint { .. }));
        assert!(starts_with(&view.messages, &previous.messages), "step {n} rewrote the prefix");
        assert_eq!(view.messages.len(), previous.messages.len() + 2);
        previous = view;
        if previous.compaction_due || n == 200 {
            break;
        }
    }
    assert!(previous.compaction_due, "the view never reached the trigger");
    assert!(n > 5, "the checkpoint left no room to grow");
    // A new compaction re-derives from the originals, not from the previous projection.
    let outcome = store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    let fresh = store.projection_snapshot().unwrap();
    let originals = fresh.prepare_originals(SESSION, &project).unwrap();
    let originals = originals.render().unwrap();
    let view = store.project(SESSION, &project).unwrap();
    assert_eq!(view.messages, originals.messages);
    assert!(u64::from(budget().trigger_tokens()) >= view.stats.tokens.total);
}

#[test]
fn a_committed_key_is_reused_without_another_summary() {
    let (_dir, store, _) = filled_store(3);
    let before = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    let summarizer =
        Scripted::new(Behaviour::Answer("Goal: fix the ledger. Done: parser. Next: report.".into()));
    let first = store.compact(SESSION, &with_summarizer(&summarizer)).unwrap();
    assert_eq!((first.status, first.algorithm), (CompactStatus::Committed, Algorithm::SummarizedV1));
    assert_eq!(summarizer.calls(), 1);
    // The request is the view as it was sent, then one instruction.
    let request = summarizer.calls.lock().unwrap()[0].clone();
    assert_eq!(request.messages.len(), before.messages.len() + 1);
    assert_eq!(request.messages[..before.messages.len()], before.messages[..]);
    let last = request.messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert!(matches!(&last.blocks[..], [MessageBlock::Text { text }] if text.contains("handoff summary")));
    let mut json = Vec::new();
    request.write_json(&mut json).unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(parsed["messages"].as_array().map(Vec::len), Some(request.messages.len()));
    // The summary is in the view, labelled.
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(view.algorithm, Algorithm::SummarizedV1);
    assert!(texts(&view.messages).any(|t| t.starts_with("[handoff summary") && t.ends_with("Next: report.")));
    assert!(view.stats.tokens.summary > 0);
    let again = store.compact(SESSION, &with_summarizer(&summarizer)).unwrap();
    assert_eq!(again.status, CompactStatus::Reused);
    assert_eq!(again.key, first.key);
    assert_eq!(again.projection_hash, first.projection_hash);
    assert_eq!(summarizer.calls(), 1, "a committed key called the summarizer again");
}

#[test]
fn a_failed_summary_commits_deterministic_v1_with_the_reason() {
    // The summarizer's default timeout (a minute) is far beyond any of these answers, so a busy
    // machine cannot turn a failure, an empty or an oversized answer into a timeout.
    for (behaviour, reason) in [
        (Behaviour::Fail, "the summarizer failed: the model is overloaded"),
        (Behaviour::Empty, "the summarizer returned nothing"),
        (Behaviour::Answer("word ".repeat(20_000)), "more than the 4096 allowed"),
    ] {
        falls_back_with(Scripted::new(behaviour), reason);
    }
}

#[test]
fn a_summary_that_times_out_commits_deterministic_v1_with_the_reason() {
    // The only short timeout: the summarizer sleeps far longer than it, so however slow the
    // machine, the answer never arrives in time (the sleeping thread is left behind, not joined).
    let mut summarizer = Scripted::new(Behaviour::Sleep(Duration::from_secs(120)));
    Arc::get_mut(&mut summarizer).unwrap().timeout = Duration::from_millis(100);
    falls_back_with(summarizer, "did not answer within 100 ms");
}

/// A compaction with `summarizer` commits deterministic-v1 with a receipt saying `reason`, and
/// the key is reused afterwards without calling the summarizer again.
fn falls_back_with(summarizer: Arc<Scripted>, reason: &str) {
    let (_dir, store, records) = filled_store(4);
    let outcome = store.compact(SESSION, &with_summarizer(&summarizer)).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    assert_eq!(outcome.requested, Algorithm::SummarizedV1);
    assert_eq!(outcome.algorithm, Algorithm::DeterministicV1);
    let got = outcome.fallback_reason.clone().unwrap();
    assert!(got.contains(reason), "{got:?} should say {reason:?}");
    let meta = receipt_meta(&store, records.len() as u64);
    assert_eq!(meta["algorithmVersion"], "deterministic-v1");
    assert_eq!(meta["requestedAlgorithm"], "summarized-v1");
    assert_eq!(meta["fallbackReason"].as_str(), Some(got.as_str()));
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert!(texts(&view.messages).all(|t| !t.starts_with("[handoff summary")));
    // The same key is reused: that prefix is not sent to the summarizer again.
    let calls = summarizer.calls();
    assert_eq!(store.compact(SESSION, &with_summarizer(&summarizer)).unwrap().status, CompactStatus::Reused);
    assert_eq!(summarizer.calls(), calls);
}

#[test]
fn no_summarizer_and_no_need_are_not_errors() {
    let (_dir, store, _) = filled_store(5);
    let outcome = store.compact(SESSION, &options(Algorithm::SummarizedV1)).unwrap();
    assert_eq!(outcome.algorithm, Algorithm::DeterministicV1);
    assert_eq!(outcome.fallback_reason.as_deref(), Some("no summarizer was given"));
    // A small session is under the trigger: nothing is written.
    let (_dir, small) = crate::projection_support::store();
    small.append(SESSION, Some(0), shaped(SESSION, &Shape::plain(5, 2))).unwrap();
    let before = len(&small, SESSION);
    let outcome = small.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.status, CompactStatus::NotNeeded);
    assert_eq!(len(&small, SESSION), before);
    let forced =
        small.compact(SESSION, &CompactOptions { force: true, ..options(Algorithm::DeterministicV1) });
    assert_eq!(forced.unwrap().status, CompactStatus::Committed);
    assert_eq!(len(&small, SESSION), before + 1);
    let view = small.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(view.stats.tail_start, 0, "a checkpoint under the trigger cuts nothing");
}

#[test]
fn a_retired_algorithm_version_is_re_covered_once() {
    let (_dir, store, records) = filled_store(6);
    let n = records.len() as u64;
    let retired = serde_json::json!({
        "version": 1, "key": hash_to_hex(&[7; 32]), "algorithmVersion": "deterministic-v0",
        "requestedAlgorithm": "deterministic-v0", "upto": n, "end": n,
        "budget": {"windowTokens": 32000, "maxOutputTokens": 4000, "tailTokens": 2000, "evidenceTokens": 1024,
                   "historyTokens": 4000, "summaryTokens": 4096},
        "projectionHash": hash_to_hex(&[0; 32]),
    });
    let mut receipt = Record::text("old-receipt", Role::System, "annal compaction receipt (an old version)");
    receipt.meta.insert("annal.receipt".into(), retired.to_string());
    store.append(SESSION, Some(n), vec![receipt]).unwrap();
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(view.retired_checkpoint.as_deref(), Some("deterministic-v0"));
    assert_eq!(view.source, ViewSource::Derived);
    assert!(view.compaction_due);
    assert!(texts(&view.messages).all(|t| !t.contains("an old version")), "a receipt was shown");
    let outcome = store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(view.retired_checkpoint, None);
    assert!(matches!(view.source, ViewSource::Checkpoint { .. }));
    assert_eq!(
        store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap().status,
        CompactStatus::Reused
    );
}

#[test]
fn a_fork_starts_from_its_parents_checkpoint() {
    let (_dir, store, _) = filled_store(10);
    let project = ProjectOptions::new(budget());
    store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    let parent_view = store.project(SESSION, &project).unwrap();
    let at = len(&store, SESSION);
    store.fork(SESSION, at, "child").unwrap();
    let child_view = store.project("child", &project).unwrap();
    assert_eq!(child_view.messages, parent_view.messages);
    assert_eq!(child_view.source, parent_view.source);
    store.append("child", Some(at), turn(1)).unwrap();
    let grown = store.project("child", &project).unwrap();
    assert!(starts_with(&grown.messages, &parent_view.messages));
    // A fork from before the compaction does not see it.
    store.fork(SESSION, at - 1, "early").unwrap();
    let early = store.project("early", &project).unwrap();
    assert_eq!(early.source, ViewSource::Derived);
    assert_eq!(early.messages, parent_view.messages, "the same records derive the same view");
}

#[test]
fn checkpoints_are_rebuilt_from_their_receipts() {
    let (_dir, store, _) = filled_store(11);
    let summarizer = Scripted::new(Behaviour::Answer("Summary: ledger fixed, report next.".into()));
    store.compact(SESSION, &with_summarizer(&summarizer)).unwrap();
    store.append(SESSION, None, turn(1)).unwrap();
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    // Export and import into a store with no checkpoint rows: the receipt alone rebuilds it.
    let mut jsonl = Vec::new();
    annal_formats::export_jsonl(&store.snapshot().unwrap(), SESSION, false, &mut jsonl).unwrap();
    let (_copy_dir, copy) = crate::projection_support::store();
    let records: Vec<Record> = String::from_utf8(jsonl)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| annal_engine::record_from_json(&serde_json::from_str(line).unwrap()).unwrap().record)
        .collect();
    copy.append(SESSION, Some(0), records).unwrap();
    let rebuilt = copy.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(rebuilt.messages, view.messages);
    assert_eq!(rebuilt.hash, view.hash);
    assert_eq!(rebuilt.algorithm, Algorithm::SummarizedV1);
    assert_eq!(rebuilt.source, view.source);
}

#[test]
fn the_pending_exchange_stays_after_the_checkpoint() {
    let (_dir, store, records) = filled_store(12);
    let n = records.len() as u64;
    let call = Block::ToolCall {
        call_id: "late-call".into(),
        tool: "Bash".into(),
        input: r#"{"command":"cargo test"}"#.into(),
        target: String::new(),
    };
    let asking = Record { blocks: vec![call], ..Record::text("late-1", Role::Assistant, "") };
    store.append(SESSION, Some(n), vec![asking]).unwrap();
    let outcome = store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.upto, n, "the pending call is not covered");
    let waiting = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert!(texts(&waiting.messages).any(|t| t.contains("late-call") && t.contains("has no result")));
    let answer = Record {
        blocks: vec![Block::ToolResult {
            call_id: "late-call".into(),
            tool: "Bash".into(),
            is_error: false,
            output: "test result: ok".into(),
        }],
        ..Record::text("late-2", Role::Tool, "")
    };
    store.append(SESSION, None, vec![answer]).unwrap();
    let answered = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    check_pairs(&answered.messages).unwrap();
    let call_shown = answered
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .any(|b| matches!(b, MessageBlock::ToolCall { call_id, .. } if call_id == "late-call"));
    assert!(call_shown, "the call pairs with its result once it arrives");
}

#[test]
fn a_record_that_only_looks_like_a_receipt_names_no_checkpoint() {
    let (_dir, store, records) = filled_store(13);
    let n = records.len() as u64;
    let mut odd = Record::text("hand-made", Role::System, "not really a receipt");
    odd.meta.insert("annal.receipt".into(), serde_json::json!({"key": hash_to_hex(&[3; 32])}).to_string());
    store.append(SESSION, Some(n), vec![odd]).unwrap();
    let view = store.project(SESSION, &ProjectOptions::new(budget())).unwrap();
    assert_eq!(view.source, ViewSource::Derived);
    assert!(view.retired_checkpoint.unwrap().starts_with("an unreadable receipt"));
    assert!(texts(&view.messages).all(|t| !t.contains("not really a receipt")));
    let outcome = store.compact(SESSION, &options(Algorithm::DeterministicV1)).unwrap();
    assert_eq!(outcome.status, CompactStatus::Committed);
    assert_eq!(outcome.upto, n, "the look-alike is not a record a checkpoint covers");
}
