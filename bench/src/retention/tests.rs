//! A tiny exam (two profiles, one window, short sessions) run twice: the report is the same
//! bytes both times, and deterministic-v1 keeps its own invariants. No test compares annal with
//! another system: which keeps more is what the exam measures, not what it assumes.

use super::baselines::{Baseline, Rules, Slot};
use super::drive::drive;
use super::pooled::pool;
use super::report::render;
use super::session::Profile;
use super::summarizer::{stand_in, HEADER, SUMMARY_TOKENS};
use super::{run, synthetic, Contender, ExamConfig, WINDOWS};

fn tiny() -> ExamConfig {
    ExamConfig {
        profiles: vec![Profile::Records, Profile::Paste],
        windows: vec![WINDOWS[0]],
        length_multiple: 1.5,
        facts: 40,
        decoys: 10,
        seeds: vec![1],
        sweep: false,
        ..ExamConfig::default()
    }
}

#[test]
fn tiny_exam_is_deterministic_and_keeps_its_invariants() -> anyhow::Result<()> {
    let config = tiny();
    let first = run(&config)?;
    let second = run(&config)?;
    let report = render(&first);
    assert_eq!(report, render(&second), "two runs of one exam differ");
    assert!(report.contains("## Targets"));

    let det = pool(first.sessions.iter(), Contender::Deterministic);
    assert!(det.compactions > 0, "the session must compact to test anything");
    assert_eq!((det.task_lost, det.ask_lost, det.orphans), (0, 0, 0));
    // Where no user message nears the capacity; on `paste` these are the report's targets, not
    // yet met at 32K.
    let records =
        pool(first.sessions.iter().filter(|r| r.session.label == "records"), Contender::Deterministic);
    assert_eq!(records.mean[4].0, records.mean[4].1, "user facts are kept verbatim in every scored request");
    assert_eq!(records.marker_only, 0, "something original survives every compaction");
    assert!(det.prefix_between.0 >= det.prefix_between.1 as f64 - 1e-9, "prefix stable between compactions");
    for contender in Contender::ALL {
        let p = pool(first.sessions.iter(), contender);
        assert_eq!(p.decoys, 0, "{} found a decoy", contender.label());
    }
    Ok(())
}

#[test]
fn scored_requests_count_only_facts_stated_before_them() -> anyhow::Result<()> {
    let config = tiny();
    let session = synthetic(&config, 1, Profile::Records, WINDOWS[0]);
    let budget = WINDOWS[0].budget();
    let mut naive = Baseline::new(Rules::Naive, Slot::Empty, budget);
    let result = drive(&session, &mut naive, u64::from(budget.capacity_tokens()))?;
    assert_eq!(result.scored.len(), result.compactions.len() + 1, "each compaction and the final request");
    let stated: Vec<u64> = result.scored.iter().map(|s| s[3].1).collect();
    assert!(stated.windows(2).all(|w| w[0] <= w[1]), "facts stated only grow: {stated:?}");
    assert_eq!(result.final_score()[3].1, session.facts.len() as u64, "every fact is stated by the end");
    Ok(())
}

#[test]
fn the_stand_in_fits_its_budget_and_carries_earlier_summaries() -> anyhow::Result<()> {
    let config = tiny();
    let session = synthetic(&config, 1, Profile::Records, WINDOWS[0]);
    let view: super::request::Request =
        session.records().map(|r| std::sync::Arc::new(super::request::Msg::from_record(r, 0))).collect();
    let summary = stand_in(&view, SUMMARY_TOKENS);
    assert!(summary.starts_with(HEADER));
    assert!(super::session::text_tokens(&summary) <= u64::from(SUMMARY_TOKENS) + 64);
    let carried =
        vec![std::sync::Arc::new(super::request::Msg::text(annal_engine::Role::User, &summary, 0, true))];
    assert_eq!(stand_in(&carried, SUMMARY_TOKENS), summary, "a summary alone summarises to itself");
    Ok(())
}
