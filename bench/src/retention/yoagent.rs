//! yoagent's rules (yologdev/yoagent v0.18.0, commit `4dbee877`): `ContextConfig` from the
//! context window (80% of it, less 4,000 for the system prompt), tool output cut to 200 lines
//! when appended, and `compact_messages`' three levels down to 70% of that budget; with a
//! summary, `LlmCompaction`'s splice of the first messages, the summary and a recent tail.
//!
//! Not modelled: the headroom policy that lowers the 70% target from the observed growth per
//! turn (the agent loop measures it; the splice ignores it too), and token overheads per message.

use std::sync::Arc;

use annal_engine::{Budget, Role};

use super::request::{Msg, Part, PartKind, Request};

/// `tool_output_max_lines`, and the marker's three lines inside it.
const MAX_LINES: usize = 200;
const MARKER_LINES: usize = 3;
/// The tool whose output is never cut (yoagent's `read_file` pages itself).
const UNCUT_TOOL: &str = "Read";
/// `keep_recent`, `keep_first`.
const KEEP_RECENT: usize = 10;
const KEEP_FIRST: usize = 2;
/// `compact_target_ratio`.
const TARGET_PERCENT: u64 = 70;
/// `system_prompt_tokens`.
const SYSTEM_PROMPT_TOKENS: u64 = 4_000;
/// `DEFAULT_RETAIN_TAIL_TOKENS`: the splice keeps `min(this, budget / 4)` of recent messages.
const RETAIN_TAIL_MAX: u64 = 20_000;
/// `COMPACTION_MARKER` and `SUMMARY_MARKER`.
const DROPPED: &str = "[Context compacted: earlier messages removed to fit the context window]";
const SUMMARY_MARKER: &str = "[Context compacted — summary of earlier conversation]";

/// `max_context_tokens − system_prompt_tokens` with `max_context_tokens` = 80% of the window.
pub fn budget_tokens(budget: Budget) -> u64 {
    (u64::from(budget.window_tokens) * 80 / 100).saturating_sub(SYSTEM_PROMPT_TOKENS)
}

fn is_result(message: &Msg) -> bool {
    message.role == Role::Tool || message.parts.iter().all(|p| p.kind == PartKind::Result)
}

fn opens_calls(message: &Msg) -> bool {
    message.role == Role::Assistant && message.parts.iter().any(|p| p.kind == PartKind::Call)
}

fn tokens(messages: &[Arc<Msg>]) -> u64 {
    messages.iter().map(|m| m.tokens).sum()
}

fn marker(text: &str) -> Arc<Msg> {
    Arc::new(Msg::text(Role::User, text, usize::MAX, true))
}

/// A tool result past 200 lines keeps its first 98 and last 99 around a marker.
pub fn on_append(message: Msg) -> Msg {
    let cut = |part: &Part| {
        let lines: Vec<&str> = part.text.lines().collect();
        if part.kind != PartKind::Result || &*part.tool == UNCUT_TOOL || lines.len() <= MAX_LINES {
            return part.clone();
        }
        let keep = MAX_LINES - MARKER_LINES;
        let (head, tail) = (keep / 2, keep - keep / 2);
        let omitted = lines.len() - head - tail;
        let text = format!(
            "{}\n\n[... {omitted} lines truncated ...]\n\n{}",
            lines[..head].join("\n"),
            lines[lines.len() - tail..].join("\n")
        );
        Part { text: text.into(), ..part.clone() }
    };
    if !message.parts.iter().any(|p| p.kind == PartKind::Result) {
        return message;
    }
    let parts = message.parts.iter().map(cut).collect();
    Msg::new(message.role, parts, message.turn, message.synthetic)
}

/// The compacted history: the splice when there is a summary and it fits the budget, else the
/// deterministic levels.
pub fn compact(history: &Request, budget: u64, summary: &str) -> Request {
    if !summary.is_empty() {
        if let Some(spliced) = splice(history, budget, summary) {
            return spliced;
        }
    }
    // Level 1 ran when each output was appended.
    let level2 = summarize_old_turns(history);
    let target = budget * TARGET_PERCENT / 100;
    if tokens(&level2) <= target {
        return level2;
    }
    drop_middle(&level2, target)
}

