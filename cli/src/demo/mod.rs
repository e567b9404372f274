//! `annal demo`: a guided tour on a generated coding session in a temporary store. It needs no
//! setup, leaves nothing behind, and prints each step with a short note on what it shows.

mod compact;
mod search;

use std::collections::BTreeSet;
use std::io::Write;
use std::time::{Duration, Instant};

use annal::error::AppendError;
use annal::snapshot::{BlockView, Payload};
use annal::{Annal, Block, Options, Record, Role, Snapshot};
use anyhow::{anyhow, Context};

use crate::generate::{coding_session, GeneratedSession, SessionSpec};
use crate::listing::{write_sessions, Stats};
use crate::output::{bytes, count, plural, Out};
use crate::render::{write_record, Style};
use crate::store::StoreLocation;
use crate::verify::summary;

const SESSION: &str = "ledger-fix";
const SEED: u64 = 2026;
const TURNS: usize = 8;
/// Concurrent agents in the group-commit step, and the records each appends one by one.
const AGENTS: usize = 4;
const AGENT_APPENDS: usize = 30;

/// The compact record style of the tour.
const TOUR: Style = Style { text_lines: 3, output_head: 2, output_tail: 1, width: 96 };

/// Runs the tour.
pub(crate) fn run(out: &mut Out) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("annal-demo-")
        .tempdir()
        .context("cannot create a temporary folder for the demo store")?;
    let path = dir.path().join("annal.redb");
    let location = StoreLocation::resolve(Some(path.clone()))?;
    // The search step opens the index when it comes to it, to show indexing on its own.
    let store = Annal::open_with(&path, &Options { index_eagerly: false, ..Options::default() })?;
    let session = coding_session(&SessionSpec { name: SESSION.into(), seed: SEED, turns: TURNS });

    writeln!(out, "annal demo: a tour of an append-only session journal, in a throwaway store")?;
    writeln!(out, "  store {} (deleted at the end)", path.display())?;
    describe(out, &session)?;
    append_turns(out, &store, &session)?;
    group_commit(out, &store)?;
    show_records(out, &store)?;
    retry(out, &store, &session)?;
    conflict(out, &store, &session)?;
    fork(out, &store, &session)?;
    search::search_and_get(out, &store, SESSION)?;
    compact::tour(out, &store, SESSION)?;
    verify(out, &store)?;
    stats(out, &store, &location)?;
    heading(out, "Try it on your own store")?;
    writeln!(out, "  (default: annal.redb in your data directory; --db PATH or ANNAL_DB to choose)")?;
    let line = r#"{"role":"user","blocks":[{"type":"text","text":"hi"}]}"#;
    writeln!(out, "  echo '{line}' | annal append notes")?;
    writeln!(out, "  annal show notes      annal sessions      annal fork notes --at 1      annal verify")?;
    out.flush()?;
    store.close().context("cannot close the demo store")?;
    Ok(())
}

fn heading(out: &mut Out, title: &str) -> std::io::Result<()> {
    out.flush()?;
    writeln!(out, "\n▸ {title}")
}

fn millis(elapsed: Duration) -> String {
    format!("{:.1} ms", elapsed.as_secs_f64() * 1000.0)
}

fn describe(out: &mut Out, session: &GeneratedSession) -> anyhow::Result<()> {
    let (mut calls, mut failed, mut tool_bytes, mut all_bytes) = (0u64, 0u64, 0u64, 0u64);
    for block in session.records().flat_map(|r| &r.blocks) {
        match block {
            Block::Text { text } | Block::Thinking { text } => all_bytes += text.len() as u64,
            Block::ToolCall { input, .. } => {
                calls += 1;
                tool_bytes += input.len() as u64;
                all_bytes += input.len() as u64;
            }
            Block::ToolResult { output, is_error, .. } => {
                failed += u64::from(*is_error);
                tool_bytes += output.len() as u64;
                all_bytes += output.len() as u64;
            }
            Block::Blob { data, .. } => all_bytes += data.len() as u64,
        }
    }
    heading(out, "A generated coding session")?;
    writeln!(
        out,
        "  {SESSION}: {} requests, {} records, {} tool calls ({} failed), {} of content,",
        TURNS,
        count(session.record_count() as u64),
        count(calls),
        count(failed),
        bytes(all_bytes)
    )?;
    let share = tool_bytes * 100 / all_bytes.max(1);
    writeln!(
        out,
        "  {share}% of it tool input and output, as in real sessions. Seed {SEED}: same bytes every run."
    )?;
    Ok(())
}

