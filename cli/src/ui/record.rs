//! One record as a session page shows it: user and assistant text as Markdown, thinking and
//! tool calls and outputs folded with their sizes, failed tools marked, diffs as diffs.

use annal::snapshot::{hash_to_hex, BlockView, RecordView};
use annal::{Role, Snapshot};
use maud::{html, Markup};

use super::markdown;
use crate::output::bytes as size;

/// Text over this many bytes is folded even where it would be shown open.
const OPEN_BYTES_MAX: usize = 4_000;

/// A record, its anchor its entry id; `status` is a mark from "what the model saw", if any.
pub(crate) fn render(
    snapshot: &Snapshot,
    view: &RecordView<'_>,
    status: Option<(&str, &str)>,
) -> Result<Markup, annal::error::ReadError> {
    let role = view.role();
    let mut blocks = Vec::with_capacity(view.block_count());
    for block in view.blocks() {
        blocks.push(render_block(snapshot, role, &block)?);
    }
    let order = view.source_order();
    let status = status.or_else(|| {
        view.meta()
            .any(|(key, _)| key == annal::snapshot::RECEIPT_META_KEY)
            .then_some(("receipt", "compaction receipt"))
    });
    Ok(html! {
        article.record.(role.as_str()) id=(view.entry_id()) {
            header {
                a.order href={ "#" (view.entry_id()) } title="Link to this record" { "#" (order) }
                span.role { (role.as_str()) }
                @if let Some(time) = view.timestamp() { time { (time) } }
                @if let Some((class, label)) = status { span class={ "status " (class) } { (label) } }
                span.id title={ "hash " (hash_to_hex(&view.hash())) } { (view.entry_id()) }
            }
            @for block in &blocks { (block) }
        }
    })
}

fn render_block(
    snapshot: &Snapshot,
    role: Role,
    block: &BlockView<'_>,
) -> Result<Markup, annal::error::ReadError> {
    Ok(match block {
        BlockView::Text { text } => {
            let text = snapshot.text(*text)?;
            match role {
                Role::User | Role::Assistant if text.len() <= OPEN_BYTES_MAX * 8 => markdown::render(&text),
                _ => folded("text", &format!("{} of text", size(text.len() as u64)), false, body(&text)),
            }
        }
        BlockView::Thinking { text } => {
            let text = snapshot.text(*text)?;
            folded(
                "thinking",
                &format!("thinking, {}", size(text.len() as u64)),
                false,
                markdown::plain(&text),
            )
        }
        BlockView::ToolCall { tool, input, target, .. } => {
            let input = snapshot.text(*input)?;
            let label = if target.is_empty() {
                format!("{tool} call, {}", size(input.len() as u64))
            } else {
                format!("{tool} {target} — {}", size(input.len() as u64))
            };
            folded("call", &label, false, call_body(&input))
        }
        BlockView::ToolResult { tool, is_error, output, .. } => {
            let output = snapshot.text(*output)?;
            let what = if tool.is_empty() { "tool" } else { tool };
            let label = format!(
                "{what} output, {}{}",
                size(output.len() as u64),
                if *is_error { " — failed" } else { "" }
            );
            folded(if *is_error { "result error" } else { "result" }, &label, false, body(&output))
        }
        BlockView::Blob { media_type, size_bytes, .. } => {
            html! { p.blob { "binary " (media_type) ", " (size(*size_bytes)) " (not shown)" } }
        }
    })
}

/// A tool's input: an edit's old and new text as a diff, anything else as its JSON.
fn call_body(input: &str) -> Markup {
    let parsed = serde_json::from_str::<serde_json::Value>(input).ok();
    let text_of = |key: &str| parsed.as_ref().and_then(|v| v.get(key)).and_then(|v| v.as_str());
    if let (Some(old), Some(new)) = (text_of("old_string"), text_of("new_string")) {
        let mut diff = String::from("@@ edit @@\n");
        for line in old.lines() {
            diff.push('-');
            diff.push_str(line);
            diff.push('\n');
        }
        for line in new.lines() {
            diff.push('+');
            diff.push_str(line);
            diff.push('\n');
        }
        return markdown::diff(&diff);
    }
    let pretty = parsed.as_ref().and_then(|v| serde_json::to_string_pretty(v).ok());
    markdown::plain(pretty.as_deref().unwrap_or(input))
}

/// Output or long text: a diff if it reads as one, else as written.
fn body(text: &str) -> Markup {
    if markdown::is_diff(text) {
        markdown::diff(text)
    } else {
        markdown::plain(text)
    }
}

/// A block folded behind its one-line label.
fn folded(class: &str, label: &str, open: bool, content: Markup) -> Markup {
    html! {
        details class={ "block " (class) } open[open] {
            summary { (label) }
            (content)
        }
    }
}