/// `[head][summary][tail]`: the first two messages (not ending in open calls), the summary, and
/// the newest messages from a turn start that leave at least `min(20K, budget / 4)` tokens.
fn splice(history: &Request, budget: u64, summary: &str) -> Option<Request> {
    let len = history.len();
    let mut head_end = safe_turn_start(history, KEEP_FIRST.min(len));
    while head_end > 0 && opens_calls(&history[head_end - 1]) {
        head_end -= 1;
    }
    let retain = RETAIN_TAIL_MAX.min(budget / 4);
    let mut cut = len;
    let mut tail = 0;
    while cut > head_end && tail < retain {
        cut -= 1;
        tail += history[cut].tokens;
    }
    let cut = safe_turn_start(history, cut);
    if cut <= head_end {
        return None;
    }
    let mut out = history[..head_end].to_vec();
    out.push(marker(&format!("{SUMMARY_MARKER}\n{summary}")));
    out.extend_from_slice(&history[cut..]);
    (tokens(&out) <= budget).then_some(out)
}

fn safe_turn_start(messages: &[Arc<Msg>], mut start: usize) -> usize {
    while start > 0 && start < messages.len() && is_result(&messages[start]) {
        start -= 1;
    }
    start
}

/// Level 2: before the newest 10 messages (moved back to a turn start), each assistant message
/// becomes a one-line `[Summary]` user message and its results go; user messages stay.
fn summarize_old_turns(messages: &Request) -> Request {
    let len = messages.len();
    if len <= KEEP_RECENT {
        return messages.clone();
    }
    let boundary = safe_turn_start(messages, len - KEEP_RECENT);
    let mut out = Vec::new();
    for message in &messages[..boundary] {
        if message.role == Role::Assistant {
            let short: Vec<&str> = message
                .parts
                .iter()
                .filter(|p| p.kind == PartKind::Text && p.text.len() <= 200)
                .map(|p| &*p.text)
                .collect();
            let calls = message.parts.iter().filter(|p| p.kind == PartKind::Call).count();
            let line = if !short.is_empty() {
                short.join(" ")
            } else if calls > 0 {
                format!("[Assistant used {calls} tool(s)]")
            } else {
                "[Assistant response]".into()
            };
            out.push(marker(&format!("[Summary] {line}")));
        } else if !is_result(message) {
            out.push(Arc::clone(message));
        }
    }
    out.extend_from_slice(&messages[boundary..]);
    out
}

/// Level 3: the first two messages, a marker, and the newest messages from the smallest cut that
/// reaches `target` (never into the newest 10); then, if still too large, the newest that fit.
fn drop_middle(messages: &Request, target: u64) -> Request {
    let len = messages.len();
    let mut head_end = KEEP_FIRST.min(len);
    while head_end > 0 && opens_calls(&messages[head_end - 1]) {
        head_end -= 1;
    }
    let max_cut = len.saturating_sub(KEEP_RECENT);
    if head_end >= max_cut {
        return keep_within(messages, target);
    }
    let fixed = tokens(&messages[..head_end]) + super::session::text_tokens(DROPPED);
    let mut suffix = vec![0; len + 1];
    for i in (0..len).rev() {
        suffix[i] = suffix[i + 1] + messages[i].tokens;
    }
    let cut = (head_end..=max_cut).find(|&i| fixed + suffix[i] <= target).unwrap_or(max_cut);
    let mut cut = cut.max(head_end);
    while cut < len && is_result(&messages[cut]) {
        cut += 1;
    }
    if cut == head_end {
        return messages.clone();
    }
    let mut out = messages[..head_end].to_vec();
    out.push(marker(DROPPED));
    out.extend_from_slice(&messages[cut..]);
    if tokens(&out) > target {
        return keep_within(&out, target);
    }
    out
}

/// The newest messages that fit `budget`, after a marker when any were dropped.
fn keep_within(messages: &[Arc<Msg>], budget: u64) -> Request {
    let mut left = budget;
    let mut start = messages.len();
    while start > 0 && messages[start - 1].tokens <= left {
        start -= 1;
        left -= messages[start].tokens;
    }
    let mut out = Vec::new();
    if start > 0 {
        out.push(marker(&format!("[Context compacted: {start} messages removed]")));
    }
    out.extend_from_slice(&messages[start..]);
    out
}
