//! One record as a session page shows it: user and assistant text as Markdown, context the agent
//! added to a request folded and labelled, thinking folded, each tool call folded with its
//! result (failed ones marked), edits and patches as line diffs.

use std::borrow::Cow;
use std::collections::HashMap;

use annal::snapshot::{hash_to_hex, BlockView, RecordView};
use annal::sync::Agent;
use annal::{Role, Snapshot};
use maud::{html, Markup};

use super::{diff, markdown};
use crate::output::bytes as size;

/// Text over this many bytes is folded even where it would be shown open.
const OPEN_BYTES_MAX: usize = 4_000;

/// An edit whose diff has at most this many lines is shown open.
const OPEN_DIFF_LINES_MAX: usize = 60;

/// What the records of one page tell each other: which agent wrote them (for the context it
/// adds to requests) and each tool call's result, so a call and its outcome read as one fold.
#[derive(Debug, Default)]
pub(crate) struct Page {
    agent: Option<Agent>,
    /// Secrets masked in every text shown (a redacted export).
    redact: bool,
    /// Results of calls made on the page, by call id.
    outcomes: HashMap<String, Outcome>,
    /// The entry id of the record making each call on the page, by call id.
    callers: HashMap<String, String>,
}

/// A tool's result, shown inside its call's fold.
#[derive(Debug)]
struct Outcome {
    output: String,
    is_error: bool,
    source_order: u64,
}

impl Page {
    /// Pairs the calls and results among `views`, records of one session in order; with
    /// `redact`, every text is shown with its secrets masked.
    pub(crate) fn of(
        snapshot: &Snapshot,
        views: &[RecordView<'_>],
        redact: bool,
    ) -> Result<Page, annal::error::ReadError> {
        let agent = views.iter().find_map(super::catalog::agent_of);
        let mut page = Page { agent, redact, ..Page::default() };
        for view in views {
            for block in view.blocks() {
                match block {
                    BlockView::ToolCall { call_id, .. } if !call_id.is_empty() => {
                        page.callers.insert(call_id.to_owned(), view.entry_id().to_owned());
                    }
                    BlockView::ToolResult { call_id, is_error, output, .. }
                        if page.callers.contains_key(call_id) =>
                    {
                        let output = page.shown(snapshot.text(output)?).into_owned();
                        let outcome = Outcome { output, is_error, source_order: view.source_order() };
                        page.outcomes.insert(call_id.to_owned(), outcome);
                    }
                    _ => {}
                }
            }
        }
        Ok(page)
    }

    /// `text` as the page shows it: masked when the page is redacted.
    fn shown<'t>(&self, text: Cow<'t, str>) -> Cow<'t, str> {
        match self.redact {
            true => match annal::text::redact(&text) {
                Cow::Borrowed(_) => text,
                Cow::Owned(masked) => Cow::Owned(masked),
            },
            false => text,
        }
    }

    /// Whether a record says nothing of its own on this page: no blocks, only blank text, or
    /// only results already shown with their calls. Such records are folded together.
    pub(crate) fn is_quiet(&self, snapshot: &Snapshot, view: &RecordView<'_>) -> bool {
        view.blocks().all(|block| match block {
            BlockView::Text { text } => snapshot.text(text).is_ok_and(|t| t.trim().is_empty()),
            BlockView::ToolResult { call_id, .. } => self.outcomes.contains_key(call_id),
            _ => false,
        })
    }

    /// The user's own words in a request, without the context the agent added, when the record
    /// is a request that holds any.
    pub(crate) fn request_words(&self, snapshot: &Snapshot, view: &RecordView<'_>) -> Option<String> {
        if view.role() != Role::User {
            return None;
        }
        for block in view.blocks() {
            if let BlockView::Text { text } = block {
                let text = self.shown(snapshot.text(text).ok()?);
                let words = self.agent.map_or_else(|| text.to_string(), |agent| agent.user_words(&text));
                if !words.trim().is_empty() {
                    return Some(words.trim().to_owned());
                }
            }
        }
        None
    }
}

