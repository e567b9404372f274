//! Arbitrary agent sessions and budgets for the projection target: turns of user text, thinking,
//! prose and tool calls (parallel, split into one record each, failed, never answered), odd
//! records an import can bring (results whose call is not in the session, system records), and
//! the checks every projection must pass, before and after a compaction.

use annal_engine::{
    Algorithm, Block, Budget, CompactOptions, CompactStatus, ProjectError, ProjectOptions, Projection,
    Record, Role, Store, ViewSource,
};
use annal_support::projection_checks::{check_pairs, check_projection, check_verbatim, record_tokens};
use annal_support::records::shown_records;
use annal_support::sessions::record;
use arbitrary::Arbitrary;

use crate::{assert_refusal, assert_verifies, fresh_store};

/// The largest text one generated block holds: enough to pass every window below many times
/// over, small enough that an input runs in milliseconds.
const TEXT_BYTES_MAX: usize = 192 << 10;
/// Windows to project for (tokens); small ones so fuzz-sized sessions pass their triggers.
const WINDOWS: [u32; 6] = [2_048, 4_096, 8_000, 16_000, 32_000, 200_000];
const TOOLS: [&str; 6] = ["Bash", "Read", "Edit", "Grep", "shell", "WebFetch"];
const SESSION: &str = "s";

/// Text from a short fuzzed piece repeated: large texts for few input bytes.
#[derive(Arbitrary, Debug)]
struct Text {
    piece: String,
    repeat: u16,
}

impl Text {
    fn render(&self) -> String {
        if self.piece.is_empty() {
            return String::new();
        }
        let times = (usize::from(self.repeat) % 3_000 + 1).min(TEXT_BYTES_MAX / self.piece.len()).max(1);
        self.piece.repeat(times)
    }
}

#[derive(Arbitrary, Debug)]
struct Call {
    tool: u8,
    input: Text,
    output: Text,
    is_error: bool,
    /// The result never arrives (the agent was stopped, or the transcript is cut).
    unanswered: bool,
}

#[derive(Arbitrary, Debug)]
struct Step {
    thinking: Option<Text>,
    prose: Option<Text>,
    calls: Vec<Call>,
    /// Parallel calls written as one record each, as Claude Code writes them.
    split: bool,
}

#[derive(Arbitrary, Debug)]
enum Odd {
    /// A result whose call is not in the session (a resumed transcript keeps calls elsewhere).
    StrayResult(Text),
    System(Text),
    /// A user record with no text block: only a tool result, as some agents write them.
    UserResult(Text),
}

#[derive(Arbitrary, Debug)]
struct Turn {
    user: Text,
    steps: Vec<Step>,
    answer: Option<Text>,
    odd: Option<Odd>,
}

#[derive(Arbitrary, Debug)]
struct ArbBudget {
    window: u8,
    output: u16,
    tail: u16,
    evidence: u16,
    history: u16,
}

impl ArbBudget {
    fn budget(&self) -> Budget {
        let window = WINDOWS[usize::from(self.window) % WINDOWS.len()];
        let output = u32::from(self.output) % (window / 2).max(1);
        Budget {
            tail_tokens: u32::from(self.tail) % 16_384,
            evidence_tokens: u32::from(self.evidence) % 8_192,
            history_tokens: u32::from(self.history) % 65_536,
            ..Budget::new(window, output)
        }
    }
}

/// A session to append, a budget to project it under, and whether to compact it and go on.
#[derive(Arbitrary, Debug)]
pub struct Session {
    turns: Vec<Turn>,
    budget: ArbBudget,
    compact: bool,
    more: Vec<Turn>,
}

/// Builds the records of `turns`, numbering ids from `first_turn`.
fn records(turns: &[Turn], first_turn: usize) -> Vec<Record> {
    let mut out = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        let t = t + first_turn;
        out.push(Record::text(format!("u{t}"), Role::User, turn.user.render()));
        for (s, step) in turn.steps.iter().enumerate() {
            let mut blocks = Vec::new();
            if let Some(thinking) = &step.thinking {
                blocks.push(Block::Thinking { text: thinking.render() });
            }
            if let Some(prose) = &step.prose {
                blocks.push(Block::Text { text: prose.render() });
            }
            let calls: Vec<(String, &Call)> =
                step.calls.iter().enumerate().map(|(c, call)| (format!("c{t}-{s}-{c}"), call)).collect();
            let call_block = |id: &str, call: &Call| {
                let tool = TOOLS[usize::from(call.tool) % TOOLS.len()];
                let input = serde_json::json!({ "command": call.input.render() }).to_string();
                Block::ToolCall { call_id: id.to_owned(), tool: tool.into(), input, target: String::new() }
            };
            if step.split {
                if !blocks.is_empty() {
                    out.push(record(format!("a{t}-{s}"), Role::Assistant, std::mem::take(&mut blocks)));
                }
                for (id, call) in &calls {
                    out.push(record(format!("a{t}-{s}-{id}"), Role::Assistant, vec![call_block(id, call)]));
                }
            } else {
                blocks.extend(calls.iter().map(|(id, call)| call_block(id, call)));
                if !blocks.is_empty() {
                    out.push(record(format!("a{t}-{s}"), Role::Assistant, blocks));
                }
            }
            for (id, call) in calls.iter().filter(|(_, call)| !call.unanswered) {
                let tool = TOOLS[usize::from(call.tool) % TOOLS.len()];
                let result = Block::ToolResult {
                    call_id: id.clone(),
                    tool: tool.into(),
                    is_error: call.is_error,
                    output: call.output.render(),
                };
                out.push(record(format!("r{t}-{s}-{id}"), Role::Tool, vec![result]));
            }
        }
        if let Some(answer) = &turn.answer {
            out.push(Record::text(format!("a{t}"), Role::Assistant, answer.render()));
        }
        match &turn.odd {
            Some(Odd::StrayResult(text)) => {
                let result = Block::ToolResult {
                    call_id: format!("elsewhere-{t}"),
                    tool: "Bash".into(),
                    is_error: false,
                    output: text.render(),
                };
                out.push(record(format!("x{t}"), Role::Tool, vec![result]));
            }
            Some(Odd::System(text)) => out.push(Record::text(format!("y{t}"), Role::System, text.render())),
            Some(Odd::UserResult(text)) => {
                let result = Block::ToolResult {
                    call_id: format!("elsewhere-{t}"),
                    tool: String::new(),
                    is_error: true,
                    output: text.render(),
                };
                out.push(record(format!("z{t}"), Role::User, vec![result]));
            }
            None => {}
        }
    }
    out
}

