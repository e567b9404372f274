//! Results pooled over sessions: one contender's closed and open book, compaction checks,
//! stability and drift summed over a set of session runs, as every table reads them.

use std::collections::BTreeMap;

use super::drive::RunResult;
use super::facts::Fact;
use super::openbook::TOP;
use super::score::Score;
use super::{Contender, SessionRun};

fn add(a: &mut (u64, u64), b: (u64, u64)) {
    a.0 += b.0;
    a.1 += b.1;
}

fn add_score(a: &mut Score, b: &Score) {
    for (x, y) in a.iter_mut().zip(b) {
        add(x, *y);
    }
}

/// Facts missing from the final request that search ranks within `top`: (found, missing).
pub fn open_book(result: &RunResult, top: usize) -> (u64, u64) {
    let mut out = (0, 0);
    for (kept, rank) in result.kept.iter().zip(&result.open_rank) {
        if !kept {
            out.1 += 1;
            out.0 += u64::from(rank.is_some_and(|r| r < top));
        }
    }
    out
}

/// The most any order of hits reaches on `result`'s open book, top 1 and top [`TOP`] as
/// (found, missing). Facts asked by the same question (their area and noun) get the same list
/// of hits, and one record may state several of them: per question, at most the facts of its
/// best record are first, and at most those of its best [`TOP`] records in the top [`TOP`].
/// Only a question's context can tell the others apart.
pub fn open_ceiling(result: &RunResult, facts: &[Fact]) -> ((u64, u64), (u64, u64)) {
    let mut records: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for (kept, fact) in result.kept.iter().zip(facts) {
        if !kept {
            *records.entry((fact.query.as_str(), fact.entry_id.as_str())).or_default() += 1;
        }
    }
    let mut questions: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (&(query, _), &count) in &records {
        questions.entry(query).or_default().push(count);
    }
    let (mut first, mut top) = (0, 0);
    for counts in questions.values_mut() {
        counts.sort_unstable_by(|a, b| b.cmp(a));
        first += counts.first().copied().unwrap_or(0);
        top += counts.iter().take(TOP).sum::<u64>();
    }
    let missing = records.values().sum();
    ((first, missing), (top, missing))
}

/// Totals of one contender over a set of session runs.
#[derive(Debug, Default, Clone)]
pub struct Pooled {
    /// Closed book in the final request.
    pub last: Score,
    /// Closed book summed over the scored requests (after each compaction, and the final).
    pub mean: Score,
    /// Open book top 1 and top 5 (found, missing).
    pub open_top1: (u64, u64),
    /// See above.
    pub open_top5: (u64, u64),
    /// The most any order reaches, top 1 and top 5 (found, missing): see [`open_ceiling`].
    pub ceiling_top1: (u64, u64),
    /// See above.
    pub ceiling_top5: (u64, u64),
    /// Decoy false hits, closed and open book.
    pub decoys: u64,
    /// Requests made.
    pub requests: u64,
    /// Compactions.
    pub compactions: u64,
    /// Compactions losing the task prompt, the latest ask; orphans; marker-only.
    pub task_lost: u64,
    /// See above.
    pub ask_lost: u64,
    /// See above.
    pub orphans: u64,
    /// See above.
    pub marker_only: u64,
    /// Tokens after compaction, summed.
    pub tokens_after: u64,
    /// Requests over capacity.
    pub over_capacity: u64,
    /// Turns in full detail, turns.
    pub full_turns: (u64, u64),
    /// Prefix shares: all requests, between compactions.
    pub prefix_all: (f64, u64),
    /// See above.
    pub prefix_between: (f64, u64),
    /// Drift: per compaction rank (1, 2, 3, later): sum of recalls, sessions.
    pub drift: [(f64, u64); 4],
    /// Requests carrying every user request under 2,000 tokens verbatim, requests checked.
    pub short_verbatim: (u64, u64),
}

/// Pools `contender` over `runs`.
pub fn pool<'a>(runs: impl Iterator<Item = &'a SessionRun>, contender: Contender) -> Pooled {
    let mut p = Pooled::default();
    for run in runs {
        let Some((_, r)) = run.runs.iter().find(|(c, _)| *c == contender) else { continue };
        add_score(&mut p.last, &r.final_score());
        add_score(&mut p.mean, &r.mean_score());
        add(&mut p.open_top1, open_book(r, 1));
        add(&mut p.open_top5, open_book(r, TOP));
        let (ceiling1, ceiling5) = open_ceiling(r, &run.session.facts);
        add(&mut p.ceiling_top1, ceiling1);
        add(&mut p.ceiling_top5, ceiling5);
        p.decoys += r.decoy_hits + run.open.decoy_hits;
        p.requests += r.requests;
        p.compactions += r.compactions.len() as u64;
        for c in &r.compactions {
            p.task_lost += u64::from(c.task_lost);
            p.ask_lost += u64::from(c.ask_lost);
            p.orphans += c.orphans;
            p.marker_only += u64::from(c.marker_only);
            p.tokens_after += c.tokens;
        }
        p.over_capacity += r.over_capacity;
        add(&mut p.full_turns, (r.full_turns, r.turns));
        p.prefix_all.0 += r.prefix_all.0;
        p.prefix_all.1 += r.prefix_all.1;
        p.prefix_between.0 += r.prefix_between.0;
        p.prefix_between.1 += r.prefix_between.1;
        for &(k, recall) in &r.drift {
            let slot = &mut p.drift[k.min(4) - 1];
            slot.0 += recall;
            slot.1 += 1;
        }
        let ok = r.short_missing.iter().filter(|&&m| m == 0).count() as u64;
        add(&mut p.short_verbatim, (ok, r.short_missing.len() as u64));
    }
    p
}

/// `a`'s rate over `b`'s (infinite when `b` kept nothing).
pub fn ratio(a: (u64, u64), b: (u64, u64)) -> f64 {
    let x = rate(a);
    let y = rate(b);
    if y == 0.0 {
        f64::INFINITY
    } else {
        x / y
    }
}

/// `kept / total` (1 when there is nothing to count).
pub fn rate(a: (u64, u64)) -> f64 {
    if a.1 == 0 {
        1.0
    } else {
        a.0 as f64 / a.1 as f64
    }
}
