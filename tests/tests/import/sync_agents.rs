//! `annal sync` for the agents added with the stricter detection: Pi, Qwen Code, the GitHub
//! Copilot CLI, Continue, Copilot Chat in VS Code and OpenHands, each over a made-up home laid
//! out as the agent lays out its files, with its override variables, a file that grows or is
//! rewritten, and files beside the sessions that are never read. The helpers are
//! `sync_sources`'.

use std::fs;

use annal::sync::{Agent, Environment};
use annal::Annal;

use crate::sync_sources::{append, options, session_len, source, TestResult, TEXT};
#[test]
fn pi_sessions_by_project_folder_and_the_override() -> TestResult {
    let home = tempfile::tempdir()?;
    let header = |id: &str| {
        serde_json::json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/home/u/app"})
    };
    let message = |id: &str, parent: Option<&str>, role: &str, text: &str| {
        let content = if role == "user" {
            serde_json::json!(text)
        } else {
            serde_json::json!([{"type": "text", "text": text}])
        };
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-11-30T10:00:01.000Z",
            "message": {"role": role, "content": content, "timestamp": 1_764_496_801_000_u64}})
    };
    let folder = home.path().join(".pi/agent/sessions/--home-u-app--");
    fs::create_dir_all(&folder)?;
    let file = folder.join("2026-11-30T10-00-00-000Z_p1.jsonl");
    let first = [
        header("p1"),
        message("a1b2c3d4", None, "user", TEXT),
        message("b2c3d4e5", Some("a1b2c3d4"), "assistant", "ok"),
    ];
    fs::write(&file, first.iter().map(|line| format!("{line}\n")).collect::<String>())?;
    // Not a session file of Pi's (not in a `--<cwd>--` folder): never read.
    fs::write(home.path().join(".pi/agent/sessions/notes.jsonl"), format!("{}\n", header("x")))?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let pi = options(home.path(), &[Agent::Pi]);
    let report = annal.sync(&pi)?;
    assert_eq!(
        (source(&report, Agent::Pi).units, source(&report, Agent::Pi).records_new),
        (1, 3),
        "{report:?}"
    );
    assert_eq!(session_len(&annal, "p1")?, 3);
    let stored = annal.snapshot()?.record_by_entry("pi:p1/a1b2c3d4")?.1.view()?.blocks().count();
    assert_eq!(stored, 1);

    // A branch appended to an earlier entry: only the new line is new.
    append(&file, &format!("{}\n", message("c3d4e5f6", Some("a1b2c3d4"), "assistant", "another way")))?;
    assert_eq!(source(&annal.sync(&pi)?, Agent::Pi).records_new, 1);

    // PI_CODING_AGENT_DIR moves the folder (a leading `~` is the home folder, as Pi reads it).
    let moved = home.path().join("elsewhere/sessions/--w--");
    fs::create_dir_all(&moved)?;
    fs::write(
        moved.join("2026-11-30T11-00-00-000Z_p2.jsonl"),
        format!("{}\n{}\n", header("p2"), message("d4e5f6a7", None, "user", "moved")),
    )?;
    let mut elsewhere = options(home.path(), &[Agent::Pi]);
    elsewhere.environment = Environment::with_home(home.path()).var("PI_CODING_AGENT_DIR", "~/elsewhere");
    assert_eq!(source(&annal.sync(&elsewhere)?, Agent::Pi).records_new, 2);
    assert_eq!(session_len(&annal, "p2")?, 2);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn qwen_chats_and_sub_agents_under_both_roots() -> TestResult {
    let home = tempfile::tempdir()?;
    let record = |uuid: &str, session: &str, kind: &str, text: &str, agent: Option<&str>| {
        let role = if kind == "user" { "user" } else { "model" };
        let mut line = serde_json::json!({"uuid": uuid, "parentUuid": null, "sessionId": session,
            "timestamp": "2026-11-30T10:00:00.000Z", "type": kind, "cwd": "/home/u/app", "version": "0.5.0",
            "message": {"role": role, "parts": [{"text": text}]}});
        if let Some(agent) = agent {
            line["isSidechain"] = true.into();
            line["agentId"] = agent.into();
        }
        format!("{line}\n")
    };
    let project = home.path().join(".qwen/projects/-home-u-app");
    fs::create_dir_all(project.join("chats"))?;
    fs::create_dir_all(project.join("subagents/s1"))?;
    let chat = project.join("chats/s1.jsonl");
    fs::write(&chat, record("q1", "s1", "user", TEXT, None) + &record("q2", "s1", "assistant", "ok", None))?;
    fs::write(project.join("subagents/s1/agent-x1.jsonl"), record("a1", "s1", "user", "look", Some("x1")))?;
    // Elsewhere under the root: never read.
    fs::write(home.path().join(".qwen/projects/notes.jsonl"), record("n1", "n", "user", "no", None))?;
    let runtime = home.path().join("rt/projects/-w/chats");
    fs::create_dir_all(&runtime)?;
    fs::write(runtime.join("s2.jsonl"), record("r1", "s2", "user", "runtime 🦀", None))?;

    let annal = Annal::open(home.path().join("annal.redb"))?;
    let mut qwen = options(home.path(), &[Agent::Qwen]);
    qwen.environment = Environment::with_home(home.path()).var("QWEN_RUNTIME_DIR", home.path().join("rt"));
    let report = annal.sync(&qwen)?;
    let source = source(&report, Agent::Qwen);
    assert_eq!((source.units, source.records_new), (3, 4), "{report:?}");
    assert!(source.problems.is_empty(), "{:?}", source.problems);
    assert_eq!((session_len(&annal, "s1")?, session_len(&annal, "s1/agent-x1")?), (2, 1));
    assert_eq!(session_len(&annal, "s2")?, 1);
    append(&chat, &record("q3", "s1", "assistant", "more", None))?;
    assert_eq!(self::source(&annal.sync(&qwen)?, Agent::Qwen).records_new, 1);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn copilot_cli_sessions_in_its_state_folder() -> TestResult {
    let home = tempfile::tempdir()?;
    let event = |id: &str, kind: &str, data: serde_json::Value| {
        let line = serde_json::json!({"type": kind, "data": data, "id": id,
            "timestamp": "2026-11-30T10:00:00.000Z", "parentId": null});
        format!("{line}\n")
    };
    let session = home.path().join(".copilot/session-state/5f0c2e9a");
    fs::create_dir_all(&session)?;
    let file = session.join("events.jsonl");
    let start = event(
        "e1",
        "session.start",
        serde_json::json!({"sessionId": "5f0c2e9a", "producer": "copilot-agent"}),
    );
    fs::write(&file, start + &event("e2", "user.message", serde_json::json!({"content": TEXT})))?;
    fs::write(session.join("workspace.yaml"), "id: 5f0c2e9a\n")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let copilot = options(home.path(), &[Agent::Copilot]);
    let report = annal.sync(&copilot)?;
    assert_eq!((source(&report, Agent::Copilot).units, source(&report, Agent::Copilot).records_new), (1, 2));
    assert_eq!(session_len(&annal, "5f0c2e9a")?, 2);
    append(
        &file,
        &event("e3", "assistant.message", serde_json::json!({"messageId": "m1", "content": "done"})),
    )?;
    assert_eq!(source(&annal.sync(&copilot)?, Agent::Copilot).records_new, 1);

    // COPILOT_HOME moves the whole folder.
    let moved = home.path().join("cp/session-state/s2");
    fs::create_dir_all(&moved)?;
    fs::write(
        moved.join("events.jsonl"),
        event("f1", "user.message", serde_json::json!({"content": "moved 🦀"})),
    )?;
    let mut elsewhere = options(home.path(), &[Agent::Copilot]);
    elsewhere.environment = Environment::with_home(home.path()).var("COPILOT_HOME", home.path().join("cp"));
    assert_eq!(source(&annal.sync(&elsewhere)?, Agent::Copilot).records_new, 1);
    assert_eq!(session_len(&annal, "s2")?, 1, "a session without its start event is named by its folder");
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn continue_sessions_rewritten_whole_are_stored_once_and_grow() -> TestResult {
    let home = tempfile::tempdir()?;
    let folder = home.path().join(".continue/sessions");
    fs::create_dir_all(&folder)?;
    let item = |role: &str, text: &str| serde_json::json!({"message": {"role": role, "content": text}, "contextItems": []});
    let session = |history: Vec<serde_json::Value>, title: &str| {
        serde_json::to_string_pretty(&serde_json::json!({"sessionId": "c1", "title": title,
            "workspaceDirectory": "file:///src", "history": history}))
    };
    let file = folder.join("c1.json");
    fs::write(&file, session(vec![item("user", TEXT), item("assistant", "Reading")], "New Session")?)?;
    // The index beside the sessions: not a session, never read.
    fs::write(
        folder.join("sessions.json"),
        r#"[{"sessionId":"c1","title":"New Session","dateCreated":"1764496800000","workspaceDirectory":"file:///src"}]"#,
    )?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let sync = options(home.path(), &[Agent::Continue]);
    let first = annal.sync(&sync)?;
    assert_eq!((source(&first, Agent::Continue).units, source(&first, Agent::Continue).records_new), (1, 3));
    assert!(
        source(&first, Agent::Continue).problems.is_empty(),
        "{:?}",
        source(&first, Agent::Continue).problems
    );

    // Saved again: the streamed reply completed, one more item, a new title.
    let history = vec![item("user", TEXT), item("assistant", "Reading it. Done."), item("user", "thanks 🦀")];
    fs::write(&file, session(history, "Fix the parser")?)?;
    let second = annal.sync(&sync)?;
    // The changed reply as a revision, the new item, the new session fields.
    assert_eq!(source(&second, Agent::Continue).records_new, 3, "{second:?}");
    assert_eq!(session_len(&annal, "c1")?, 6);
    assert_eq!(source(&annal.sync(&sync)?, Agent::Continue).records_new, 0);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn copilot_chat_sessions_in_every_vs_code_storage() -> TestResult {
    let home = tempfile::tempdir()?;
    let request = |id: &str, text: &str, reply: &str| {
        serde_json::json!({"requestId": id, "timestamp": 1_764_496_800_000_u64, "message": {"text": text, "parts": []},
            "response": [{"value": reply}]})
    };
    let state = |requests: Vec<serde_json::Value>| {
        serde_json::json!({"version": 3, "requesterUsername": "u", "responderUsername": "GitHub Copilot",
            "sessionId": "w1", "creationDate": 1_764_496_800_000_u64, "requests": requests})
    };
    let user = home.path().join(".config/Code/User");
    let chats = user.join("workspaceStorage/0a1b2c/chatSessions");
    fs::create_dir_all(&chats)?;
    fs::write(
        chats.join("w1.json"),
        serde_json::to_string_pretty(&state(vec![request("r1", TEXT, "On it")]))?,
    )?;
    // The newer change log, in the storage of windows without a workspace.
    let empty = user.join("globalStorage/emptyWindowChatSessions");
    fs::create_dir_all(&empty)?;
    let mut first = state(Vec::new());
    first["sessionId"] = "e1".into();
    let log = empty.join("e1.jsonl");
    fs::write(&log, format!("{}\n", serde_json::json!({"kind": 0, "v": first})))?;
    append(
        &log,
        &format!(
            "{}\n",
            serde_json::json!({"kind": 2, "k": ["requests"], "v": [request("r2", "hi 🦀", "")]})
        ),
    )?;
    // Other files of a workspace's storage: never read.
    fs::write(user.join("workspaceStorage/0a1b2c/workspace.json"), "{\"folder\":\"file:///src\"}")?;

    let annal = Annal::open(home.path().join("annal.redb"))?;
    let sync = options(home.path(), &[Agent::VsCode]);
    let first = annal.sync(&sync)?;
    let report = source(&first, Agent::VsCode);
    assert_eq!((report.units, report.records_new), (2, 6), "{report:?}");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((session_len(&annal, "w1")?, session_len(&annal, "e1")?), (3, 3));

    // The reply streams in: a change to the request's response, kept as a revision.
    append(
        &log,
        &format!(
            "{}\n",
            serde_json::json!({"kind": 1, "k": ["requests", 0, "response"], "v": [{"value": "Hello"}]})
        ),
    )?;
    assert_eq!(source(&annal.sync(&sync)?, Agent::VsCode).records_new, 1);
    assert_eq!(session_len(&annal, "e1")?, 4);
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}

#[test]
fn openhands_conversations_one_file_per_event() -> TestResult {
    let home = tempfile::tempdir()?;
    let events = home.path().join(".openhands/conversations/9ab0c1/events");
    fs::create_dir_all(&events)?;
    let message = serde_json::json!({"kind": "MessageEvent", "id": "e-1", "timestamp": "2026-11-30T10:00:00",
        "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": TEXT}]}});
    fs::write(events.join("event-00000-e-1.json"), message.to_string())?;
    fs::write(home.path().join(".openhands/conversations/9ab0c1/base_state.json"), "{\"id\":\"9ab0c1\"}")?;
    let annal = Annal::open(home.path().join("annal.redb"))?;
    let sync = options(home.path(), &[Agent::OpenHands]);
    let first = annal.sync(&sync)?;
    assert_eq!(
        (source(&first, Agent::OpenHands).units, source(&first, Agent::OpenHands).records_new),
        (1, 1)
    );
    // The next event is a new file: only it is read.
    let reply = serde_json::json!({"kind": "MessageEvent", "id": "e-2", "timestamp": "2026-11-30T10:00:01",
        "source": "agent", "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "done 🦀"}]}});
    fs::write(events.join("event-00001-e-2.json"), reply.to_string())?;
    let second = annal.sync(&sync)?;
    assert_eq!(
        (source(&second, Agent::OpenHands).units_read, source(&second, Agent::OpenHands).records_new),
        (1, 1)
    );
    assert_eq!(session_len(&annal, "9ab0c1")?, 2);
    let stored = annal.snapshot()?.record_by_entry("e-2")?.0.session;
    assert_eq!(stored, "9ab0c1");
    assert!(annal.verify(None)?.is_ok());
    Ok(())
}
