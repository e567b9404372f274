//! The demo's projection and compaction step: a session projected under a small window,
//! compacted, grown and compacted again, showing what the model would see and that the prefix
//! stays byte-stable.

use std::io::Write;

use annal::{Annal, CompactOptions, CompactStatus, ProjectOptions, Record, Role};

use crate::output::{cut, hex, Out};
use crate::project::write_header;

/// The demo's step: project a session under a small window, compact it, grow it, and compact
/// again, showing what the model would see and that the prefix stays byte-stable.
pub(crate) fn tour(out: &mut Out, store: &Annal, session: &str) -> anyhow::Result<()> {
    out.flush()?;
    writeln!(out, "\n▸ Projection and compaction: what the model sees next, under a 16K-token window")?;
    let budget = annal::Budget {
        tail_tokens: 2_048,
        evidence_tokens: 1_024,
        history_tokens: 4_096,
        ..annal::Budget::new(16_000, 2_000)
    };
    let options = ProjectOptions::new(budget);
    let before = store.project(session, &options)?;
    let mut header = Vec::new();
    write_header(&mut header, session, &before)?;
    for line in String::from_utf8_lossy(&header).lines() {
        writeln!(out, "  {line}")?;
    }
    let rows = before
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            annal::MessageBlock::Text { text } if text.starts_with("{\"entryId\"") => Some(text.as_ref()),
            _ => None,
        })
        .flat_map(str::lines)
        .take(2);
    for row in rows {
        writeln!(out, "  evidence row: {}", cut(row, 150))?;
    }
    let marker = before.messages.iter().flat_map(|m| &m.blocks).find_map(|b| match b {
        annal::MessageBlock::Text { text } if text.starts_with("[omitted") => Some(text.to_string()),
        _ => None,
    });
    if let Some(marker) = marker {
        writeln!(out, "  marker: {}", cut(&marker, 150))?;
    }
    let compact = CompactOptions { force: true, ..CompactOptions::new(options) };
    let outcome = store.compact(session, &compact)?;
    writeln!(
        out,
        "  annal compact: checkpoint {} committed with a receipt at sourceOrder {} (same bytes as the view above).",
        outcome.key.map(|k| hex(&k)[..16].to_owned()).unwrap_or_default(),
        outcome.receipt.map_or_else(String::new, |r| r.to_string())
    )?;
    let again = store.compact(session, &compact)?;
    writeln!(
        out,
        "  annal compact again: {} (no summarizer call, nothing written).",
        if again.status == CompactStatus::Reused {
            "the committed checkpoint is reused"
        } else {
            "committed"
        }
    )?;
    let asked = Record::text(
        format!("{session}-after-compaction"),
        Role::User,
        "Also add a --no-sort flag to the monthly report.",
    );
    store.append(session, None, vec![asked])?;
    let after = store.project(session, &options)?;
    let shared = before.messages.iter().zip(&after.messages).take_while(|(a, b)| a == b).count();
    writeln!(
        out,
        "  one more request appended: the next view repeats all {shared} messages of the last one byte for \
         byte, then adds {} (a provider's prefix cache keeps hitting).",
        after.messages.len() - shared
    )?;
    Ok(())
}