fn append_turns(out: &mut Out, store: &Annal, session: &GeneratedSession) -> anyhow::Result<()> {
    heading(out, "Append: one atomic batch per turn, durable when append returns")?;
    let mut next = 0;
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    for turn in &session.turns {
        let began = Instant::now();
        let receipt = store.append(SESSION, Some(next), turn.clone())?;
        slowest = slowest.max(began.elapsed());
        next = receipt.next;
    }
    let elapsed = started.elapsed();
    writeln!(
        out,
        "  {} appends, {} records in {} (slowest {}); sourceOrders 0..{next}, gapless.",
        session.turns.len(),
        count(next),
        millis(elapsed),
        millis(slowest)
    )?;
    writeln!(out, "  Each passed expected_next = the length the agent last saw (optimistic concurrency).")?;
    Ok(())
}

/// One small session per agent, appended one record per call.
fn agent_sessions(prefix: &str) -> Vec<GeneratedSession> {
    (0..AGENTS)
        .map(|agent| {
            let spec = SessionSpec { name: format!("{prefix}-{}", agent + 1), seed: agent as u64, turns: 2 };
            let mut session = coding_session(&spec);
            let records: Vec<Record> = session.records().take(AGENT_APPENDS).cloned().collect();
            session.turns = vec![records];
            session
        })
        .collect()
}

fn append_one_by_one(store: &Annal, session: &GeneratedSession) -> Result<(), annal::Error> {
    for record in session.records() {
        store.append(&session.name, None, vec![record.clone()])?;
    }
    Ok(())
}

fn group_commit(out: &mut Out, store: &Annal) -> anyhow::Result<()> {
    heading(out, "Group commit: concurrent appenders share one writer and its fsyncs")?;
    let alone = agent_sessions("solo");
    let started = Instant::now();
    for session in &alone {
        append_one_by_one(store, session)?;
    }
    let sequential = started.elapsed();
    let together = agent_sessions("agent");
    let started = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            together.iter().map(|session| scope.spawn(move || append_one_by_one(store, session))).collect();
        handles.into_iter().try_for_each(|handle| match handle.join() {
            Ok(result) => result.map_err(anyhow::Error::from),
            Err(_) => Err(anyhow!("an appending thread of the demo stopped unexpectedly")),
        })
    })?;
    let concurrent = started.elapsed();
    let one_by_one = format!("{AGENTS} sessions × {AGENT_APPENDS} single-record appends, one after another:");
    let at_once = format!("the same into {AGENTS} other sessions from {AGENTS} threads at once:");
    let width = one_by_one.chars().count().max(at_once.chars().count());
    writeln!(out, "  {one_by_one:<width$} {:>9}", millis(sequential))?;
    writeln!(out, "  {at_once:<width$} {:>9}", millis(concurrent))?;
    let ratio = sequential.as_secs_f64() / concurrent.as_secs_f64().max(1e-9);
    if ratio >= 1.3 {
        writeln!(out, "  {ratio:.1}× faster: the writer commits everything queued in one transaction.")?;
    } else {
        writeln!(out, "  The writer commits everything queued in one transaction (fsync is cheap here).")?;
    }
    Ok(())
}

fn show_records(out: &mut Out, store: &Annal) -> anyhow::Result<()> {
    heading(out, &format!("Read back: annal show {SESSION} (a few records; tool output cut for display)"))?;
    let snapshot = store.snapshot()?;
    // The request, the first step, the first failure worth reading, and the largest output.
    let (mut failure, mut largest) = (None, (0, 0));
    for guard in snapshot.records(SESSION, 2..u64::MAX)? {
        let guard = guard?;
        let view = guard.view()?;
        for block in view.blocks() {
            if let BlockView::ToolResult { is_error, output, .. } = block {
                if is_error && failure.is_none() && snapshot.text(output)?.lines().count() >= 8 {
                    failure = Some(view.source_order());
                }
                if output.len_bytes() > largest.1 {
                    largest = (view.source_order(), output.len_bytes());
                }
            }
        }
    }
    let mut wanted: Vec<u64> = [Some(0), Some(1), failure, Some(largest.0)].into_iter().flatten().collect();
    wanted.dedup();
    for order in wanted {
        if let Some(guard) = snapshot.record(SESSION, order)? {
            write_record(out, &snapshot, &guard.view()?, &TOUR)?;
        }
    }
    Ok(())
}

fn retry(out: &mut Out, store: &Annal, session: &GeneratedSession) -> anyhow::Result<()> {
    heading(out, "Retry after a crash: the same batch again is a no-op (idempotent by entryId)")?;
    let first = session.turns.first().cloned().unwrap_or_default();
    let receipt = store.append(SESSION, Some(0), first.clone())?;
    let len = store.snapshot()?.session(SESSION)?.map_or(0, |s| s.len);
    let orders = match (receipt.source_orders.first(), receipt.source_orders.last()) {
        (Some(a), Some(b)) => format!("{a}..={b}"),
        _ => "none".into(),
    };
    writeln!(
        out,
        "  re-appended turn 1 ({}): {} new, sourceOrders {orders} as before; still {} records.",
        plural(first.len() as u64, "record"),
        receipt.appended,
        count(len)
    )?;
    Ok(())
}

