//! The report's real-corpus section: where each file came from, books and compactions per
//! contender at the corpus windows, and per session the short user requests each request no
//! longer carries verbatim.

use std::fmt::Write as _;

use super::corpus::CorpusRun;
use super::pooled::pool;
use super::report::{pct, thousands};
use super::tables::detail;
use super::targets::user_text_tokens;
use super::{Contender, Exam, SessionRun};

/// The whole section.
pub fn corpus_section(out: &mut String, exam: &Exam, corpus: &CorpusRun) {
    out.push_str("## Real corpus\n\nEach corpus session is imported as the CLI imports it and replayed record by record (a request before every assistant record that follows another role's). Facts are extracted automatically from its first third: exact tokens (paths, numbers, identifiers) that occur exactly once in the whole session, in user text, assistant text and tool output; the open-book question is the three words before the token. Decoys are the same tokens with digits or letters changed, checked never to occur. The transcripts are public and permissively licensed; they are read from `ANNAL_CORPUS` and never copied into this repository.\n\nSources (as the corpus's SOURCES.md names them):\n\n");
    for source in &corpus.sources {
        let _ = writeln!(
            out,
            "- `{}`: {}, from {} at commit `{}`, {}.",
            source.file,
            if source.format.is_empty() { "format not listed" } else { &source.format },
            if source.repo.is_empty() { "a repository not listed" } else { &source.repo },
            source.commit,
            source.license
        );
    }
    out.push('\n');
    for &window in &exam.config.corpus_windows {
        let runs: Vec<&SessionRun> = corpus.sessions.iter().filter(|r| r.window == window).collect();
        if runs.is_empty() {
            continue;
        }
        detail(out, &format!("Real corpus, {} window, all sessions pooled", window.label), &runs, false);
        short_users(out, window.label, &runs);
    }
}

/// Per session, deterministic-v1's requests against the short user requests before them; then
/// every contender pooled.
fn short_users(out: &mut String, label: &str, runs: &[&SessionRun]) {
    let _ = writeln!(
        out,
        "### Real corpus, {label}: user requests under 2,000 tokens\n\n\
         deterministic-v1, per session: the user requests under 2,000 tokens, whether the session's user text \
         alone passes the capacity, how many short requests the views at each tenth of the session's requests \
         (1/10 … 10/10, the last being the final request) no longer carry verbatim, and over every request: \
         the requests missing one and the most missing from one request.\n\n\
         | session | short user requests | user text (tokens) | over capacity | missing at each tenth | requests missing one | most missing |\n\
         | --- | --: | --: | --- | --- | --: | --: |"
    );
    for run in runs {
        let Some((_, r)) = run.runs.iter().find(|(c, _)| *c == Contender::Deterministic) else { continue };
        let total = run.session.records().filter(|rec| super::score::is_user_request(rec)).count();
        let short = total_short(run);
        let user = user_text_tokens(run);
        let over = user > u64::from(run.window.budget().capacity_tokens());
        let n = r.short_missing.len();
        let tenths: Vec<String> = (1..=10)
            .map(|k| {
                r.short_missing.get((k * n).div_ceil(10).saturating_sub(1)).map_or(0, |m| *m).to_string()
            })
            .collect();
        let missing = r.short_missing.iter().filter(|&&m| m > 0).count();
        let most = r.short_missing.iter().max().copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "| {} | {short} of {total} | {} | {} | {} | {} of {} | {most} |",
            run.session.label,
            thousands(user),
            if over { "yes" } else { "no" },
            tenths.join(" "),
            thousands(missing as u64),
            thousands(n as u64)
        );
    }
    out.push_str("\n| contender | requests carrying every short user request verbatim |\n| --- | --: |\n");
    for contender in Contender::ALL {
        let p = pool(runs.iter().copied(), contender);
        let _ = writeln!(
            out,
            "| {} | {} of {} |",
            contender.label(),
            pct(p.short_verbatim.0, p.short_verbatim.1),
            thousands(p.short_verbatim.1)
        );
    }
    out.push('\n');
}

fn total_short(run: &SessionRun) -> usize {
    run.session
        .records()
        .filter(|r| super::score::is_user_request(r))
        .filter(|r| {
            let tokens: u64 = r
                .blocks
                .iter()
                .filter_map(|b| match b {
                    annal_engine::Block::Text { text } => Some(super::session::text_tokens(text)),
                    _ => None,
                })
                .sum();
            tokens < super::score::SHORT_USER_TOKENS
        })
        .count()
}