/// Appends `records`; false when the store refused them for what they are.
fn append(store: &Store, records: Vec<Record>) -> bool {
    match store.append(SESSION, None, records) {
        Ok(_) => true,
        Err(err) => {
            assert_refusal(&err);
            false
        }
    }
}

/// Windows under which the engine may say a session does not fit: the notes and markers that
/// stand for a newest turn of many tool blocks can measure more than a window of a couple of
/// thousand tokens holds, and the engine refuses (`DoesNotFit`) rather than overflow.
const SMALL_WINDOW_TOKENS: u64 = 4096;

fn project(store: &Store, options: &ProjectOptions) -> Option<Projection<'static>> {
    match store.project(SESSION, options) {
        Ok(projection) => Some(projection),
        Err(ProjectError::DoesNotFit { capacity, .. }) if capacity < SMALL_WINDOW_TOKENS => None,
        Err(err) => panic!("projecting a stored session failed: {err}"),
    }
}

/// The session's records as stored, receipts left out, with their sourceOrders.
fn stored(store: &Store) -> (Vec<Record>, Vec<u64>) {
    let shown = shown_records(store, SESSION, 0).unwrap_or_else(|err| panic!("{err}"));
    shown.into_iter().map(|(order, record)| (record, order)).unzip()
}

/// Properties (docs/projection.md): a projection has no orphan call or result, stays within the
/// capacity, shows or marks every user text, names every omitted record by a marker or covers it
/// with the evidence index, and is the same bytes when asked again; under the trigger it is every
/// record verbatim. A compaction commits exactly the view it derived; between compactions the
/// view only grows at its end.
pub fn check_session(session: &Session) {
    let budget = session.budget.budget();
    if budget.check().is_err() {
        return;
    }
    let store = fresh_store(64 << 10);
    let first = records(&session.turns, 0);
    if first.is_empty() || !append(&store, first) {
        return;
    }
    let options = ProjectOptions { budget, algorithm: Algorithm::DeterministicV1 };
    let Some(view) = project(&store, &options) else { return };
    let (records_now, orders) = stored(&store);
    if let Err(problem) = check_projection(&records_now, &orders, &view, &budget) {
        panic!("{problem}");
    }
    let again = project(&store, &options);
    assert_eq!(again.as_ref(), Some(&view), "the same session projected twice differs");
    if record_tokens(&records_now) <= u64::from(budget.trigger_tokens()) {
        // Every record verbatim, unless the notes for calls whose results are not in the view
        // pass the capacity that way: then it is derived like a session over the trigger.
        if view.source == ViewSource::Live {
            if let Err(problem) = check_verbatim(&records_now, &view) {
                panic!("under the trigger: {problem}");
            }
        } else {
            assert_eq!(view.source, ViewSource::Derived, "under the trigger, neither live nor derived");
        }
    }
    if !session.compact {
        return;
    }
    let outcome = match store.compact(SESSION, &CompactOptions::new(options)) {
        Ok(outcome) => outcome,
        Err(err) => panic!("compacting failed: {err}"),
    };
    let mut previous = project(&store, &options);
    if outcome.status == CompactStatus::Committed {
        let after = previous.as_ref().map(|p| &p.messages);
        assert_eq!(after, Some(&view.messages), "the committed checkpoint shows other messages");
    }
    for (n, turn) in session.more.iter().enumerate() {
        if !append(&store, records(std::slice::from_ref(turn), session.turns.len() + n)) {
            break;
        }
        let Some(next) = project(&store, &options) else { return };
        if let Err(problem) = check_pairs(&next.messages) {
            panic!("after {} more turns: {problem}", n + 1);
        }
        if let (Some(before), ViewSource::Checkpoint { .. }) = (&previous, &next.source) {
            if matches!(before.source, ViewSource::Checkpoint { .. }) {
                let grows = next.messages.len() >= before.messages.len()
                    && next.messages[..before.messages.len()] == before.messages[..];
                assert!(grows, "between compactions, turn {} rewrote the view's prefix", n + 1);
            }
        }
        previous = Some(next);
    }
    assert_verifies(&store);
}
