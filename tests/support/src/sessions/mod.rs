//! The one family of seeded session generators the tests and benchmarks share: a [`Profile`]
//! names what a session is like, a [`SessionSpec`] (profile and seed) yields its records, and
//! every profile builds its records with [`record`] and its text with [`text`]'s builders.
//!
//! | profile | used by | shape |
//! |---|---|---|
//! | [`Profile::Agent`] | append, codec and search benchmarks | mixed roles, ~2% outputs of 45–55 KB |
//! | [`Profile::ToolHeavy`] | projection benchmark | ~8 KB a record, outputs up to 60 KB |
//! | [`Profile::SearchZipf`] | search benchmark | Zipfian words, planted identifiers |
//! | [`Profile::Chat`], [`Profile::Records`], [`Profile::Coding`], [`Profile::Mixed`] | retention exam | turns of steps; heavy-tailed shell output |
//! | [`Profile::Paste`], [`Profile::Resumed`] | retention exam | a large paste first, short asks after; a session resumed from a compaction summary |
//! | [`shaped::Shape`] | projection and checkpoint tests | stress shapes switched on one by one |
//!
//! The varied records and the scripted workload of the crash tests (`records`, `workload`) use
//! the same text builders. Every profile keeps the exact order of draws of the generator it
//! replaced, so the published figures (docs/performance.md, docs/evaluation.md) stay
//! reproducible: a change to a profile's draws is a change to those documents.

pub mod agent;
pub mod pasted;
pub mod prose;
pub mod shaped;
pub mod text;
pub mod tool_heavy;
pub mod turns;
pub mod zipf;

use std::collections::BTreeMap;

use annal_engine::{Block, Record, Role};

pub use self::shaped::{shaped, Shape};
pub use self::turns::{Turn, Turns};

/// What a generated session is like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// Conversation only, no tools: turns of a request and an answer.
    Chat = 0,
    /// One lookup per turn returning a ~60-line record.
    Records = 1,
    /// 1–3 parallel tool calls per model step: heavy-tailed shell output, file reads, edits,
    /// some failures.
    Coding = 2,
    /// Alternating 10-turn phases of chat and coding.
    Mixed = 3,
    /// The append benchmark's agent session (see [`agent`]).
    Agent = 4,
    /// The projection benchmark's tool-heavy session (see [`tool_heavy`]).
    ToolHeavy = 5,
    /// The search benchmark's Zipfian records (see [`zipf`]).
    SearchZipf = 6,
    /// Coding turns after a first user message carrying a 10–40K-token paste; later asks are
    /// short (40–700 characters), some with a pasted file.
    Paste = 7,
    /// Coding turns after a first user record that is another agent's compaction summary, as
    /// Claude Code writes it (`isCompactSummary` in its metadata).
    Resumed = 8,
}

impl Profile {
    /// The profiles generated turn by turn, in the retention report's order. Their numbers
    /// (0–3) are part of the retention exam's seeds.
    pub const WITH_TURNS: [Profile; 4] = [Profile::Chat, Profile::Records, Profile::Coding, Profile::Mixed];

    /// Every profile generated turn by turn: [`Profile::WITH_TURNS`], then the two added for
    /// the retention exam later (their numbers, 7 and 8, are part of its seeds).
    pub const EXAM: [Profile; 6] =
        [Profile::Chat, Profile::Records, Profile::Coding, Profile::Mixed, Profile::Paste, Profile::Resumed];

    /// The label in reports.
    pub fn label(self) -> &'static str {
        match self {
            Profile::Chat => "chat",
            Profile::Records => "records",
            Profile::Coding => "coding",
            Profile::Mixed => "mixed",
            Profile::Agent => "agent",
            Profile::ToolHeavy => "tool-heavy",
            Profile::SearchZipf => "search-zipf",
            Profile::Paste => "paste",
            Profile::Resumed => "resumed",
        }
    }
}

/// A session to generate: the same spec always yields the same records, on every machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionSpec {
    /// What it is like.
    pub profile: Profile,
    /// The seed.
    pub seed: u64,
}

impl SessionSpec {
    /// The session's records, endlessly: callers take as many as they need.
    pub fn records(&self) -> Box<dyn Iterator<Item = Record> + Send> {
        match self.profile {
            Profile::Agent => Box::new(agent::Agent::new(self.seed)),
            Profile::ToolHeavy => Box::new(tool_heavy::ToolHeavy::new(self.seed)),
            Profile::SearchZipf => Box::new(zipf::SearchZipf::new(self.seed)),
            profile => {
                Box::new(Turns::new(profile, self.seed).flat_map(|turn| turn.steps.into_iter().flatten()))
            }
        }
    }

    /// The session's turns, endlessly.
    ///
    /// # Panics
    /// If the profile is not one of [`Profile::EXAM`].
    pub fn turns(&self) -> Turns {
        Turns::new(self.profile, self.seed)
    }
}

/// The one place a generated record is made: no timestamp, no metadata (a profile that has
/// them sets them on the result).
pub fn record(entry_id: String, role: Role, blocks: Vec<Block>) -> Record {
    Record { entry_id, role, timestamp: None, blocks, meta: BTreeMap::new() }
}

/// The payload bytes of a record: text, thinking, tool inputs, tool outputs and blob data (the
/// size the benchmarks report a workload by).
pub fn payload_bytes(record: &Record) -> usize {
    record
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } | Block::Thinking { text } => text.len(),
            Block::ToolCall { input, .. } => input.len(),
            Block::ToolResult { output, .. } => output.len(),
            Block::Blob { data, .. } => data.len(),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 200th record's entryId and the payload bytes of the first 200 records of each
    /// profile at seed 1, as the published figures were measured on: a change here is a change
    /// to docs/performance.md and docs/evaluation.md.
    #[test]
    fn profiles_keep_their_draws() {
        let pinned = [
            (Profile::Chat, "r000200", 209_593),
            (Profile::Records, "r000200", 326_734),
            (Profile::Coding, "r000200", 839_465),
            (Profile::Mixed, "r000200", 1_080_864),
            (Profile::Agent, "1362aaf1-45f0-4752-adac-3585153f4b03", 471_551),
            (Profile::ToolHeavy, "b-0000199", 1_593_750),
            (Profile::SearchZipf, "g0-199", 84_404),
        ];
        for (profile, last_id, bytes) in pinned {
            let records: Vec<Record> = SessionSpec { profile, seed: 1 }.records().take(200).collect();
            assert_eq!(records.len(), 200, "{profile:?}");
            assert_eq!(records[199].entry_id, last_id, "{profile:?}");
            assert_eq!(records.iter().map(payload_bytes).sum::<usize>(), bytes, "{profile:?}");
        }
    }
}