fn conflict(out: &mut Out, store: &Annal, session: &GeneratedSession) -> anyhow::Result<()> {
    heading(out, "Optimistic concurrency: a writer with a stale view is refused")?;
    let stale = session.turns.first().map_or(0, |t| t.len() as u64);
    let late = Record::text(format!("{SESSION}-late"), Role::User, "Also bump the version to 0.5.0.");
    match store.append(SESSION, Some(stale), vec![late]) {
        Err(annal::Error::Append(err @ AppendError::Conflict { .. })) => {
            writeln!(out, "  append(expected_next = {stale}) → {err}")?;
            writeln!(out, "  That writer re-reads the session and decides again.")?;
        }
        Err(other) => return Err(other.into()),
        Ok(_) => return Err(anyhow!("the store accepted an append with a stale expected_next")),
    }
    Ok(())
}

fn fork(out: &mut Out, store: &Annal, session: &GeneratedSession) -> anyhow::Result<()> {
    heading(out, "Fork: try another approach from turn 4, without copying anything")?;
    let at = session.turns.iter().take(3).map(|t| t.len() as u64).sum::<u64>();
    let child = format!("{SESSION}-alt");
    let started = Instant::now();
    store.fork(SESSION, at, &child)?;
    let took = started.elapsed();
    let ask = "Skip the profiling for now: add a --no-sort flag to the monthly report instead.";
    store.append(&child, Some(at), vec![Record::text(format!("{child}-{at:04}"), Role::User, ask)])?;
    let snapshot = store.snapshot()?;
    writeln!(
        out,
        "  fork {SESSION} --at {at} --name {child}: {}; then one new request on the child.",
        millis(took)
    )?;
    let sessions: Vec<_> = [SESSION, child.as_str()]
        .iter()
        .filter_map(|name| snapshot.session(name).transpose())
        .collect::<Result<_, _>>()?;
    write_sessions(out, &sessions, "  ")?;
    writeln!(out, "  The child reads the parent's first {at} records in place; the parent is unchanged.")?;
    Ok(())
}

fn verify(out: &mut Out, store: &Annal) -> anyhow::Result<()> {
    heading(out, "Verify: recompute every content hash and hash chain")?;
    let report = store.verify(None)?;
    let verdict = if report.is_ok() { "all intact" } else { "DAMAGED" };
    writeln!(out, "  checked {}: {verdict}.", summary(&report, true))?;
    for problem in &report.problems {
        writeln!(out, "  problem: {problem}")?;
    }
    writeln!(out, "  Each record's hash covers its content and the previous hash, so any change shows.")?;
    Ok(())
}

/// Large payloads referenced by the stored records (each stored record once), and how many distinct.
fn blob_references(snapshot: &Snapshot) -> anyhow::Result<(u64, BTreeSet<[u8; 32]>, u64)> {
    let (mut references, mut distinct, mut referenced_bytes) = (0u64, BTreeSet::new(), 0u64);
    for info in snapshot.sessions()? {
        for guard in snapshot.records(&info.name, info.fork_at.unwrap_or(0)..u64::MAX)? {
            let guard = guard?;
            for block in guard.view()?.blocks() {
                let payload = match block {
                    BlockView::Text { text: p } | BlockView::Thinking { text: p } => p,
                    BlockView::ToolCall { input: p, .. } | BlockView::ToolResult { output: p, .. } => p,
                    BlockView::Blob { hash, size_bytes, .. } => Payload::Blob { hash, len_bytes: size_bytes },
                };
                if let Payload::Blob { hash, len_bytes } = payload {
                    references += 1;
                    referenced_bytes += len_bytes;
                    distinct.insert(hash);
                }
            }
        }
    }
    Ok((references, distinct, referenced_bytes))
}

fn stats(out: &mut Out, store: &Annal, location: &StoreLocation) -> anyhow::Result<()> {
    heading(out, "Stats: annal stats")?;
    let snapshot = store.snapshot()?;
    Stats::gather(location, &snapshot)?.write(out, "  ")?;
    let (references, distinct, referenced_bytes) = blob_references(&snapshot)?;
    let stored: u64 = distinct.iter().map(|hash| snapshot.blob(hash).map_or(0, |b| b.len() as u64)).sum();
    writeln!(
        out,
        "  {} payloads over {} went to the blob table, {} of them distinct:",
        count(references),
        bytes(store.options().blob_threshold_bytes as u64),
        count(distinct.len() as u64),
    )?;
    writeln!(
        out,
        "  {} stored for {} referenced (files read twice, identical test runs).",
        bytes(stored),
        bytes(referenced_bytes)
    )?;
    Ok(())
}
