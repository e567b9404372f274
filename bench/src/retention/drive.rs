//! The drive loop: append a step, ask for the request before each model step (the strategy
//! compacts when its trigger fires), measure every request and every compaction, and score
//! closed book the request right after each compaction and the final one.

use std::collections::{BTreeMap, BTreeSet};

use annal_engine::Block;

use super::engine_side::Strategy;
use super::facts::FactClass;
use super::request::{joined, orphans, prefix_share, tokens, Request};
use super::score::{text_hash, Layout, Score};
use super::session::{block_text, Session};

/// A prompt counts as kept when this many of its first characters appear verbatim.
const PROMPT_CHARS: usize = 200;

/// What one compaction left.
#[derive(Clone, Debug, Default)]
pub struct CompactionCheck {
    /// The session's first user message is gone.
    pub task_lost: bool,
    /// The current turn's user message is gone.
    pub ask_lost: bool,
    /// Calls without results plus results without calls.
    pub orphans: u64,
    /// Nothing original from before the newest step survived but the current turn's user
    /// message (only markers, notes or summaries).
    pub marker_only: bool,
    /// Tokens of the request after compacting.
    pub tokens: u64,
}

/// Everything measured on one session under one strategy.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Requests made.
    pub requests: u64,
    /// Requests above the capacity (what could not have been sent).
    pub over_capacity: u64,
    /// One entry per compaction.
    pub compactions: Vec<CompactionCheck>,
    /// Sum and count of prefix shares over all requests after the first.
    pub prefix_all: (f64, u64),
    /// The same over requests with no compaction since the previous one.
    pub prefix_between: (f64, u64),
    /// Closed-book recall of the facts stated before the first compaction, after the 1st, 2nd,
    /// 3rd and the last (4th or later) compaction.
    pub drift: Vec<(usize, f64)>,
    /// Closed book of each request right after a compaction, then of the final request.
    pub scored: Vec<Score>,
    /// Per fact (session order): its value is in the final request.
    pub kept: Vec<bool>,
    /// Per fact: a user fact inside a user message larger than the capacity.
    pub exempt: Vec<bool>,
    /// Per request: user requests under 2,000 tokens it does not carry verbatim (only for
    /// sessions that check them).
    pub short_missing: Vec<u32>,
    /// Decoy values found in the final request.
    pub decoy_hits: u64,
    /// Turns whose every block is in the final request verbatim.
    pub full_turns: u64,
    /// Turns in the session.
    pub turns: u64,
    /// The records whose every block is in the final request verbatim (by entryId): what the
    /// model already has, which its open-book search leaves out.
    pub seen: BTreeSet<String>,
    /// Per fact: the rank (0 = first) of the record stating it among the top open-book hits of
    /// this contender's search, if it is there.
    pub open_rank: Vec<Option<usize>>,
}

impl RunResult {
    /// Closed-book (kept, total) of `class` (all classes for `None`) in the final request.
    pub fn closed(&self, session: &Session, class: Option<FactClass>) -> (u64, u64) {
        let mut out = (0, 0);
        for (fact, kept) in session.facts.iter().zip(&self.kept) {
            if class.is_none_or(|c| c == fact.class) {
                out.1 += 1;
                out.0 += u64::from(*kept);
            }
        }
        out
    }

    /// The final request's score.
    pub fn final_score(&self) -> Score {
        self.scored.last().copied().unwrap_or_default()
    }

    /// The scored requests' mean, per class: facts kept over facts stated, summed request by
    /// request, as a rate; returned weighed by the facts the session states in all (the final
    /// request's count, in thousandths), so pooling weighs a session by its facts, never by how
    /// often a contender compacted in it (each compaction is a scored request).
    pub fn mean_score(&self) -> Score {
        let mut sums = Score::default();
        for score in &self.scored {
            for (total, s) in sums.iter_mut().zip(score) {
                total.0 += s.0;
                total.1 += s.1;
            }
        }
        let mut out = Score::default();
        for ((kept, stated), (slot, last)) in sums.iter().zip(out.iter_mut().zip(self.final_score())) {
            let facts = last.1 * 1_000;
            let rate = if *stated == 0 { 0.0 } else { *kept as f64 / *stated as f64 };
            *slot = ((rate * facts as f64).round() as u64, facts);
        }
        out
    }
}

fn opening(text: &str) -> &str {
    match text.char_indices().nth(PROMPT_CHARS) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

fn first_user_text(session: &Session, turn: usize) -> Option<&str> {
    session.turns[turn].steps.iter().flatten().find_map(|r| {
        (r.role == annal_engine::Role::User).then_some(())?;
        r.blocks.iter().find_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
    })
}

fn recall(session: &Session, text: &str, facts: &[usize]) -> f64 {
    if facts.is_empty() {
        return 1.0;
    }
    facts.iter().filter(|&&i| text.contains(&session.facts[i].value)).count() as f64 / facts.len() as f64
}

/// The loop's state between requests.
struct Meter<'a> {
    session: &'a Session,
    layout: Layout,
    capacity_tokens: u64,
    task: String,
    previous: Option<Request>,
    early: Vec<usize>,
    last_compaction: Option<Request>,
    result: RunResult,
}

