//! `annal sync` through the facade (`annal::Annal::sync` and `survey`), as an embedder calls it,
//! over fixture homes laid out as each agent lays out its files: discovery without reading, a first sync, a second that reads nothing, appended lines, a torn last
//! line, a file replaced or cut short, a deleted file (what was captured stays), and the bad
//! input a machine holds (a link loop, a dangling link, another format in an agent's folder),
//! which is reported while everything else is still captured.

use std::error::Error;
use std::fs;
use std::io::Write;
use std::path::Path;

use annal::sync::{Agent, Environment, SourceReport, SyncOptions, SyncReport};
use annal::Annal;
use annal_engine::Store;

pub(crate) type TestResult = Result<(), Box<dyn Error>>;

/// Words from several scripts, so what is stored is checked byte for byte.
pub(crate) const TEXT: &str = "fix the\u{2009}parser — 解析器を直す 🦀 e\u{301}te\u{301}\u{a0}ok";

fn claude_line(uuid: &str, session: &str, text: &str) -> String {
    let message = serde_json::json!({"role": "user", "content": text});
    let line = serde_json::json!({"type": "user", "uuid": uuid, "sessionId": session, "message": message,
        "timestamp": "2026-11-30T10:00:00Z"});
    format!("{line}\n")
}

pub(crate) fn options(home: &Path, agents: &[Agent]) -> SyncOptions {
    SyncOptions {
        agents: agents.to_vec(),
        environment: Environment::with_home(home),
        ..SyncOptions::default()
    }
}

pub(crate) fn source(report: &SyncReport, agent: Agent) -> &SourceReport {
    report.sources.iter().find(|s| s.agent == agent).expect("the agent was synced")
}

pub(crate) fn session_len(annal: &Annal, name: &str) -> Result<u64, Box<dyn Error>> {
    Ok(annal.snapshot()?.session(name)?.map_or(0, |s| s.len))
}

/// The text blocks of a session's records, in order.
pub(crate) fn texts(annal: &Annal, session: &str) -> Result<Vec<String>, Box<dyn Error>> {
    let snapshot = annal.snapshot()?;
    let mut out = Vec::new();
    for guard in snapshot.records(session, 0..u64::MAX)? {
        for block in snapshot.to_record(&guard?.view()?)?.blocks {
            if let annal::Block::Text { text } = block {
                out.push(text);
            }
        }
    }
    Ok(out)
}

pub(crate) fn append(path: &Path, text: &str) -> TestResult {
    fs::OpenOptions::new().append(true).open(path)?.write_all(text.as_bytes())?;
    Ok(())
}

