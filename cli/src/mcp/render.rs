//! The compact text the MCP tools answer with: one line per hit or session, and an original as a
//! description followed by its texts verbatim. Every line names the ids a model can follow.

use std::fmt::Write as _;

use annal::SessionInfo;
use annal::{Original, OriginalBlock, SearchRequest};

use super::Found;
use crate::output::{bytes, count, plural};

/// Folds text onto one line: snippets span line breaks, a hit is one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Search hits, best first: `id [session #order role tool kind error] snippet`.
pub(crate) fn hits(request: &SearchRequest, found: &Found) -> String {
    let mut text = String::new();
    if found.hits.is_empty() {
        let _ = writeln!(text, "no matches for {:?}", request.query);
    } else {
        let _ = writeln!(
            text,
            "{} for {:?}, best first (history_get takes the id before the brackets):",
            plural(found.hits.len() as u64, "hit"),
            request.query
        );
    }
    for hit in &found.hits {
        let mut what =
            vec![hit.session.clone(), format!("#{}", hit.source_order), hit.role.as_str().to_owned()];
        what.extend(hit.tool.clone());
        if hit.kind != "text" {
            what.push(hit.kind.to_owned());
        }
        if hit.is_error {
            what.push("error".to_owned());
        }
        let _ =
            writeln!(text, "{} [{}] {}", hit.id(), what.join(" "), one_line(&hit.snippet.marked("**", "**")));
    }
    if found.behind > 0 {
        let _ = writeln!(
            text,
            "(the newest {} are not indexed yet and were not searched)",
            plural(found.behind, "record")
        );
    }
    text
}

/// What one block is, for the description: `#1 toolCall Bash target cargo test, 40 B`.
fn block_line(block: &OriginalBlock) -> String {
    let mut parts = vec![format!("#{}", block.index), block.kind.to_owned()];
    parts.extend(block.tool.clone());
    if block.is_error {
        parts.push("error".into());
    }
    if let Some(target) = &block.target {
        parts.push(format!("target {}", one_line(target)));
    }
    if let Some(call) = &block.call_id {
        parts.push(format!("call {call}"));
    }
    let size = match (&block.lines, &block.media_type) {
        (Some((first, last, total)), _) if first > last => {
            format!("no lines from {first} (it has {})", count(*total as u64))
        }
        (Some((first, last, total)), _) => {
            format!("lines {first}-{last} of {} ({} in all)", count(*total as u64), bytes(block.size_bytes))
        }
        (None, Some(media)) => format!("{media}, {}", bytes(block.size_bytes)),
        (None, None) => bytes(block.size_bytes),
    };
    format!("{}, {size}", parts.join(" "))
}

/// An original: a description of the record and its blocks, then one item per block with its
/// text exactly as stored (a binary block is described instead).
pub(crate) fn original(original: &Original) -> Vec<String> {
    let mut head = format!(
        "entry {} · session {} · sourceOrder {} · {}",
        original.entry_id, original.session, original.source_order, original.role
    );
    if let Some(when) = &original.timestamp {
        let _ = write!(head, " · {when}");
    }
    let shown = original.blocks.len();
    let _ = if shown == original.block_count {
        let follow = if shown == 1 { "1 block follows" } else { "its blocks follow" };
        writeln!(head, "\n{follow}, each verbatim as one more item:")
    } else {
        writeln!(head, "\nblock {} of {} follows verbatim:", shown, original.block_count)
    };
    for block in &original.blocks {
        let _ = writeln!(head, "  {}", block_line(block));
    }
    let mut items = vec![head];
    for block in &original.blocks {
        items.push(match &block.text {
            Some(text) => text.clone(),
            None => format!(
                "(binary {}, {}; blob {})",
                block.media_type.as_deref().unwrap_or("data"),
                bytes(block.size_bytes),
                block.blob_hash.as_deref().unwrap_or("?")
            ),
        });
    }
    items
}

/// Sessions, one line each: `name · N records · fork of P at K`.
pub(crate) fn sessions(sessions: &[SessionInfo], limit: usize) -> String {
    let mut text = String::new();
    if sessions.is_empty() {
        text.push_str("no sessions in this store yet (`annal import` or `annal append` adds them)\n");
        return text;
    }
    let _ = writeln!(text, "{}:", plural(sessions.len() as u64, "session"));
    for session in sessions.iter().take(limit.max(1)) {
        let _ = write!(text, "{} · {}", session.name, plural(session.len, "record"));
        if let (Some(parent), Some(at)) = (&session.parent, session.fork_at) {
            let _ = write!(text, " · fork of {parent} at {at}");
        }
        text.push('\n');
    }
    if sessions.len() > limit.max(1) {
        let _ = writeln!(
            text,
            "… and {} more (raise limit to see them)",
            count((sessions.len() - limit.max(1)) as u64)
        );
    }
    text
}
