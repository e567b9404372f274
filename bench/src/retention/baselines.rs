//! Other agents' compaction rules, reimplemented from their documented behaviour and run on the
//! same sessions. Each keeps its own history (a compaction replaces it, so later compactions
//! work on what earlier ones left) and compacts when the history passes the same trigger annal
//! uses. There is no model in this exam: every summary is empty, as the report says.

use std::sync::Arc;

use annal_engine::{Budget, Record, Role};

use super::engine_side::Strategy;
use super::request::{Msg, Part, PartKind, Request};
use super::session::text_tokens;

/// Which rule set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// User messages newest-first up to 20K tokens, plus a summary.
    Codex,
    /// A summary plus a recent tail of whole turns; old tool output cleared.
    OpenCode,
    /// Truncate tool output, then one-line summaries, then drop the middle.
    Yoagent,
    /// Drop the oldest records until it fits.
    Naive,
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
}

/// Codex keeps at most this many tokens of user messages.
const CODEX_USER_TOKENS: u64 = 20_000;
/// OpenCode's tail: a quarter of what is usable, within these bounds.
const OPENCODE_TAIL_MIN: u64 = 2_000;
const OPENCODE_TAIL_MAX: u64 = 15_000;
/// OpenCode protects the newest 40K tokens of tool output and clears older output only when
/// that frees at least 20K.
const OPENCODE_PROTECT: u64 = 40_000;
const OPENCODE_PRUNE_MIN: u64 = 20_000;
const OPENCODE_CLEARED: &str = "[Old tool result content cleared]";
/// yoagent: tool output past 200 lines keeps its first and last 100; level 3 keeps the first 2
/// and the last 10 messages.
const YOAGENT_LINES: usize = 200;
const YOAGENT_FIRST: usize = 2;
const YOAGENT_RECENT: usize = 10;
/// The empty summary a baseline sends where its model's summary would go.
const EMPTY_SUMMARY: &str = "[summary of the earlier conversation: empty, no model in this exam]";

/// A baseline's history and rules.
#[derive(Debug)]
pub struct Baseline {
    rules: Rules,
    budget: Budget,
    history: Request,
}

impl Baseline {
    /// An empty history under `budget`.
    pub fn new(rules: Rules, budget: Budget) -> Baseline {
        Baseline { rules, budget, history: Vec::new() }
    }

    fn tokens(&self) -> u64 {
        self.history.iter().map(|m| m.tokens).sum()
    }

    fn trigger(&self) -> u64 {
        u64::from(self.budget.trigger_tokens())
    }

    fn summary(&self) -> Arc<Msg> {
        Arc::new(Msg::text(Role::User, EMPTY_SUMMARY, usize::MAX, true))
    }

    fn compact(&mut self) {
        match self.rules {
            Rules::Codex => self.codex(),
            Rules::OpenCode => self.opencode(),
            Rules::Yoagent => self.yoagent(),
            Rules::Naive => {
                while self.tokens() > self.trigger() && self.history.len() > 1 {
                    self.history.remove(0);
                }
            }
        }
    }

    /// User messages newest-first up to 20K tokens (the one crossing the limit cut to fit), in
    /// their order, then the summary; assistant text and tool output are dropped.
    fn codex(&mut self) {
        let mut kept = Vec::new();
        let mut left = CODEX_USER_TOKENS;
        for message in self.history.iter().rev().filter(|m| m.is_user_text()) {
            if left == 0 {
                break;
            }
            if message.tokens <= left {
                left -= message.tokens;
                kept.push(Arc::clone(message));
            } else {
                let text: String = message.parts.iter().map(|p| &*p.text).collect::<Vec<_>>().join("\n");
                let head: String = text.chars().take((left * 4) as usize).collect();
                kept.push(Arc::new(Msg::text(Role::User, &head, message.turn, false)));
                left = 0;
            }
        }
        kept.reverse();
        kept.push(self.summary());
        self.history = kept;
    }

    /// The summary plus the newest whole turns within a quarter of the usable window (2K–15K
    /// tokens); the newest turn is kept even when larger.
    fn opencode(&mut self) {
        let usable = u64::from(self.budget.capacity_tokens());
        let tail = (usable / 4).clamp(OPENCODE_TAIL_MIN, OPENCODE_TAIL_MAX);
        let mut start = self.history.len();
        let mut used = 0;
        let mut turn_tokens = 0;
        for i in (0..self.history.len()).rev() {
            turn_tokens += self.history[i].tokens;
            if self.history[i].is_user_text() {
                if used + turn_tokens > tail && start < self.history.len() {
                    break;
                }
                used += turn_tokens;
                turn_tokens = 0;
                start = i;
            }
        }
        let mut kept = vec![self.summary()];
        kept.extend(self.history[start..].iter().cloned());
        self.history = kept;
    }