#[test]
fn claude_sessions_are_captured_once_then_only_what_changed() -> TestResult {
    let home = tempfile::tempdir()?;
    let project = home.path().join(".claude/projects/-home-u-app");
    fs::create_dir_all(project.join("s1/subagents"))?;
    let file = project.join("s1.jsonl");
    fs::write(&file, claude_line("u1", "s1", TEXT) + &claude_line("u2", "s1", "second"))?;
    let agent = serde_json::json!({"type": "user", "uuid": "a1", "sessionId": "s1", "isSidechain": true,
        "agentId": "x1", "message": {"role": "user", "content": "look it up"}});
    fs::write(project.join("s1/subagents/agent-x1.jsonl"), format!("{agent}\n"))?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let claude = options(home.path(), &[Agent::Claude]);

    // Looking first reads and stores nothing.
    let survey = annal.survey(&claude)?;
    assert_eq!(survey.len(), 1, "{survey:?}");
    assert_eq!((survey[0].agent, survey[0].units, survey[0].records_new), (Agent::Claude, 2, 0));
    assert!(survey[0].locations.iter().any(|l| l.starts_with(home.path().join(".claude"))), "{survey:?}");
    assert!(annal.sessions()?.is_empty(), "a survey stored something");

    let first = annal.sync(&claude)?;
    let report = source(&first, Agent::Claude);
    assert_eq!((report.units, report.units_read, report.records_new), (2, 2, 3), "{report:?}");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(session_len(&annal, "s1")?, 2);
    assert_eq!(session_len(&annal, "s1/agent-x1")?, 1);
    let stored = annal.snapshot()?.record_by_entry("u1")?.1.view()?.blocks().count();
    assert_eq!(stored, 1);

    let again = annal.sync(&claude)?;
    assert_eq!((source(&again, Agent::Claude).units_read, source(&again, Agent::Claude).records_new), (0, 0));

    append(&file, &claude_line("u3", "s1", "third"))?;
    let grown = annal.sync(&claude)?;
    assert_eq!((source(&grown, Agent::Claude).units_read, source(&grown, Agent::Claude).records_new), (1, 1));

    // A line being written: the complete lines now, the rest once it is complete.
    let torn = claude_line("u4", "s1", "fourth");
    let (head, tail) = torn.split_at(torn.len() / 2);
    append(&file, head)?;
    let partial = annal.sync(&claude)?;
    assert_eq!(source(&partial, Agent::Claude).records_new, 0);
    assert!(source(&partial, Agent::Claude).skipped.iter().any(|s| s.contains("truncated")));
    append(&file, tail)?;
    assert_eq!(source(&annal.sync(&claude)?, Agent::Claude).records_new, 1);
    assert_eq!(session_len(&annal, "s1")?, 4);

    // Replaced by a new file (a new inode) holding the same lines and one more.
    let replacement = project.join("s1.jsonl.tmp");
    fs::write(&replacement, fs::read_to_string(&file)? + &claude_line("u5", "s1", "fifth"))?;
    fs::rename(&replacement, &file)?;
    let replaced = annal.sync(&claude)?;
    assert_eq!(source(&replaced, Agent::Claude).records_new, 1);
    assert_eq!(source(&replaced, Agent::Claude).records_present, 4);

    // Cut short, then deleted: what was captured stays.
    fs::write(&file, claude_line("u1", "s1", TEXT))?;
    assert_eq!(source(&annal.sync(&claude)?, Agent::Claude).records_new, 0);
    fs::remove_file(&file)?;
    let deleted = annal.sync(&claude)?;
    assert_eq!(source(&deleted, Agent::Claude).units, 1);
    assert_eq!(session_len(&annal, "s1")?, 5);
    assert!(annal.verify(None)?.is_ok());
    // The cursors sync keeps are no part of the facade: read them with the engine, once closed.
    let path = annal.path().to_owned();
    assert!(annal.close()?);
    let store = Store::open_read_only(&path, Default::default())?;
    let cursors = store.cursors("sync:claude:")?;
    assert_eq!(cursors.len(), 1, "only the sub-agent file keeps a cursor: {cursors:?}");
    Ok(())
}

