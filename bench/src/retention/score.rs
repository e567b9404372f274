//! What the drive loop measures on a request besides its size: which facts stated so far it
//! still quotes (closed book, by class), which short user requests it still carries verbatim,
//! and whether anything original from before the newest step survived a compaction.

use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use aho_corasick::AhoCorasick;
use annal_engine::{Block, Record, Role};

use super::facts::FactClass;
use super::request::{PartKind, Request};
use super::session::{block_text, text_tokens, Session};

/// A user request under this many tokens must stay verbatim.
pub const SHORT_USER_TOKENS: u64 = 2_000;

/// Closed book in one request: (kept, stated) per class in [`FactClass::ALL`] order, then all
/// classes, then user facts outside any user message larger than the capacity.
pub type Score = [(u64, u64); 5];

/// The hash of a text, for finding originals in a request.
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Where every record and fact sits in the session, counted in steps (the groups of records
/// appended between requests), and which texts are originals.
#[derive(Debug)]
pub struct Layout {
    /// Per fact: the step that appends its record.
    fact_step: Vec<usize>,
    /// Per fact: a user fact inside a user message larger than the capacity (no strategy can
    /// keep it verbatim).
    exempt: Vec<bool>,
    /// Originals by text hash: the first step holding each.
    step_of: HashMap<u64, usize>,
    /// Short user requests: the step appending each and its text blocks' hashes.
    short_users: Vec<(usize, Vec<u64>)>,
    /// Every fact's value, found in one pass over a request.
    values: Option<AhoCorasick>,
}

fn user_text_tokens(record: &Record) -> u64 {
    record.blocks.iter().filter(|b| matches!(b, Block::Text { .. })).map(|b| text_tokens(block_text(b))).sum()
}

/// Whether `record` is a user's request: user text that is not another agent's compaction
/// summary.
pub fn is_user_request(record: &Record) -> bool {
    record.role == Role::User
        && record.blocks.iter().any(|b| matches!(b, Block::Text { .. }))
        && record.meta.get("isCompactSummary").is_none_or(|v| v != "true")
}

impl Layout {
    /// The layout of `session` for a request capacity of `capacity_tokens`.
    pub fn new(session: &Session, capacity_tokens: u64) -> Layout {
        let mut record_step = HashMap::new();
        let mut step_of = HashMap::new();
        let mut short_users = Vec::new();
        let steps = session.turns.iter().flat_map(|t| &t.steps);
        for (s, step) in steps.enumerate() {
            for record in step {
                record_step.insert(record.entry_id.as_str(), (s, record));
                for block in &record.blocks {
                    if !matches!(block, Block::ToolCall { .. }) && !block_text(block).is_empty() {
                        step_of.entry(text_hash(block_text(block))).or_insert(s);
                    }
                }
                if is_user_request(record) && user_text_tokens(record) < SHORT_USER_TOKENS {
                    let texts = record.blocks.iter().filter(|b| matches!(b, Block::Text { .. }));
                    short_users.push((s, texts.map(|b| text_hash(block_text(b))).collect()));
                }
            }
        }
        let mut fact_step = Vec::new();
        let mut exempt = Vec::new();
        for fact in &session.facts {
            let found = record_step.get(fact.entry_id.as_str());
            fact_step.push(found.map_or(usize::MAX, |(s, _)| *s));
            let large = found.is_some_and(|(_, r)| user_text_tokens(r) > capacity_tokens);
            exempt.push(fact.class == FactClass::User && large);
        }
        let values = AhoCorasick::new(session.facts.iter().map(|f| &f.value)).ok();
        Layout { fact_step, exempt, step_of, short_users, values }
    }

    /// Closed book of `request`, made after step `step`, over the facts stated by then.
    pub fn score(&self, session: &Session, request: &Request, step: usize) -> Score {
        let mut found = vec![false; session.facts.len()];
        if let Some(values) = &self.values {
            for part in request.iter().flat_map(|m| &m.parts) {
                for hit in values.find_overlapping_iter(&*part.text) {
                    found[hit.pattern().as_usize()] = true;
                }
            }
        }
        let mut score = Score::default();
        for (i, fact) in session.facts.iter().enumerate() {
            if self.fact_step[i] > step {
                continue;
            }
            let kept = u64::from(found[i]);
            let class = fact.class as usize;
            for slot in [class, 3] {
                score[slot].0 += kept;
                score[slot].1 += 1;
            }
            if fact.class == FactClass::User && !self.exempt[i] {
                score[4].0 += kept;
                score[4].1 += 1;
            }
        }
        score
    }

    /// How many user requests under 2,000 tokens appended by step `step` `request` does not
    /// carry verbatim (dropped, cut, or replaced by a marker).
    pub fn short_users_missing(&self, request: &Request, step: usize) -> u32 {
        // A short request's blocks are under 8,000 characters: longer parts cannot be one.
        let present: BTreeSet<u64> = request
            .iter()
            .filter(|m| m.role == Role::User)
            .flat_map(|m| &m.parts)
            .filter(|p| p.kind == PartKind::Text && p.text.len() <= 32_000)
            .map(|p| text_hash(&p.text))
            .collect();
        let stated = self.short_users.iter().take_while(|(s, _)| *s <= step);
        stated.filter(|(_, blocks)| !blocks.iter().all(|h| present.contains(h))).count() as u32
    }

    /// Whether `request` carries any original from before step `step` other than `ask` (the
    /// current turn's user message): if not, all it kept of the compacted part is markers,
    /// notes or a summary.
    pub fn any_before(&self, request: &Request, step: usize, ask: &str) -> bool {
        let ask = text_hash(ask);
        request.iter().flat_map(|m| &m.parts).any(|p| {
            let hash = text_hash(&p.text);
            hash != ask && self.step_of.get(&hash).is_some_and(|s| *s < step)
        })
    }

    /// Per fact, whether it is exempt from the user-fact target.
    pub fn exempt(&self) -> &[bool] {
        &self.exempt
    }
}