    /// Clears tool output older than the newest 40K tokens of it, when that frees 20K or more.
    fn opencode_prune(&mut self) {
        let mut seen = 0;
        let mut clear = Vec::new();
        let mut freed = 0;
        for (i, message) in self.history.iter().enumerate().rev() {
            for part in message.parts.iter().filter(|p| p.kind == PartKind::Result) {
                let tokens = text_tokens(&part.text);
                if seen >= OPENCODE_PROTECT && &*part.text != OPENCODE_CLEARED {
                    freed += tokens;
                    clear.push(i);
                }
                seen += tokens;
            }
        }
        if freed < OPENCODE_PRUNE_MIN {
            return;
        }
        clear.dedup();
        for i in clear {
            let old = &self.history[i];
            let parts = old
                .parts
                .iter()
                .map(|p| {
                    if p.kind == PartKind::Result {
                        Part { text: OPENCODE_CLEARED.into(), ..p.clone() }
                    } else {
                        p.clone()
                    }
                })
                .collect();
            self.history[i] = Arc::new(Msg::new(old.role, parts, old.turn, old.synthetic));
        }
    }

    /// Level 1, 2 and 3 in turn, stopping at the first that fits the trigger.
    fn yoagent(&mut self) {
        // Level 1: tool output past 200 lines keeps its first and last 100.
        for slot in self.history.iter_mut() {
            if slot.parts.iter().any(|p| p.kind == PartKind::Result && p.text.lines().count() > YOAGENT_LINES)
            {
                let parts = slot.parts.iter().map(truncate_lines).collect();
                *slot = Arc::new(Msg::new(slot.role, parts, slot.turn, slot.synthetic));
            }
        }
        if self.tokens() <= self.trigger() {
            return;
        }
        // Level 2: assistant turns before the newest 10 messages become one line each (their
        // tool results go with them, so no result is left without its call).
        let recent = self.history.len().saturating_sub(YOAGENT_RECENT);
        let mut kept = Vec::new();
        for (i, message) in self.history.iter().enumerate() {
            if i >= recent || message.role == Role::User || message.synthetic {
                kept.push(Arc::clone(message));
            } else if message.role == Role::Assistant {
                kept.push(Arc::new(Msg::text(Role::Assistant, &one_line(message), message.turn, true)));
            }
        }
        self.history = kept;
        if self.tokens() <= self.trigger() {
            return;
        }
        // Level 3: keep the first 2 and the newest 10 messages.
        let n = self.history.len();
        if n > YOAGENT_FIRST + YOAGENT_RECENT {
            self.history.drain(YOAGENT_FIRST..n - YOAGENT_RECENT);
        }
    }
}

/// A result part cut to its first and last 100 lines (other parts unchanged).
fn truncate_lines(part: &Part) -> Part {
    let lines: Vec<&str> = part.text.lines().collect();
    if part.kind != PartKind::Result || lines.len() <= YOAGENT_LINES {
        return part.clone();
    }
    let half = YOAGENT_LINES / 2;
    let text = format!(
        "{}\n[... {} lines truncated ...]\n{}",
        lines[..half].join("\n"),
        lines.len() - YOAGENT_LINES,
        lines[lines.len() - half..].join("\n")
    );
    Part { text: text.into(), ..part.clone() }
}

/// A one-line summary of an assistant message: its first line (at most 100 characters) and the
/// tools it called.
fn one_line(message: &Msg) -> String {
    let first: String = message
        .parts
        .iter()
        .find(|p| p.kind == PartKind::Text)
        .and_then(|p| p.text.lines().next())
        .unwrap_or("")
        .chars()
        .take(100)
        .collect();
    let tools: Vec<&str> =
        message.parts.iter().filter(|p| p.kind == PartKind::Call).map(|p| &*p.tool).collect();
    if tools.is_empty() {
        format!("[earlier reply: {first}]")
    } else {
        format!("[earlier reply: {first} (tools: {})]", tools.join(", "))
    }
}

impl Strategy for Baseline {
    fn append(&mut self, records: &[Record], turn: usize) -> anyhow::Result<()> {
        self.history.extend(records.iter().map(|r| Arc::new(Msg::from_record(r, turn))));
        Ok(())
    }

    fn request(&mut self) -> anyhow::Result<(Request, bool)> {
        if self.rules == Rules::OpenCode {
            self.opencode_prune();
        }
        let compacted = self.tokens() > self.trigger();
        if compacted {
            self.compact();
        }
        Ok((self.history.clone(), compacted))
    }
}
