//! The turns of the two profiles added for the retention exam's user-text checks: `paste` (a
//! large paste in the first user message, short asks after, some with a pasted file) and
//! `resumed` (a first user record that is another agent's compaction summary).

use annal_engine::{Record, Role};

use super::prose::{paragraph, sentence, shell_line, source_line};
use crate::rng::Rng;

/// A later `paste` ask carries a pasted file this often, in thousandths.
const PASTE_LATER_PER_MILLE: u64 = 150;

/// What Claude Code writes at the head of a compaction summary it resumes from.
pub const RESUMED_HEAD: &str =
    "This session is being continued from a previous conversation that ran out of \
     context. The conversation is summarized below:";

/// What Claude Code writes after the summary.
pub const RESUMED_TAIL: &str =
    "Please continue the conversation from where we left it off without asking the \
     user any further questions. Continue with the last task that you were asked to work on.";

/// About `tokens` tokens (chars / 4) of one kind of pasted text: a spec, a log or a source file.
pub fn pasted(rng: &mut Rng, tokens: usize) -> String {
    let line: fn(&mut Rng) -> String = match rng.between(0, 2) {
        0 => sentence,
        1 => shell_line,
        _ => source_line,
    };
    let mut out = String::new();
    while out.len() / 4 < tokens {
        out.push_str(&line(rng));
        out.push('\n');
    }
    out
}

/// A short ask: a paragraph cut to 40–700 characters (at a word boundary when there is one).
pub fn short_ask(rng: &mut Rng) -> String {
    let limit = rng.between(40, 700);
    let text = paragraph(rng, 6);
    if text.len() <= limit {
        return text;
    }
    let cut = text[..limit].rfind(' ').filter(|&i| i >= 40).unwrap_or(limit);
    format!("{}.", text[..cut].trim_end_matches([',', ' ']))
}

/// The first `paste` ask: one sentence of request, then a 10–40K-token paste in a fence.
pub fn first_paste_ask(rng: &mut Rng) -> String {
    let lead = paragraph(rng, 1);
    let tokens = rng.between(10_000, 40_000);
    format!("{lead}\n\n```\n{}```", pasted(rng, tokens))
}

/// A later `paste` ask: short, and now and then with a pasted file of 500–6,000 tokens.
pub fn later_paste_ask(rng: &mut Rng) -> String {
    let ask = short_ask(rng);
    if rng.chance(PASTE_LATER_PER_MILLE, 1000) {
        let tokens = rng.between(500, 6_000);
        format!("{ask}\n\n```\n{}```", pasted(rng, tokens))
    } else {
        ask
    }
}

/// A compaction summary in the sections Claude Code's summaries use, 1.5–6K tokens.
pub fn resumed_summary(rng: &mut Rng) -> String {
    let sections = [
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ];
    let tokens = rng.between(1_500, 6_000);
    let mut out = format!("{RESUMED_HEAD}\nAnalysis:\n{}\n\nSummary:\n", paragraph(rng, 3));
    let per_section = tokens * 4 / sections.len();
    for (i, title) in sections.iter().enumerate() {
        out.push_str(&format!("{}. {title}:\n", i + 1));
        let start = out.len();
        while out.len() - start < per_section {
            let line = if i == 2 { source_line(rng) } else { sentence(rng) };
            out.push_str(&format!("   - {line}\n"));
        }
        out.push('\n');
    }
    out.push_str(RESUMED_TAIL);
    out
}

/// Marks `record` as Claude Code marks a compaction summary (metadata values are JSON, as the
/// Claude Code importer keeps them).
pub fn mark_compact_summary(record: &mut Record) {
    debug_assert_eq!(record.role, Role::User);
    record.meta.insert("isCompactSummary".into(), "true".into());
    record.meta.insert("isVisibleInTranscriptOnly".into(), "true".into());
}