#[test]
fn codex_rollouts_plain_compressed_and_archived() -> TestResult {
    let home = tempfile::tempdir()?;
    let day = home.path().join(".codex/sessions/2026/11/30");
    let archived = home.path().join(".codex/archived_sessions");
    fs::create_dir_all(&day)?;
    fs::create_dir_all(&archived)?;
    let rollout = |id: &str, text: &str| {
        let meta = serde_json::json!({"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta",
            "payload": {"id": id, "cwd": "/src/app"}});
        let item = serde_json::json!({"timestamp": "2026-11-30T10:00:01Z", "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}});
        format!("{meta}\n{item}\n")
    };
    fs::write(day.join("rollout-2026-11-30T10-00-00-c1.jsonl"), rollout("c1", TEXT))?;
    let compressed = zstd::encode_all(rollout("c2", "archived 🦀").as_bytes(), 3)?;
    fs::write(archived.join("rollout-2026-10-01T10-00-00-c2.jsonl.zst"), compressed)?;
    // Not a rollout: never read.
    fs::write(day.join("notes.jsonl"), "{\"x\":1}\n")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let codex = options(home.path(), &[Agent::Codex]);
    let first = annal.sync(&codex)?;
    let report = source(&first, Agent::Codex);
    assert_eq!((report.units, report.records_new), (2, 4), "{report:?}");
    assert_eq!((session_len(&annal, "c1")?, session_len(&annal, "c2")?), (2, 2));
    assert_eq!(source(&annal.sync(&codex)?, Agent::Codex).units_read, 0);
    Ok(())
}

#[test]
fn a_machine_without_agents_reports_each_as_not_found() -> TestResult {
    let home = tempfile::tempdir()?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let report = annal.sync(&options(home.path(), &[]))?;
    assert_eq!(report.sources.len(), Agent::ALL.len());
    for source in &report.sources {
        assert!(!source.found(), "{:?} found in an empty home", source.agent);
        assert!(source.problems.is_empty(), "{:?}", source.problems);
    }
    assert!(annal.snapshot()?.sessions()?.is_empty());
    Ok(())
}

#[test]
fn per_project_folders_are_remembered() -> TestResult {
    let home = tempfile::tempdir()?;
    let project = home.path().join("code/app");
    fs::create_dir_all(project.join("node_modules/dep"))?;
    // As aider writes it: input and notices end in two spaces, a reply in a blank line.
    let log = "\n# aider chat started at 2026-11-30 10:00:00\n\n#### fix the parser 解析器  \n\nDone.\n\n";
    fs::write(project.join(".aider.chat.history.md"), log)?;
    // Dependencies are never searched.
    fs::write(project.join("node_modules/dep/.aider.chat.history.md"), log)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let with_path =
        SyncOptions { projects: vec![home.path().join("code")], ..options(home.path(), &[Agent::Aider]) };
    // A survey searches the folders given without remembering them.
    assert_eq!(annal.survey(&with_path)?[0].units, 1);
    assert_eq!(annal.survey(&options(home.path(), &[Agent::Aider]))?[0].units, 0);
    let first = annal.sync(&with_path)?;
    let report = source(&first, Agent::Aider);
    assert_eq!(report.units, 1, "{report:?}");
    assert!(report.records_new >= 3 && report.skipped.is_empty(), "{report:?}");
    assert_eq!(session_len(&annal, "app@2026-11-30 10:00:00")?, report.records_new);
    // Later syncs (and surveys) need not name the folder again.
    assert_eq!(annal.survey(&options(home.path(), &[Agent::Aider]))?[0].units, 1);
    append(&project.join(".aider.chat.history.md"), "\n#### and the tests  \n\nDone too.\n\n")?;
    let later = annal.sync(&options(home.path(), &[Agent::Aider]))?;
    assert_eq!(source(&later, Agent::Aider).units_read, 1);
    assert!(source(&later, Agent::Aider).records_new >= 1);
    Ok(())
}

#[test]
fn bad_input_is_reported_and_the_rest_captured() -> TestResult {
    let home = tempfile::tempdir()?;
    let projects = home.path().join(".claude/projects");
    let project = projects.join("-src-app");
    fs::create_dir_all(&project)?;
    fs::write(project.join("good.jsonl"), claude_line("g1", "good", TEXT))?;
    // Another agent's log in Claude Code's folder (Gemini CLI's JSONL shares `type: "user"`).
    let gemini = "{\"sessionId\":\"g\",\"projectHash\":\"h\",\"startTime\":\"2026-11-30T10:00:00Z\"}\n\
                  {\"id\":\"m1\",\"timestamp\":\"2026-11-30T10:00:01Z\",\"type\":\"user\",\"content\":\"hi\"}\n\
                  {\"id\":\"m2\",\"timestamp\":\"2026-11-30T10:00:02Z\",\"type\":\"gemini\",\"content\":\"hello\"}\n";
    fs::write(project.join("other.jsonl"), gemini)?;
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&projects, project.join("loop"))?;
        std::os::unix::fs::symlink(home.path().join("missing.jsonl"), project.join("dangling.jsonl"))?;
    }
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let report = annal.sync(&options(home.path(), &[Agent::Claude]))?;
    let claude = source(&report, Agent::Claude);
    let problems = claude.problems.join("\n");
    assert!(problems.contains("other.jsonl: not read as claude"), "{problems}");
    #[cfg(unix)]
    {
        assert!(problems.contains("symbolic link loop"), "{problems}");
        assert!(problems.contains("dangling.jsonl"), "{problems}");
    }
    assert_eq!(session_len(&annal, "good")?, 1);
    assert_eq!(session_len(&annal, "g")?, 0, "nothing of the look-alike is stored");
    assert_eq!(annal.snapshot()?.sessions()?.len(), 1);
    // The look-alike is reported once, not on every pass, until it changes.
    let again = annal.sync(&options(home.path(), &[Agent::Claude]))?;
    let problems = source(&again, Agent::Claude).problems.join("\n");
    assert!(!problems.contains("other.jsonl"), "{problems}");
    Ok(())
}

