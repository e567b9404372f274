//! The one stand-in summarizer every contender that summarises gets in its summary slot:
//! annal's summarized-v1 through the engine's `Summarizer` trait, and the Codex-, OpenCode- and
//! yoagent-style baselines directly. All give it the same input (the request they last sent,
//! before compacting) and the same budget, so a difference between them is a difference of
//! rules, not of summaries.

use annal_engine::{Role, SummarizeError, Summarizer, SummaryRequest};

use super::request::{from_messages, PartKind, Request};
use super::session::text_tokens;

/// The summary budget every contender's stand-in gets: summarized-v1's default.
pub const SUMMARY_TOKENS: u32 = 4_096;

/// The first line of every stand-in summary; an earlier summary found in a view is recognised
/// by it, so its lines are carried into the next one as a model would carry them.
pub const HEADER: &str = "Stand-in summary (first lines of the assistant's replies):";

/// Longest line taken from one reply, in characters.
const LINE_CHARS: usize = 160;

/// The candidate lines of `view`, oldest first: the lines of earlier stand-in summaries, and
/// the first line of each assistant text.
fn candidates(view: &Request) -> Vec<String> {
    let mut lines = Vec::new();
    for message in view {
        for part in message.parts.iter().filter(|p| p.kind == PartKind::Text) {
            if let Some(at) = part.text.find(HEADER) {
                let earlier = part.text[at + HEADER.len()..].lines();
                lines.extend(earlier.filter_map(|l| l.strip_prefix("- ")).map(str::to_owned));
            } else if message.role == Role::Assistant && !message.synthetic {
                let first: String = part.text.lines().next().unwrap_or("").chars().take(LINE_CHARS).collect();
                if !first.is_empty() && !first.starts_with("[omitted") {
                    lines.push(first);
                }
            }
        }
    }
    lines
}

/// The stand-in summary of `view` within `summary_tokens`: candidate lines newest first while
/// they fit, each once, put back in order under [`HEADER`]. Empty when nothing fits. It is not
/// a summary, and its numbers say nothing about what a model would write; it only gives every
/// contender the same deterministic text where its model's summary would go.
pub fn stand_in(view: &Request, summary_tokens: u32) -> String {
    let budget = u64::from(summary_tokens).saturating_sub(text_tokens(HEADER) + 1);
    let mut picked: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut used = 0;
    for line in candidates(view).into_iter().rev() {
        let cost = text_tokens(&line) + 1;
        if used + cost > budget || !seen.insert(line.clone()) {
            continue;
        }
        used += cost;
        picked.push(line);
    }
    if picked.is_empty() {
        return String::new();
    }
    picked.reverse();
    let mut out = String::from(HEADER);
    for line in picked {
        out.push_str("\n- ");
        out.push_str(&line);
    }
    out
}

/// [`stand_in`] behind the engine's summarizer trait, for summarized-v1.
#[derive(Debug)]
pub struct StandIn;

impl Summarizer for StandIn {
    fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizeError> {
        Ok(stand_in(&from_messages(&request.messages), request.summary_tokens))
    }
}
