//! The demo's search-and-get step: index the demo store, find an exact value from a failed tool
//! run, and read the top hit back verbatim by its id.

use std::io::Write;
use std::time::{Duration, Instant};

use annal::snapshot::BlockView;
use annal::{Annal, SearchRequest, Snapshot};
use anyhow::bail;

use crate::output::{count, cut, Out};
use crate::render::{write_hit, write_original};

/// Hits the tour shows.
const SHOWN: usize = 3;
/// Lines of the original the tour prints.
const LINES: usize = 6;

/// An exact value worth searching for: a source path from the first failed tool run of
/// `session` (`src/amount.rs` out of `src/amount.rs:88:41`), else a long word of its text.
fn pick_value(snapshot: &Snapshot, session: &str) -> anyhow::Result<Option<String>> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;|".contains(c))
            .map(|word| word.split(':').next().unwrap_or_default().trim_matches(|c: char| ".!?=".contains(c)))
            .filter(|word| (6..64).contains(&word.len()))
            .map(str::to_owned)
            .collect()
    };
    let is_source_path = |word: &String| word.contains('/') && word.contains('.') && !word.starts_with('/');
    let mut fallback = None;
    for guard in snapshot.records(session, 0..u64::MAX)? {
        let guard = guard?;
        let view = guard.view()?;
        for block in view.blocks() {
            match block {
                BlockView::ToolResult { is_error: true, output, .. } => {
                    if let Some(path) = words(&snapshot.text(output)?).into_iter().find(is_source_path) {
                        return Ok(Some(path));
                    }
                }
                BlockView::Text { text } if fallback.is_none() => {
                    fallback =
                        words(&snapshot.text(text)?).into_iter().find(|w| w.chars().all(char::is_alphabetic));
                }
                _ => {}
            }
        }
    }
    Ok(fallback)
}

fn indented(out: &mut Out, buffer: &[u8]) -> std::io::Result<()> {
    for line in String::from_utf8_lossy(buffer).lines() {
        writeln!(out, "  {}", cut(line, 108))?;
    }
    Ok(())
}

/// Runs the step on the demo's store, whose index is not open yet, searching for a value from
/// `session`.
pub(crate) fn search_and_get(out: &mut Out, store: &Annal, session: &str) -> anyhow::Result<()> {
    out.flush()?;
    writeln!(out, "\n▸ Search and get: find an exact value in every original, then read one back verbatim")?;
    let started = Instant::now();
    if store.catch_up(Duration::from_secs(60), |_, _| {})? > 0 {
        bail!("the demo index did not catch up");
    }
    let status = store.index_status()?;
    writeln!(
        out,
        "  indexed {} records ({} blocks) beside the store in {:.0} ms, by a background thread.",
        count(status.searchable),
        count(status.documents),
        started.elapsed().as_secs_f64() * 1000.0
    )?;
    let snapshot = store.snapshot()?;
    let Some(value) = pick_value(&snapshot, session)? else {
        writeln!(out, "  (the generated session has nothing to search for)")?;
        return Ok(());
    };
    let mut request = SearchRequest::new(value.clone());
    request.session = Some(session.to_owned());
    request.limit = SHOWN;
    request.snippet_chars = 100;
    let searched = Instant::now();
    let hits = store.search(&request)?;
    writeln!(
        out,
        "  annal history search '{value}' --session {session}   ({} shown, {:.1} ms)",
        hits.len(),
        searched.elapsed().as_secs_f64() * 1000.0
    )?;
    let mut buffer = Vec::new();
    for (rank, hit) in hits.iter().enumerate() {
        write_hit(&mut buffer, rank + 1, hit, false)?;
    }
    indented(out, &buffer)?;
    if let Some(top) = hits.first() {
        writeln!(out, "  annal history get {} --lines 1:{LINES}", top.id())?;
        let original = store.get(&top.id(), Some(1..=LINES))?;
        let mut buffer = Vec::new();
        write_original(&mut buffer, &original)?;
        indented(out, &buffer)?;
        writeln!(
            out,
            "  Ids are the ones projection markers and evidence rows carry; the text is the original."
        )?;
    }
    Ok(())
}