#[test]
fn gemini_logs_and_whole_file_sessions_with_sub_agents() -> TestResult {
    let home = tempfile::tempdir()?;
    let chats = home.path().join(".gemini/tmp/3f2a/chats");
    fs::create_dir_all(chats.join("g-main"))?;
    let log = |session: &str, id: &str, text: &str| {
        let meta = serde_json::json!({"sessionId": session, "projectHash": "3f2a",
            "startTime": "2026-11-30T10:00:00Z", "lastUpdated": "2026-11-30T10:00:00Z"});
        let message = serde_json::json!({"id": id, "timestamp": "2026-11-30T10:00:01Z", "type": "user", "content": text});
        format!("{meta}\n{message}\n")
    };
    let main = chats.join("session-2026-11-30T10-00-g-main.jsonl");
    fs::write(&main, log("g-main", "m1", TEXT))?;
    fs::write(chats.join("g-main/g-sub.jsonl"), log("g-sub", "s1", "look it up"))?;
    let whole = serde_json::json!({"sessionId": "g-old", "projectHash": "3f2a", "startTime": "2026-10-01T10:00:00Z",
        "lastUpdated": "2026-10-01T10:00:00Z", "messages": [
            {"id": "o1", "timestamp": "2026-10-01T10:00:01Z", "type": "user", "content": "older form"},
            {"id": "o2", "timestamp": "2026-10-01T10:00:02Z", "type": "gemini", "content": "answered"}]});
    fs::write(chats.join("session-2026-10-01T10-00-g-old.json"), serde_json::to_string_pretty(&whole)?)?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let gemini = options(home.path(), &[Agent::Gemini]);
    let first = annal.sync(&gemini)?;
    let report = source(&first, Agent::Gemini);
    assert_eq!(report.units, 3, "{report:?}");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    for session in ["g-main", "g-sub", "g-old"] {
        assert!(session_len(&annal, session)? >= 2, "{session} was not captured");
    }
    let before = session_len(&annal, "g-main")?;
    // The message written again in full (it changed), then a new one.
    let changed = serde_json::json!({"id": "m1", "timestamp": "2026-11-30T10:00:01Z", "type": "user", "content": "edited"});
    let next = serde_json::json!({"id": "m2", "timestamp": "2026-11-30T10:00:03Z", "type": "gemini", "content": "ok"});
    append(&main, &format!("{changed}\n{next}\n"))?;
    let later = annal.sync(&gemini)?;
    assert_eq!(source(&later, Agent::Gemini).units_read, 1);
    assert_eq!(session_len(&annal, "g-main")?, before + 2);
    assert_eq!(source(&annal.sync(&gemini)?, Agent::Gemini).units_read, 0);
    Ok(())
}

