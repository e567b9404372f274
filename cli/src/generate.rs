//! A deterministic generator of realistic agent coding sessions: the same spec always yields the
//! same records, byte for byte, on every machine.
//!
//! A session is a run of turns. Each turn opens with a user request, then loops: the assistant
//! reasons (thinking), says what it does (text) and calls tools (Read, Grep, Glob, Edit, Bash,
//! sometimes two at once); each call is answered by a tool record. Exploring comes first, then
//! editing and building, then testing, and the turn closes with the assistant's summary. Tool
//! output is the bulk, as in real sessions: whole files, compiler errors, failing test runs and
//! multi-thousand-line logs. Unchanged files and passing test runs repeat verbatim, as they do in
//! practice, which is what the store's blob deduplication is for.

mod cargo;
mod project;
mod topics;

use std::collections::BTreeMap;

use annal::{Block, Record, Role};
use annal_stdx::SplitMix64;
use serde_json::json;

use self::project::Project;
use self::topics::{Topic, TOPICS};

/// The demo's draws over SplitMix64, whose sequence is fixed, so a seed always gives the same
/// session.
#[derive(Clone, Debug)]
pub(crate) struct Rng(SplitMix64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `low..=high`.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// True with the given chance in percent.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub(crate) struct SessionSpec {
    /// The session name; entryIds are `NAME-0000`, `NAME-0001`, ….
    pub(crate) name: String,
    pub(crate) seed: u64,
    /// User requests; each opens a turn of roughly 25 to 50 records.
    pub(crate) turns: usize,
}

/// A generated session, kept in turns: an agent appends one turn (or one step) at a time.
#[derive(Clone, Debug)]
pub(crate) struct GeneratedSession {
    pub(crate) name: String,
    pub(crate) turns: Vec<Vec<Record>>,
}

impl GeneratedSession {
    /// Every record, in order.
    pub(crate) fn records(&self) -> impl Iterator<Item = &Record> {
        self.turns.iter().flatten()
    }

    pub(crate) fn record_count(&self) -> usize {
        self.turns.iter().map(Vec::len).sum()
    }
}

/// Seconds from 1970 to 2026-03-02T09:12:00Z, where every generated session starts.
const START_SECONDS: u64 = 1_772_442_720;

/// Generates a coding session.
pub(crate) fn coding_session(spec: &SessionSpec) -> GeneratedSession {
    let mut writer = Writer {
        name: spec.name.clone(),
        rng: Rng::new(spec.seed),
        project: Project::new(),
        clock: START_SECONDS + (spec.seed % 7) * 3600,
        records: Vec::new(),
    };
    let mut starts = Vec::with_capacity(spec.turns);
    for turn in 0..spec.turns {
        starts.push(writer.records.len());
        writer.turn(&TOPICS[turn % TOPICS.len()], turn);
    }
    let mut turns = Vec::with_capacity(spec.turns);
    for start in starts.into_iter().rev() {
        turns.push(writer.records.split_off(start));
    }
    turns.reverse();
    GeneratedSession { name: spec.name.clone(), turns }
}

/// Which part of a turn a step belongs to; it decides what tools the step reaches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Explore,
    Change,
    Check,
}

/// Where a step stands in its turn.
#[derive(Clone, Copy, Debug)]
struct Step {
    phase: Phase,
    /// Steps of the same phase before this one.
    in_phase: usize,
    /// The turn's last step, which runs the tests that pass.
    last: bool,
}

/// A tool call as generated: its JSON input and the output it will get.
struct Call {
    tool: &'static str,
    input: serde_json::Value,
    output: String,
    is_error: bool,
}

struct Writer {
    name: String,
    rng: Rng,
    project: Project,
    clock: u64,
    records: Vec<Record>,
}

impl Writer {
    fn push(&mut self, role: Role, blocks: Vec<Block>, pause: (u64, u64)) {
        self.clock += self.rng.between(pause.0, pause.1);
        let mut meta = BTreeMap::new();
        if role == Role::User {
            meta.insert("cwd".to_owned(), json!(project::ROOT).to_string());
        }
        let mut record = Record::new(format!("{}-{:04}", self.name, self.records.len()), role, blocks)
            .at_unix_seconds(i64::try_from(self.clock).unwrap_or(i64::MAX));
        record.meta = meta;
        self.records.push(record);
    }