/// A record, its anchor its entry id; `status` is a mark from "what the model saw", if any.
pub(crate) fn render(
    snapshot: &Snapshot,
    page: &Page,
    view: &RecordView<'_>,
    status: Option<(&str, &str)>,
) -> Result<Markup, annal::error::ReadError> {
    let role = view.role();
    let mut blocks = Vec::with_capacity(view.block_count());
    for block in view.blocks() {
        blocks.push(render_block(snapshot, page, role, &block)?);
    }
    let order = view.source_order();
    let status = status.or_else(|| {
        view.meta()
            .any(|(key, _)| key == annal::snapshot::RECEIPT_META_KEY)
            .then_some(("receipt", "compaction receipt"))
    });
    let turn = page.request_words(snapshot, view).is_some();
    Ok(html! {
        article.record.(role.as_str()).turn[turn] id=(view.entry_id()) data-order=(order) {
            header {
                a.order href={ "#" (view.entry_id()) } title="Link to this record" { "#" (order) }
                span.role { (role.as_str()) }
                @if let Some(time) = view.timestamp() { time datetime=(time) { (time) } }
                @if let Some((class, label)) = status { span class={ "status " (class) } { (label) } }
                span.id title={ "hash " (hash_to_hex(&view.hash())) } { (view.entry_id()) }
            }
            @for block in &blocks { (block) }
        }
    })
}

fn render_block(
    snapshot: &Snapshot,
    page: &Page,
    role: Role,
    block: &BlockView<'_>,
) -> Result<Markup, annal::error::ReadError> {
    Ok(match block {
        BlockView::Text { text } => {
            let text = page.shown(snapshot.text(*text)?);
            match role {
                Role::User => request(page, &text),
                Role::Assistant if text.len() <= OPEN_BYTES_MAX * 8 => markdown::render(&text),
                _ => folded("text", &format!("{} of text", size(text.len() as u64)), body(&text)),
            }
        }
        BlockView::Thinking { text } => {
            let text = page.shown(snapshot.text(*text)?);
            folded("thinking", &format!("thinking, {}", size(text.len() as u64)), markdown::plain(&text))
        }
        BlockView::ToolCall { call_id, tool, input, target } => {
            let input = page.shown(snapshot.text(*input)?);
            let outcome = page.outcomes.get(*call_id);
            call(tool, target, &input, outcome)
        }
        BlockView::ToolResult { call_id, tool, is_error, output } => match page.callers.get(*call_id) {
            Some(caller) => html! {
                p.paired { "Output shown with its call in " a href={ "#" (caller) } { "the record above" } }
            },
            None => {
                let output = page.shown(snapshot.text(*output)?);
                let what = if tool.is_empty() { "tool" } else { tool };
                let failed = if *is_error { " — failed" } else { "" };
                let label = format!("{what} output, {}{failed}", size(output.len() as u64));
                folded(if *is_error { "result failed" } else { "result" }, &label, body(&output))
            }
        },
        BlockView::Blob { media_type, size_bytes, .. } => {
            html! { p.blob { "binary " (media_type) ", " (size(*size_bytes)) " (not shown)" } }
        }
    })
}

/// A request: the user's words as Markdown, the context the agent added folded and labelled.
fn request(page: &Page, text: &str) -> Markup {
    let words = page.agent.map_or_else(|| text.to_owned(), |agent| agent.user_words(text));
    if words.len() == text.len() {
        return if text.len() <= OPEN_BYTES_MAX * 8 {
            markdown::render(text)
        } else {
            folded("text", &format!("{} of text", size(text.len() as u64)), markdown::plain(text))
        };
    }
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let label = format!(
        "context the agent added, {}: {}",
        size((text.len() - words.len().min(text.len())) as u64),
        crate::output::cut(first, 80)
    );
    html! {
        @if !words.trim().is_empty() { (markdown::render(words.trim())) }
        (folded("context", &label, markdown::plain(text)))
    }
}

