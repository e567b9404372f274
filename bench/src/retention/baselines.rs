//! Other agents' compaction rules, reimplemented from their source at a named commit (see
//! [`Rules::follows`]) and run on the same sessions. Each keeps its own history (a compaction
//! replaces it, so later compactions work on what earlier ones left) and compacts at its own
//! trigger. The summary slot holds nothing (rules only) or the shared stand-in summary of the
//! history it last sent; there is no model in this exam.

use std::sync::Arc;

use annal_engine::{Budget, Record, Role};

use super::engine_side::Strategy;
use super::request::{Msg, Request};
use super::summarizer::{stand_in, SUMMARY_TOKENS};
use super::{opencode, yoagent};

/// Which rule set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// User messages newest-first up to 20K tokens, plus a summary.
    Codex,
    /// Prune old tool output; a summary plus a recent tail of turns.
    OpenCode,
    /// Truncate tool output, then one-line summaries, then drop the middle (or splice a summary).
    Yoagent,
    /// Drop the oldest records until it fits.
    Naive,
}

/// What fills a baseline's summary slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Nothing: what the rules keep on their own.
    Empty,
    /// The shared stand-in summarizer's text.
    StandIn,
}

impl Rules {
    /// The report label.
    pub fn label(self) -> &'static str {
        match self {
            Rules::Codex => "Codex-style",
            Rules::OpenCode => "OpenCode-style",
            Rules::Yoagent => "yoagent-style",
            Rules::Naive => "naive",
        }
    }

    /// The source the rules follow, for the report.
    pub fn follows(self) -> &'static str {
        match self {
            Rules::Codex => {
                "openai/codex: `codex-rs/core/src/compact.rs` at commit `e06dd0e5` (the same rules as at \
                 `0100b103`), the local compaction Codex runs for providers other than OpenAI's (for \
                 OpenAI's it asks the server to compact, which no exam can reproduce); trigger from \
                 `ModelInfo::auto_compact_token_limit` (90% of the window)"
            }
            Rules::OpenCode => {
                "sst/opencode: `packages/opencode/src/session/compaction.ts` and `overflow.ts` at commit \
                 `31e22f65`"
            }
            Rules::Yoagent => {
                "yologdev/yoagent v0.18.0 (commit `4dbee877`): `src/context.rs`, `src/llm_compaction.rs`"
            }
            Rules::Naive => "none: the floor every strategy should clear",
        }
    }

    /// Whether the rules have a summary slot (naive has none, so it runs once for both tables).
    pub fn summarises(self) -> bool {
        self != Rules::Naive
    }

    /// The history size that makes these rules compact.
    pub fn trigger_tokens(self, budget: Budget) -> u64 {
        let window = u64::from(budget.window_tokens);
        match self {
            // `(context_window * 9) / 10`.
            Rules::Codex => window * 9 / 10,
            Rules::OpenCode => opencode::usable_tokens(budget),
            Rules::Yoagent => yoagent::budget_tokens(budget),
            Rules::Naive => u64::from(budget.trigger_tokens()),
        }
    }
}

/// Codex keeps at most this many tokens of user messages (`COMPACT_USER_MESSAGE_MAX_TOKENS`).
const CODEX_USER_TOKENS: u64 = 20_000;
/// Stands for Codex's summary prefix template, which opens the summary message even when the
/// model's summary is empty.
const CODEX_SUMMARY_PREFIX: &str = "[summary of the earlier conversation]";

/// A baseline's history and rules.
#[derive(Debug)]
pub struct Baseline {
    rules: Rules,
    slot: Slot,
    budget: Budget,
    history: Request,
    trigger: u64,
}

impl Baseline {
    /// An empty history under `budget`.
    pub fn new(rules: Rules, slot: Slot, budget: Budget) -> Baseline {
        Baseline { rules, slot, budget, history: Vec::new(), trigger: rules.trigger_tokens(budget) }
    }

    fn tokens(&self) -> u64 {
        self.history.iter().map(|m| m.tokens).sum()
    }

    fn summary(&self) -> String {
        match self.slot {
            Slot::Empty => String::new(),
            Slot::StandIn => stand_in(&self.history, SUMMARY_TOKENS),
        }
    }

    fn compact(&mut self) {
        let summary = self.summary();
        match self.rules {
            Rules::Codex => self.history = codex(&self.history, &summary),
            Rules::OpenCode => {
                self.history =
                    opencode::compact(&self.history, opencode::usable_tokens(self.budget), &summary);
            }
            Rules::Yoagent => self.history = yoagent::compact(&self.history, self.trigger, &summary),
            Rules::Naive => {
                while self.tokens() > self.trigger && self.history.len() > 1 {
                    self.history.remove(0);
                }
            }
        }
    }
}

/// User messages newest-first up to 20K tokens (the one crossing the limit cut in the middle),
/// in their order, then the summary message; earlier summaries, assistant text and tool output
/// are dropped.
fn codex(history: &Request, summary: &str) -> Request {
    let mut kept = Vec::new();
    let mut left = CODEX_USER_TOKENS;
    for message in history.iter().rev().filter(|m| m.is_user_text()) {
        if left == 0 {
            break;
        }
        if message.tokens <= left {
            left -= message.tokens;
            kept.push(Arc::clone(message));
        } else {
            let text: String = message.parts.iter().map(|p| &*p.text).collect::<Vec<_>>().join("\n");
            kept.push(Arc::new(Msg::text(Role::User, &middle_cut(&text, left), message.turn, false)));
            break;
        }
    }
    kept.reverse();
    let text = format!("{CODEX_SUMMARY_PREFIX}\n{summary}");
    kept.push(Arc::new(Msg::text(Role::User, &text, usize::MAX, true)));
    kept
}

/// `text` cut to about `tokens` tokens, half from its start and half from its end, with a
/// marker between (Codex's `truncate_text` with a token policy).
fn middle_cut(text: &str, tokens: u64) -> String {
    let keep = (tokens as usize * 4) / 2;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= keep * 2 {
        return text.to_owned();
    }
    let head: String = chars[..keep].iter().collect();
    let tail: String = chars[chars.len() - keep..].iter().collect();
    let cut = (chars.len() - keep * 2).div_ceil(4);
    format!("{head}…{cut} tokens truncated…{tail}")
}

impl Strategy for Baseline {
    fn append(&mut self, records: &[Record], turn: usize) -> anyhow::Result<()> {
        for record in records {
            let message = Msg::from_record(record, turn);
            let message = if self.rules == Rules::Yoagent { yoagent::on_append(message) } else { message };
            self.history.push(Arc::new(message));
        }
        Ok(())
    }

    fn request(&mut self) -> anyhow::Result<(Request, bool)> {
        if self.rules == Rules::OpenCode {
            opencode::prune(&mut self.history);
        }
        // OpenCode compacts at `count >= usable`; the others above their limit.
        let tokens = self.tokens();
        let compacted =
            if self.rules == Rules::OpenCode { tokens >= self.trigger } else { tokens > self.trigger };
        if compacted {
            self.compact();
        }
        Ok((self.history.clone(), compacted))
    }
}