    fn turn(&mut self, topic: &Topic, turn: usize) {
        self.push(Role::User, vec![Block::Text { text: topic.ask.to_owned() }], (40, 600));
        let steps = self.rng.between(11, 24) as usize;
        let mut failures_left = self.rng.between(1, 2);
        let mut phase_start = 0;
        for index in 0..steps {
            let phase = match index * 3 / steps {
                0 => Phase::Explore,
                1 => Phase::Change,
                _ => Phase::Check,
            };
            if index > 0 && (index - 1) * 3 / steps != index * 3 / steps {
                phase_start = index;
            }
            let step = Step { phase, in_phase: index - phase_start, last: index + 1 == steps };
            let calls = self.calls(topic, step, &mut failures_left);
            let ids: Vec<String> = calls.iter().map(|_| self.call_id()).collect();
            self.step(topic, step, &calls, &ids, turn);
            self.answer(ids.into_iter().zip(calls).collect());
        }
        let summary = topics::fill(topic.summary, topic);
        self.push(Role::Assistant, vec![Block::Text { text: summary }], (5, 40));
    }

    fn call_id(&mut self) -> String {
        format!("call_{:012x}", self.rng.next_u64() >> 16)
    }

    /// The assistant record of one step: reasoning, a sentence, and its tool calls.
    fn step(&mut self, topic: &Topic, step: Step, calls: &[Call], ids: &[String], turn: usize) {
        let mut blocks = Vec::new();
        // Templates are in the order a phase unfolds; a step takes the one for its place, or the next.
        let template = |templates: &[&'static str], rng: &mut Rng| {
            let at = (step.in_phase + rng.below(2) as usize).min(templates.len() - 1);
            topics::fill(templates[at], topic)
        };
        if self.rng.chance(60) || (turn == 0 && step.in_phase == 0) {
            let text = template(topics::thinking(step.phase), &mut self.rng);
            blocks.push(Block::Thinking { text });
        }
        if self.rng.chance(50) {
            let text = template(topics::prose(step.phase), &mut self.rng);
            blocks.push(Block::Text { text });
        }
        for (call, call_id) in calls.iter().zip(ids) {
            blocks.push(Block::ToolCall {
                call_id: call_id.clone(),
                tool: call.tool.to_owned(),
                input: call.input.to_string(),
                target: String::new(),
            });
        }
        self.push(Role::Assistant, blocks, (3, 45));
    }

    /// The tool record answering a step's calls; long commands take longer.
    fn answer(&mut self, results: Vec<(String, Call)>) {
        let lines: u64 = results.iter().map(|(_, call)| call.output.lines().count() as u64).sum();
        let blocks = results
            .into_iter()
            .map(|(call_id, call)| Block::ToolResult {
                call_id,
                tool: call.tool.to_owned(),
                is_error: call.is_error,
                output: call.output,
            })
            .collect();
        self.push(Role::Tool, blocks, (1, 4 + lines / 50));
    }

    /// The calls one step makes, by phase: look around, change and build, then test.
    fn calls(&mut self, topic: &Topic, step: Step, failures_left: &mut u64) -> Vec<Call> {
        let project = &self.project;
        let rng = &mut self.rng;
        if step.last {
            return vec![project.test(rng, topic, false)];
        }
        // A slow run is traced once before the fix and once after it.
        if topic.slow && step.in_phase == 1 && step.phase != Phase::Change {
            return vec![project.profile_run(rng, topic, step.phase == Phase::Check)];
        }
        let first = match step.phase {
            Phase::Explore => match rng.below(10) {
                0..=2 => project.grep(rng, topic),
                3..=6 => project.read(topic.file),
                7 => project.glob(),
                8 => {
                    let file = project.neighbour(rng, topic.file);
                    project.read(file)
                }
                _ => project.git_log(rng),
            },
            Phase::Change => match rng.below(10) {
                0..=4 => project.edit(rng, topic),
                5..=7 => project.build(rng, topic),
                _ => project.read(topic.file),
            },
            Phase::Check => match rng.below(10) {
                0..=4 => {
                    let fail = *failures_left > 0;
                    *failures_left = failures_left.saturating_sub(1);
                    project.test(rng, topic, fail)
                }
                5 | 6 => project.clippy(rng, topic),
                7 => project.edit(rng, topic),
                _ => project.git_diff(rng, topic),
            },
        };
        let mut calls = vec![first];
        // Agents often look at two things at once.
        if step.phase == Phase::Explore && rng.chance(20) {
            let file = project.neighbour(rng, topic.file);
            calls.push(project.read(file));
        }
        calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64) -> SessionSpec {
        SessionSpec { name: "t".into(), seed, turns: 3 }
    }