#[test]
fn a_codex_fork_becomes_an_annal_fork_of_its_parent() -> TestResult {
    let home = tempfile::tempdir()?;
    let day = home.path().join(".codex/sessions/2026/11/30");
    fs::create_dir_all(&day)?;
    let meta = |id: &str, parent: Option<&str>| {
        let mut payload = serde_json::json!({"id": id, "cwd": "/src/app"});
        if let Some(parent) = parent {
            payload["forked_from_id"] = parent.into();
        }
        format!(
            "{}\n",
            serde_json::json!({"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta", "payload": payload})
        )
    };
    let item = |second: u32, role: &str, text: &str| {
        let kind = if role == "user" { "input_text" } else { "output_text" };
        let line = serde_json::json!({"timestamp": format!("2026-11-30T10:00:{second:02}Z"), "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}});
        format!("{line}\n")
    };
    let history = item(1, "user", TEXT) + &item(2, "assistant", "looking") + &item(3, "user", "go on");
    fs::write(day.join("rollout-2026-11-30T10-00-00-p1.jsonl"), meta("p1", None) + &history)?;
    // Codex stamps the copy with the time it writes it.
    let copy = item(40, "user", TEXT) + &item(40, "assistant", "looking") + &item(40, "user", "go on");
    let fork = day.join("rollout-2026-11-30T11-00-00-f1.jsonl");
    fs::write(&fork, meta("f1", Some("p1")) + &copy + &item(41, "user", "try the other way"))?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let codex = options(home.path(), &[Agent::Codex]);
    annal.sync(&codex)?;
    let snapshot = annal.snapshot()?;
    let forked = snapshot.session("f1")?.ok_or("the fork was not stored")?;
    assert_eq!((forked.parent.as_deref(), forked.fork_at), (Some("p1"), Some(4)), "{forked:?}");
    // The parent's four records by reference, then the fork's meta and its own request.
    assert_eq!(forked.len, 6);
    drop(snapshot);
    append(&fork, &item(42, "assistant", "done"))?;
    let grown = annal.sync(&codex)?;
    assert_eq!(source(&grown, Agent::Codex).records_new, 1);
    assert_eq!(session_len(&annal, "f1")?, 7);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn cline_and_roo_tasks_in_each_editor() -> TestResult {
    let home = tempfile::tempdir()?;
    let storage = |editor: &str, extension: &str, task: &str| {
        home.path()
            .join(".config")
            .join(editor)
            .join("User/globalStorage")
            .join(extension)
            .join("tasks")
            .join(task)
    };
    let cline_task = storage("Code", "saoudrizwan.claude-dev", "1764496800000");
    let roo_task = storage("Cursor", "rooveterinaryinc.roo-cline", "5d0a8c1e-roo");
    let history = |text: &str| {
        serde_json::json!([
            {"role": "user", "content": [{"type": "text", "text": format!("<task>{text}</task>")}], "ts": 1_764_496_800_000_i64},
            {"role": "assistant", "content": [{"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "src/lib.rs"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "pub fn main() {}"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done ✓"}]}
        ])
    };
    for (task, text) in [(&cline_task, TEXT), (&roo_task, "Roo: 修复登录页")] {
        fs::create_dir_all(task)?;
        fs::write(task.join("api_conversation_history.json"), serde_json::to_string(&history(text))?)?;
        fs::write(task.join("ui_messages.json"), "[]")?;
    }
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let editors = options(home.path(), &[Agent::Cline, Agent::Roo]);
    let first = annal.sync(&editors)?;
    for agent in [Agent::Cline, Agent::Roo] {
        let report = source(&first, agent);
        assert_eq!((report.units, report.records_new), (1, 4), "{report:?}");
    }
    assert_eq!(session_len(&annal, "1764496800000")?, 4);
    // Cline rewrites the whole array; a restored checkpoint puts other content at an index
    // already stored, which is kept as a revision.
    let mut rewritten = history(TEXT);
    rewritten[3] =
        serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "Done, differently"}]});
    rewritten
        .as_array_mut()
        .ok_or("an array")?
        .push(serde_json::json!({"role": "user", "content": "thanks"}));
    rewritten
        .as_array_mut()
        .ok_or("an array")?
        .push(serde_json::json!({"role": "assistant", "content": "👍"}));
    fs::write(cline_task.join("api_conversation_history.json"), serde_json::to_string(&rewritten)?)?;
    let later = annal.sync(&editors)?;
    let cline = source(&later, Agent::Cline);
    assert_eq!((cline.records_new, cline.records_revised), (3, 1), "{cline:?}");
    assert_eq!(source(&later, Agent::Roo).units_read, 0);
    Ok(())
}
