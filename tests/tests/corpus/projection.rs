//! deterministic-v1 replayed through the facade (`annal::Annal::append`, `project`, `compact`,
//! `fork`, as an agent drives it) over every real transcript in the folder named by
//! `ANNAL_CORPUS`, under a 32K and a 16K window: a fork at every tenth of each session, and a replay as an agent
//! drives it (a view before every model step, compacted when due). Every view keeps the
//! properties every projection must have, and user requests come first: no user message under
//! 2,000 tokens is cut or reduced to a marker unless the session's user text alone passes the
//! capacity, and a view that cuts or omits user text uses at least 95% of it.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- projection::`
#![allow(clippy::unwrap_used)]

use std::error::Error;

use annal::{Annal, Block, Budget, CompactOptions, OmissionReason, ProjectOptions, Record, Role};
use annal_formats::parse_transcript;
use annal_support::corpus::{corpus_root, format_files};
use annal_support::records::shown_records_in;

use crate::projection_support::{annal, check_projection, count, shown_verbatim};

type TestResult = Result<(), Box<dyn Error>>;

/// A user message under this many tokens is a request the view must keep whole.
const SHORT_REQUEST_TOKENS: u64 = 2_000;
/// Windows and output ceilings of the replay.
const BUDGETS: [(u32, u32); 2] = [(32_000, 4_000), (16_000, 2_000)];

fn user_tokens(record: &Record) -> u64 {
    let texts = record.blocks.iter().filter_map(|b| match b {
        Block::Text { text } => Some(count(text)),
        _ => None,
    });
    texts.sum()
}

/// The records of `session` as stored (entry ids derived where the transcript has none).
fn stored(history: &Annal, session: &str) -> Result<Vec<Record>, Box<dyn Error>> {
    Ok(shown_records_in(&history.snapshot()?, session, 0)?.into_iter().map(|(_, r)| r).collect())
}

/// Checks one view of `records` (at sourceOrders `orders`, receipts left out) under `budget`;
/// returns how many short requests it kept whole.
fn check_view(
    history: &Annal,
    name: &str,
    records: &[Record],
    orders: &[u64],
    budget: Budget,
) -> Result<u64, String> {
    let view = history.project(name, &ProjectOptions::new(budget)).map_err(|e| format!("{name}: {e}"))?;
    check_projection(records, orders, &view, &budget).map_err(|e| format!("{name}: {e}"))?;
    let capacity = u64::from(budget.capacity_tokens());
    let users: Vec<(u64, &Record)> = orders
        .iter()
        .zip(records)
        .filter(|(_, r)| r.role == Role::User && user_tokens(r) > 0)
        .map(|(o, r)| (*o, r))
        .collect();
    let user_alone: u64 = users.iter().map(|(_, r)| user_tokens(r)).sum();
    let touched = view.omissions.iter().any(|o| match o.reason {
        OmissionReason::UserCut => true,
        OmissionReason::Marker => {
            users.iter().any(|(at, _)| (o.first.source_order..=o.last.source_order).contains(at))
        }
        _ => false,
    });
    if touched && view.stats.tokens.total * 100 < capacity * 95 {
        return Err(format!(
            "{name} at {}: user text cut with {} of {capacity} tokens used",
            budget.window_tokens, view.stats.tokens.total
        ));
    }
    let mut short = 0;
    for (order, record) in &users {
        if user_tokens(record) >= SHORT_REQUEST_TOKENS {
            continue;
        }
        short += 1;
        if !shown_verbatim(&view.messages, record) && user_alone <= capacity {
            return Err(format!(
                "{name} at {}: user request {} (sourceOrder {order}, {} tokens) is not shown whole; user text is {user_alone} of {capacity}",
                budget.window_tokens,
                record.entry_id,
                user_tokens(record)
            ));
        }
    }
    Ok(short)
}

/// Appends `records` step by step to session `name` (a step starts at an assistant record after
/// a record of another role), checking the view before every step and compacting when due.
fn replay(history: &Annal, name: &str, records: &[Record], budget: Budget) -> Result<u64, Box<dyn Error>> {
    let prefix = format!("r{}/", budget.window_tokens / 1_000);
    let compact = CompactOptions::new(ProjectOptions::new(budget));
    let (mut short, mut start) = (0, 0);
    let (mut orders, mut shown) = (Vec::new(), Vec::new());
    while start < records.len() {
        let mut end = start + 1;
        while end < records.len()
            && !(records[end].role == Role::Assistant && records[end - 1].role != Role::Assistant)
        {
            end += 1;
        }
        // Entry ids are unique per history: the replay's copies get their own, a few characters
        // longer (markers name entry ids, so their length counts).
        let copies: Vec<Record> = records[start..end]
            .iter()
            .map(|r| Record { entry_id: format!("{prefix}{}", r.entry_id), ..r.clone() })
            .collect();
        history.append(name, None, copies)?;
        let next = orders.last().map_or(0, |o| o + 1);
        // Compaction receipts take sourceOrders but are never shown.
        for (order, record) in shown_records_in(&history.snapshot()?, name, next)? {
            orders.push(order);
            shown.push(record);
        }
        let view = history.project(name, &ProjectOptions::new(budget))?;
        if view.compaction_due {
            history.compact(name, &compact)?;
        }
        short += check_view(history, name, &shown, &orders, budget)?;
        start = end;
    }
    Ok(short)
}

#[test]
fn corpus_views_keep_every_short_user_request() -> TestResult {
    let files = format_files(&corpus_root()?)?;
    let (_dir, history) = annal();
    let (mut views, mut short) = (0u64, 0u64);
    for file in &files {
        let bytes = std::fs::read(&file.path)?;
        let parsed = parse_transcript(&bytes, file.format, "corpus");
        for session in parsed.sessions.iter().filter(|s| !s.records.is_empty()) {
            let base = format!("{}:{}", file.name, session.name);
            for chunk in session.records.chunks(1000) {
                history.append(&base, None, chunk.to_vec())?;
            }
            let records = stored(&history, &base)?;
            let n = records.len() as u64;
            for (window, output) in BUDGETS {
                short += replay(
                    &history,
                    &format!("{base}@replay{window}"),
                    &records,
                    Budget::new(window, output),
                )?;
            }
            for tenth in 1..=10u64 {
                let at = (n * tenth / 10).max(1);
                let name = format!("{base}@{tenth}");
                history.fork(&base, at, &name)?;
                for (window, output) in BUDGETS {
                    let budget = Budget::new(window, output);
                    let orders: Vec<u64> = (0..at).collect();
                    short += check_view(&history, &name, &records[..at as usize], &orders, budget)?;
                    views += 1;
                }
            }
        }
    }
    assert!(views >= 100, "the corpus gave only {views} views");
    assert!(short > views, "the corpus gave only {short} short requests over {views} views");
    Ok(())
}