/// A tool call and, when it is on the page, its result: one fold, marked when it failed.
fn call(tool: &str, target: &str, input: &str, outcome: Option<&Outcome>) -> Markup {
    let parsed = serde_json::from_str::<serde_json::Value>(input).ok();
    let edit = parsed.as_ref().and_then(edit_of);
    let mut label = if target.is_empty() { tool.to_owned() } else { format!("{tool} {target}") };
    match &edit {
        Some(lines) => label.push_str(&format!(" — {}", lines.tally())),
        None => label.push_str(&format!(" — {}", size(input.len() as u64))),
    }
    let failed = outcome.is_some_and(|o| o.is_error);
    if failed {
        label.push_str(" — failed");
    } else if outcome.is_none() {
        label.push_str(" — no result on this page");
    }
    let input_markup = match (&edit, &parsed) {
        (Some(lines), _) => lines.render(),
        (None, Some(value)) => match patch_of(value) {
            Some(patch) => diff::written(patch).render(),
            None => {
                markdown::plain(&serde_json::to_string_pretty(value).unwrap_or_else(|_| input.to_owned()))
            }
        },
        (None, None) if diff::is_diff(input) => diff::written(input).render(),
        (None, None) => markdown::plain(input),
    };
    let class = if failed { "call failed" } else { "call" };
    // A short edit is read at a glance, as the change it is: shown open.
    let open = edit.as_ref().is_some_and(|lines| lines.line_count() <= OPEN_DIFF_LINES_MAX);
    folded_open(
        class,
        &label,
        open,
        html! {
            (input_markup)
            @if let Some(outcome) = outcome {
                div.outcome {
                    p.outcome-label {
                        @if outcome.is_error { span.broken { "failed" } " · " }
                        "output, " (size(outcome.output.len() as u64)) " (record #" (outcome.source_order) ")"
                    }
                    (body(&outcome.output))
                }
            }
        },
    )
}

/// An edit's line diff: `old_string`/`new_string` (Claude Code, Gemini CLI, Qwen), `oldString`/
/// `newString` (OpenCode), or several edits of one file (`MultiEdit`), one after the other.
fn edit_of(input: &serde_json::Value) -> Option<diff::Lines> {
    let text = |value: &serde_json::Value, keys: [&str; 2]| {
        keys.iter().find_map(|key| value.get(key).and_then(|v| v.as_str())).map(str::to_owned)
    };
    let pair = |value: &serde_json::Value| {
        Some((text(value, ["old_string", "oldString"])?, text(value, ["new_string", "newString"])?))
    };
    let pairs: Vec<(String, String)> = match input.get("edits").and_then(|e| e.as_array()) {
        Some(edits) => edits.iter().filter_map(pair).collect(),
        None => pair(input).into_iter().collect(),
    };
    if pairs.is_empty() {
        return None;
    }
    let mut all = diff::Lines::default();
    for (old, new) in &pairs {
        all.extend(diff::edit(old, new));
    }
    Some(all)
}

/// A patch passed as a tool's input (Codex's `apply_patch`, as a string or in a field).
fn patch_of(input: &serde_json::Value) -> Option<&str> {
    let command = input.get("command").and_then(|c| c.as_array()).and_then(|c| c.last());
    let candidates = [Some(input), input.get("input"), input.get("patch"), command];
    candidates.into_iter().flatten().filter_map(|v| v.as_str()).find(|text| diff::is_diff(text))
}

/// Output or long text: a diff if it reads as one, else as written.
fn body(text: &str) -> Markup {
    if diff::is_diff(text) {
        diff::written(text).render()
    } else {
        markdown::plain(text)
    }
}

/// A block folded behind its one-line label.
fn folded(class: &str, label: &str, content: Markup) -> Markup {
    folded_open(class, label, false, content)
}

/// A block behind its one-line label, shown open when `open`.
fn folded_open(class: &str, label: &str, open: bool, content: Markup) -> Markup {
    html! {
        details class={ "block " (class) } open[open] {
            summary { (label) }
            (content)
        }
    }
}