impl Meter<'_> {
    /// Measures `request`, made after step `step` of turn `turn`.
    fn measure(&mut self, request: &Request, compacted: bool, turn: usize, step: usize) {
        let result = &mut self.result;
        result.requests += 1;
        let size = tokens(request);
        result.over_capacity += u64::from(size > self.capacity_tokens);
        if let Some(previous) = &self.previous {
            let share = prefix_share(previous, request);
            result.prefix_all.0 += share;
            result.prefix_all.1 += 1;
            if !compacted {
                result.prefix_between.0 += share;
                result.prefix_between.1 += 1;
            }
        }
        if self.session.check_user_requests {
            result.short_missing.push(self.layout.short_users_missing(request, step));
        }
        if compacted {
            self.compaction(request, turn, step, size);
        }
        self.previous = Some(request.clone());
    }

    fn compaction(&mut self, request: &Request, turn: usize, step: usize, size: u64) {
        let session = self.session;
        let text = joined(request);
        let ask_text = first_user_text(session, turn).unwrap_or_default();
        let (calls, results) = orphans(request);
        self.result.compactions.push(CompactionCheck {
            task_lost: !text.contains(&self.task),
            ask_lost: !text.contains(opening(ask_text)),
            orphans: calls + results,
            marker_only: step > 0 && !self.layout.any_before(request, step, ask_text),
            tokens: size,
        });
        self.result.scored.push(self.layout.score(session, request, step));
        let k = self.result.compactions.len();
        if k == 1 {
            self.early = (0..session.facts.len()).filter(|&i| session.facts[i].turn < turn).collect();
        }
        if k <= 3 {
            self.result.drift.push((k, recall(session, &text, &self.early)));
        } else {
            self.last_compaction = Some(request.clone());
        }
    }
}

/// Runs `session` through `strategy` with capacity `capacity_tokens`.
///
/// # Errors
/// A failure of the strategy (the engine's errors included).
pub fn drive(
    session: &Session,
    strategy: &mut dyn Strategy,
    capacity_tokens: u64,
) -> anyhow::Result<RunResult> {
    let task = first_user_text(session, 0).map(|t| opening(t).to_owned()).unwrap_or_default();
    let mut meter = Meter {
        session,
        layout: Layout::new(session, capacity_tokens),
        capacity_tokens,
        task,
        previous: None,
        early: Vec::new(),
        last_compaction: None,
        result: RunResult { turns: session.turns.len() as u64, ..RunResult::default() },
    };
    // The step just appended, counted over the whole session.
    let mut step_index = 0;
    for (t, turn) in session.turns.iter().enumerate() {
        for (s, step) in turn.steps.iter().enumerate() {
            strategy.append(step, t)?;
            if s + 1 < turn.steps.len() {
                let (request, compacted) = strategy.request()?;
                meter.measure(&request, compacted, t, step_index);
            }
            step_index += 1;
        }
    }
    // The request before the next model step, after the whole session.
    let (last, compacted) = strategy.request()?;
    let final_step = step_index.saturating_sub(1);
    meter.measure(&last, compacted, session.turns.len() - 1, final_step);
    if compacted {
        // The final request is scored once, as the final one.
        meter.result.scored.pop();
    }
    let final_score = meter.layout.score(session, &last, final_step);
    let mut result = finish(meter, &last);
    result.scored.push(final_score);
    Ok(result)
}

/// The final request's facts, decoys and whole turns, and the last drift point.
fn finish(meter: Meter<'_>, last: &Request) -> RunResult {
    let Meter { session, layout, early, last_compaction, mut result, .. } = meter;
    if let Some(request) = last_compaction {
        let k = result.compactions.len();
        result.drift.push((k, recall(session, &joined(&request), &early)));
    }
    let text = joined(last);
    result.kept = session.facts.iter().map(|f| text.contains(&f.value)).collect();
    result.exempt = layout.exempt().to_vec();
    result.decoy_hits = session.decoys.iter().filter(|d| text.contains(&d.value)).count() as u64;
    let present: BTreeSet<u64> = last.iter().flat_map(|m| &m.parts).map(|p| text_hash(&p.text)).collect();
    result.full_turns = session
        .turns
        .iter()
        .filter(|turn| {
            turn.steps
                .iter()
                .flatten()
                .flat_map(|r| &r.blocks)
                .filter(|b| !matches!(b, Block::ToolCall { .. }) && !block_text(b).is_empty())
                .all(|b| present.contains(&text_hash(block_text(b))))
        })
        .count() as u64;
    result.seen = session
        .turns
        .iter()
        .flat_map(|turn| turn.steps.iter().flatten())
        .filter(|r| {
            r.blocks.iter().all(|b| block_text(b).is_empty() || present.contains(&text_hash(block_text(b))))
        })
        .map(|r| r.entry_id.clone())
        .collect();
    result
}

/// Per fact class, the share kept in the final request: for the report's closed-book columns.
pub fn closed_by_class(session: &Session, result: &RunResult) -> BTreeMap<FactClass, (u64, u64)> {
    FactClass::ALL.iter().map(|&c| (c, result.closed(session, Some(c)))).collect()
}
