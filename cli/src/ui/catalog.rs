//! What the session list shows of each session: the agent that wrote it, its project folder,
//! its first request, the models it names, its records, tokens and time span; and the list's
//! order, newest first. Read once per session and kept until the session grows, so the list of
//! a large store renders from memory.

use std::collections::HashMap;

use annal::error::ReadError;
use annal::snapshot::{BlockView, RecordView};
use annal::sync::Agent;
use annal::{Annal, Role, SessionInfo, Snapshot};

use crate::output::cut;

/// How many of a session's first records are read for its agent, folder and first request.
const HEAD_RECORDS: u64 = 40;

/// One session as the list shows it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    pub(crate) name: String,
    pub(crate) parent: Option<String>,
    pub(crate) fork_at: Option<u64>,
    pub(crate) records: u64,
    pub(crate) agent: String,
    pub(crate) project: String,
    pub(crate) first_request: String,
    /// The models the agent recorded on the records read (the first and last ones), in the
    /// order they first appear, at most [`MODELS_MAX`].
    pub(crate) models: Vec<String>,
    pub(crate) tokens: u64,
    pub(crate) first_time: Option<String>,
    pub(crate) last_time: Option<String>,
    /// The store-wide position of the append that wrote the last record: the order sessions
    /// were last written to the store in.
    pub(crate) written: u64,
    /// What the list sorts by: the last timestamp, or for a session whose records carry none,
    /// the newest one of the sessions written before it (see [`newest_first`]).
    pub(crate) sort_time: Option<String>,
}

/// Models named per session at most: a sub-agent's model beside the main one, not a census.
const MODELS_MAX: usize = 3;

/// Summaries by session name, each with the length it was read at.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    summaries: HashMap<String, Summary>,
}

impl Catalog {
    /// Every session's summary, newest first ([`newest_first`]); sessions that are new or grew
    /// since the last call are read again, on two threads.
    pub(crate) fn refresh(&mut self, annal: &Annal) -> Result<Vec<Summary>, annal::Error> {
        let sessions = annal.snapshot()?.sessions()?;
        let mut fresh = HashMap::with_capacity(sessions.len());
        let mut stale = Vec::new();
        for info in sessions {
            match self.summaries.remove(&info.name) {
                Some(known) if known.records == info.len && known.parent == info.parent => {
                    fresh.insert(info.name, known);
                }
                _ => stale.push(info),
            }
        }
        let halves = stale.split_at(stale.len() / 2);
        let read = |part: &[SessionInfo]| -> Result<Vec<Summary>, annal::Error> {
            let snapshot = annal.snapshot()?;
            Ok(part.iter().map(|info| summarize(&snapshot, info)).collect::<Result<_, _>>()?)
        };
        let (first, second) = std::thread::scope(|scope| {
            let other = scope.spawn(|| read(halves.1));
            (read(halves.0), other.join())
        });
        // A panic there is re-raised here, where the request's task turns it into its error page.
        let second = second.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        for summary in first?.into_iter().chain(second?) {
            fresh.insert(summary.name.clone(), summary);
        }
        self.summaries = fresh;
        let mut list: Vec<Summary> = self.summaries.values().cloned().collect();
        newest_first(&mut list);
        Ok(list)
    }
}

/// Sorts the list newest first: by each session's last timestamp. A session whose records carry
/// no timestamp (some importers' formats have none) is placed as of when it was written to the
/// store: it takes the newest last timestamp of the sessions last written before it (by the
/// store-wide position of each one's last record), so a session imported today sorts beside
/// today's sessions instead of below every dated one. Ties go to the one written later, then
/// by name.
pub(crate) fn newest_first(list: &mut [Summary]) {
    list.sort_by_key(|s| s.written);
    let mut clock: Option<String> = None;
    for summary in list.iter_mut() {
        match &summary.last_time {
            Some(time) => {
                if clock.as_ref().is_none_or(|c| c < time) {
                    clock = Some(time.clone());
                }
                summary.sort_time = Some(time.clone());
            }
            None => summary.sort_time = clock.clone(),
        }
    }
    list.sort_by(|a, b| {
        b.sort_time
            .cmp(&a.sort_time)
            .then_with(|| b.written.cmp(&a.written))
            .then_with(|| a.name.cmp(&b.name))
    });
}