    #[test]
    fn same_spec_same_records() {
        let a = coding_session(&spec(7));
        let b = coding_session(&spec(7));
        assert_eq!(a.turns, b.turns);
        assert_ne!(a.turns, coding_session(&spec(8)).turns);
    }

    #[test]
    fn calls_and_results_pair_up() {
        let session = coding_session(&spec(1));
        let mut open = Vec::new();
        for record in session.records() {
            for block in &record.blocks {
                match block {
                    Block::ToolCall { call_id, .. } => open.push(call_id.clone()),
                    Block::ToolResult { call_id, .. } => {
                        assert_eq!(open.first(), Some(call_id));
                        open.remove(0);
                    }
                    _ => {}
                }
            }
        }
        assert!(open.is_empty());
        let ids: std::collections::BTreeSet<_> = session.records().map(|r| &r.entry_id).collect();
        assert_eq!(ids.len(), session.record_count());
    }

    /// A digest of everything generated, independent of any serialization library.
    fn fingerprint(session: &GeneratedSession) -> String {
        let mut hasher = blake3::Hasher::new();
        let mut field = |text: &str| {
            hasher.update(&(text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        };
        for record in session.records() {
            field(&record.entry_id);
            field(record.role.as_str());
            field(record.timestamp.as_deref().unwrap_or(""));
            for (key, value) in &record.meta {
                field(key);
                field(value);
            }
            for block in &record.blocks {
                field(block.kind());
                match block {
                    Block::Text { text } | Block::Thinking { text } => field(text),
                    Block::ToolCall { call_id, tool, input, target } => {
                        [call_id, tool, input, target].into_iter().for_each(|s| field(s));
                    }
                    Block::ToolResult { call_id, tool, is_error, output } => {
                        [call_id, tool, output].into_iter().for_each(|s| field(s));
                        field(if *is_error { "error" } else { "ok" });
                    }
                    Block::Blob { media_type, .. } => field(media_type),
                }
            }
        }
        hasher.finalize().to_hex()[..16].to_owned()
    }

    /// Later tools compare runs over generated sessions, so a change to what is generated must be
    /// deliberate: update this fingerprint only together with the generator.
    #[test]
    fn generated_bytes_are_pinned() {
        let session = coding_session(&SessionSpec { name: "ledger-fix".into(), seed: 2026, turns: 8 });
        assert_eq!(fingerprint(&session), "ca77c099f4133aa5");
    }

    #[test]
    fn sessions_look_like_real_coding_work() {
        let session = coding_session(&SessionSpec { name: "s".into(), seed: 2026, turns: 8 });
        assert!((200..=400).contains(&session.record_count()), "{}", session.record_count());
        let results: Vec<(bool, usize)> = session
            .records()
            .flat_map(|r| &r.blocks)
            .filter_map(|b| match b {
                Block::ToolResult { is_error, output, .. } => Some((*is_error, output.lines().count())),
                _ => None,
            })
            .collect();
        assert!(results.iter().any(|(error, _)| *error), "some calls fail");
        assert!(results.iter().any(|(_, lines)| *lines > 2000), "some outputs are long logs");
        let thinking = session.records().flat_map(|r| &r.blocks).any(|b| matches!(b, Block::Thinking { .. }));
        assert!(thinking);
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let first = coding_session(&spec(3)).records().next().and_then(|r| r.timestamp.clone());
        assert!(first.is_some_and(|t| t.starts_with("2026-03-02T")));
        for record in coding_session(&spec(3)).records() {
            // The portable format refuses a timestamp that is not RFC 3339.
            let line = serde_json::json!({"role": "user", "timestamp": record.timestamp});
            assert!(record.timestamp.is_some() && annal::PortableRecord::parse(&line.to_string()).is_ok());
        }
    }
}
