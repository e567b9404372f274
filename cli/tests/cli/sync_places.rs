//! `annal sync` looking where each agent's current version writes, over a fixture home: Copilot
//! CLI's `~/.copilot` whatever `XDG_STATE_HOME` says, an installed agent with no sessions shown
//! as installed in `--list`, and one OpenHands conversation counted as one session however many
//! event files it spans.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{json_lines, run, Run, Sandbox};

/// The variables through which agents move their folders: none of this machine's may leak in.
const OVERRIDES: [&str; 16] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "CONTINUE_GLOBAL_DIR",
    "COPILOT_HOME",
    "FACTORY_HOME_OVERRIDE",
    "GEMINI_CLI_HOME",
    "GOOSE_PATH_ROOT",
    "KIMI_SHARE_DIR",
    "OPENHANDS_CONVERSATIONS_DIR",
    "OPENHANDS_PERSISTENCE_DIR",
    "PI_CODING_AGENT_DIR",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
];

/// The binary with the sandbox as every agent's home and `XDG_STATE_HOME` set, as on many
/// Linux desktops.
fn annal(sandbox: &Sandbox, args: &[&str]) -> Run {
    let mut command: Command = sandbox.command(args);
    for name in OVERRIDES {
        command.env_remove(name);
    }
    command.env("XDG_CONFIG_HOME", sandbox.dir().join(".config"));
    command.env("XDG_DATA_HOME", sandbox.dir().join(".local/share"));
    command.env("XDG_STATE_HOME", sandbox.dir().join(".local/state"));
    run(command, "")
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a folder")).expect("the folder");
    fs::write(path, text).expect("the file");
}

fn source<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines.iter().find(|line| line["source"] == name).expect("the source's line")
}

#[test]
fn copilot_sessions_are_found_in_its_home_whatever_xdg_says() {
    let sandbox = Sandbox::new();
    let events = [
        json!({"type": "session.start", "data": {"sessionId": "5f0c2e9a", "version": 1, "producer": "copilot-agent",
            "copilotVersion": "0.0.354", "startTime": "2026-11-30T10:00:00.000Z"}, "id": "e1",
            "timestamp": "2026-11-30T10:00:00.000Z", "parentId": null}),
        json!({"type": "user.message", "data": {"content": "fix the 解析器\u{3000}🦀", "attachments": []}, "id": "e2",
            "timestamp": "2026-11-30T10:00:01.000Z", "parentId": "e1"}),
    ];
    let text: String = events.iter().map(|event| format!("{event}\n")).collect();
    write(&sandbox.dir().join(".copilot/session-state/5f0c2e9a/events.jsonl"), &text);
    let run = annal(&sandbox, &["sync", "--only", "copilot", "--json"]).ok();
    let lines = json_lines(&run.stdout);
    let copilot = source(&lines, "copilot");
    assert_eq!(
        (copilot["found"].as_bool(), copilot["recordsNew"].as_u64()),
        (Some(true), Some(2)),
        "{copilot}"
    );
}

#[test]
fn an_installed_agent_without_sessions_is_shown_as_installed() {
    let sandbox = Sandbox::new();
    // Copilot CLI run once, no session yet: its settings, no `session-state`.
    write(&sandbox.dir().join(".copilot/config.json"), "{\"banner\": \"never\"}\n");
    let listed = annal(&sandbox, &["sync", "--list", "--json"]).ok();
    let lines = json_lines(&listed.stdout);
    let copilot = source(&lines, "copilot");
    assert_eq!(copilot["found"].as_bool(), Some(false), "{copilot}");
    let home = sandbox.dir().join(".copilot").display().to_string();
    assert_eq!(copilot["installed"].as_str(), Some(home.as_str()), "{copilot}");
    assert!(source(&lines, "codex")["installed"].is_null());
    let table = annal(&sandbox, &["sync", "--list"]).ok();
    let row = table.stdout.lines().find(|line| line.starts_with("copilot")).expect("copilot's row");
    assert!(row.contains(&format!("installed in {home}, no sessions in ")), "{row}");
    let synced = annal(&sandbox, &["sync", "--only", "copilot"]).ok();
    assert!(synced.stdout.contains(&format!("installed in {home}, no sessions in ")), "{}", synced.stdout);
}

#[test]
fn one_openhands_conversation_in_many_event_files_is_one_session() {
    let sandbox = Sandbox::new();
    let events = sandbox.dir().join(".openhands/conversations/9ab2c4d6/events");
    for index in 0..8 {
        let event = json!({"kind": "MessageEvent", "id": format!("ev{index}"),
            "timestamp": format!("2026-11-30T10:00:0{index}.123456"), "source": if index % 2 == 0 { "user" } else { "agent" },
            "llm_message": {"role": if index % 2 == 0 { "user" } else { "assistant" },
                "content": [{"type": "text", "text": format!("step {index}: 解析器 🦀")}]}, "activated_skills": []});
        write(&events.join(format!("event-{index:05}-ev{index}.json")), &event.to_string());
    }
    let run = annal(&sandbox, &["sync", "--only", "openhands", "--json"]).ok();
    let lines = json_lines(&run.stdout);
    let openhands = source(&lines, "openhands");
    assert_eq!(
        (openhands["recordsNew"].as_u64(), openhands["sessionsChanged"].as_u64()),
        (Some(8), Some(1)),
        "{openhands}"
    );
    let more = json!({"kind": "MessageEvent", "id": "ev8", "timestamp": "2026-11-30T10:00:09.000000", "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "and again"}]}, "activated_skills": []});
    write(&events.join("event-00008-ev8.json"), &more.to_string());
    let table = annal(&sandbox, &["sync", "--only", "openhands"]).ok();
    assert!(table.stdout.contains("+1 record in 1 session"), "{}", table.stdout);
}