impl Catalog {
    /// Each known session's title (its first request), by name, for search results.
    pub(crate) fn titles(&self) -> HashMap<String, String> {
        self.summaries.iter().map(|(name, s)| (name.clone(), s.first_request.clone())).collect()
    }
}

/// Reads one session's summary: its first records, its last timestamp and its token count.
pub(crate) fn summarize(snapshot: &Snapshot, info: &SessionInfo) -> Result<Summary, ReadError> {
    let mut summary = Summary {
        name: info.name.clone(),
        parent: info.parent.clone(),
        fork_at: info.fork_at,
        records: info.len,
        ..Summary::default()
    };
    let mut agent = None;
    for guard in snapshot.records(&info.name, 0..HEAD_RECORDS.min(info.len))? {
        let guard = guard?;
        let view = guard.view()?;
        if summary.first_time.is_none() {
            summary.first_time = view.timestamp().map(str::to_owned);
        }
        if agent.is_none() {
            agent = agent_of(&view);
            summary.agent = agent.map(|agent| agent.title().to_owned()).unwrap_or_default();
        }
        if summary.project.is_empty() {
            summary.project = project_of(&view);
        }
        if summary.first_request.is_empty() && view.role() == Role::User {
            summary.first_request = first_text(snapshot, &view, agent)?;
        }
        note_model(&mut summary.models, &view);
        let known = !summary.agent.is_empty() && !summary.project.is_empty();
        if known && !summary.first_request.is_empty() && !summary.models.is_empty() {
            break;
        }
    }
    let tail = info.len.saturating_sub(8)..info.len;
    for guard in snapshot.records(&info.name, tail)? {
        let guard = guard?;
        let view = guard.view()?;
        if let Some(time) = view.timestamp() {
            summary.last_time = Some(time.to_owned());
        }
        note_model(&mut summary.models, &view);
    }
    summary.last_time = summary.last_time.or_else(|| summary.first_time.clone());
    let digests = snapshot.digests(&info.name, 0..info.len)?;
    summary.tokens = digests.iter().map(|(_, d)| u64::from(d.tokens_total)).sum();
    summary.written = digests.last().map_or(0, |(_, d)| d.position);
    Ok(summary)
}

/// The agent, from the prefix its importer gives the ids it makes (`codex:…`, `gemini:…`), or
/// from metadata only one agent writes (Claude Code, OpenCode, Gemini CLI's JSON sessions).
pub(crate) fn agent_of(view: &RecordView<'_>) -> Option<Agent> {
    if let Some(agent) = Agent::of_entry_id(view.entry_id()) {
        return Some(agent);
    }
    let claude = ["isSidechain", "gitBranch", "parentUuid"];
    view.meta().find_map(|(key, value)| match key {
        _ if claude.contains(&key) => Some(Agent::Claude),
        // OpenCode's message `info` names its session (`ses_…`); Gemini CLI's JSON sessions
        // type the model's messages `gemini`.
        "info" if value.contains("\"sessionID\"") => Some(Agent::OpenCode),
        "type" if value == "\"gemini\"" => Some(Agent::Gemini),
        _ => None,
    })
}

/// Adds the model a record names, when it is new and there is room.
fn note_model(models: &mut Vec<String>, view: &RecordView<'_>) {
    if models.len() < MODELS_MAX {
        if let Some(model) = model_of(view).filter(|m| !models.contains(m)) {
            models.push(model);
        }
    }
}

/// Keys under which agents record the model that wrote a message.
const MODEL_KEYS: [&str; 4] = ["model", "modelID", "modelId", "model_id"];

/// The model an agent recorded on a record: a string under a model key of its metadata, at the
/// top or nested in an object (Claude Code's `message.model`, Codex's `payload.model`,
/// OpenCode's `info.modelID` and `model.modelID`, Gemini CLI's and Pi's `model`).
pub(crate) fn model_of(view: &RecordView<'_>) -> Option<String> {
    view.meta().find_map(|(key, value)| {
        if !MODEL_KEYS.contains(&key) && !value.contains("\"model") {
            return None;
        }
        let parsed = serde_json::from_str::<serde_json::Value>(value).ok()?;
        match parsed {
            serde_json::Value::String(model) if MODEL_KEYS.contains(&key) => named(model),
            other => model_in(&other, 3),
        }
    })
}

/// A model key's string in `value`, looked for `depth` objects down.
fn model_in(value: &serde_json::Value, depth: u8) -> Option<String> {
    let serde_json::Value::Object(map) = value else { return None };
    let direct =
        map.iter().filter(|(key, _)| MODEL_KEYS.contains(&key.as_str())).find_map(|(_, v)| match v {
            serde_json::Value::String(model) => named(model.clone()),
            // OpenCode's `model: {providerID, modelID}`.
            object => model_in(object, 1),
        });
    match depth {
        _ if direct.is_some() => direct,
        0 => None,
        _ => map.values().find_map(|v| model_in(v, depth - 1)),
    }
}

/// A model's name as the list shows it: trimmed, visible, not empty.
fn named(model: String) -> Option<String> {
    let model = model.trim();
    (!model.is_empty()).then(|| cut(&super::markdown::visible_controls(model), 60))
}

/// The working folder the agent recorded (`cwd`, at the top of the metadata, in its payload or
/// in OpenCode's `info.path`).
fn project_of(view: &RecordView<'_>) -> String {
    for (key, value) in view.meta().filter(|(key, _)| matches!(*key, "cwd" | "payload" | "info")) {
        let Ok(parsed) = serde_json::from_str::<serde_json::Value>(value) else { continue };
        let found = match key {
            "cwd" => parsed.as_str().map(str::to_owned),
            // OpenCode: the message's `info.path.cwd`.
            "info" => parsed.pointer("/path/cwd").and_then(|v| v.as_str()).map(str::to_owned),
            _ => parsed.get("cwd").and_then(|v| v.as_str()).map(str::to_owned),
        };
        if let Some(folder) = found.filter(|f| !f.is_empty()) {
            return folder;
        }
    }
    String::new()
}

/// The first line of a record's first text that is the user's, shortened for the list: the
/// context the agent wraps around a request (the registry names it) taken out first.
fn first_text(snapshot: &Snapshot, view: &RecordView<'_>, agent: Option<Agent>) -> Result<String, ReadError> {
    for block in view.blocks() {
        if let BlockView::Text { text } = block {
            let text = snapshot.text(text)?;
            let text = match agent {
                Some(agent) => agent.user_words(&text),
                None => text.into_owned(),
            };
            // Agents wrap context they add in tags (`<environment_context>`): not the request.
            let is_tag = |line: &str| line.starts_with('<') && line.ends_with('>');
            if let Some(line) = text.lines().map(str::trim).find(|line| !line.is_empty() && !is_tag(line)) {
                return Ok(cut(&super::markdown::visible_controls(line), 161));
            }
        }
    }
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(name: &str, written: u64, last_time: Option<&str>) -> Summary {
        Summary {
            name: name.to_owned(),
            written,
            last_time: last_time.map(str::to_owned),
            ..Summary::default()
        }
    }

    #[test]
    fn sessions_without_times_sit_beside_the_sessions_written_before_them() {
        // Written in this order; times out of order, as imports of old sessions give them.
        let mut list = vec![
            summary("無時間-first", 0, None),
            summary("march", 10, Some("2026-03-01T09:00:00Z")),
            summary("january", 20, Some("2026-01-01T09:00:00Z")),
            summary("imported 🦀", 30, None),
            summary("may", 40, Some("2026-05-01T09:00:00Z")),
            summary("e\u{301}t\u{e9}", 50, None),
        ];
        newest_first(&mut list);
        let names: Vec<&str> = list.iter().map(|s| s.name.as_str()).collect();
        // "imported" takes March (the newest written before it), above March as written later;
        // nothing was written before the first, so it has no time to take and goes last.
        assert_eq!(names, ["e\u{301}t\u{e9}", "may", "imported 🦀", "march", "january", "無時間-first"]);
    }
}
