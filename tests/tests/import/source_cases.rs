//! The fixtures of `sync_each_source`: one session per source that reads files, laid out where
//! its agent puts it and written as its agent writes it, at first and after it grew.

use annal::sync::Agent;
use serde_json::{json, Value};

use crate::sync_sources::TEXT;

mod editors;

use editors::{cline, continue_dev, kiro, vscode};

/// One source's fixture: where its session file goes, what it holds at first and after it grew
/// (or was rewritten), how many records that adds, and where a bad file goes.
pub(crate) struct Case {
    pub(crate) agent: Agent,
    pub(crate) file: &'static str,
    pub(crate) session: &'static str,
    pub(crate) first: String,
    pub(crate) grown: String,
    pub(crate) added: u64,
    pub(crate) bad: &'static str,
    /// Where the session grows when not in its first file (an agent that writes a file per
    /// event).
    pub(crate) grown_file: Option<&'static str>,
    /// The project folder to sync, for an agent that keeps sessions in projects.
    pub(crate) project: Option<&'static str>,
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

fn claude() -> Case {
    let line = |uuid: &str, role: &str, text: &str| {
        json!({"type": role, "uuid": uuid, "sessionId": "s1", "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}})
    };
    let first = [line("u1", "user", TEXT), line("u2", "assistant", "ok")];
    let grown = [first[0].clone(), first[1].clone(), line("u3", "user", "more 🦀")];
    Case {
        agent: Agent::Claude,
        file: ".claude/projects/-src-app/s1.jsonl",
        session: "s1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".claude/projects/-src-app/bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn codex() -> Case {
    let item = |role: &str, text: &str| {
        json!({"timestamp": "2026-11-30T10:00:01Z", "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}})
    };
    let meta = json!({"timestamp": "2026-11-30T10:00:00Z", "type": "session_meta",
        "payload": {"id": "c1", "cwd": "/src", "timestamp": "2026-11-30T10:00:00Z"}});
    let first = [meta, item("user", TEXT)];
    let grown = [first[0].clone(), first[1].clone(), item("assistant", "done 🦀")];
    Case {
        agent: Agent::Codex,
        file: ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-c1.jsonl",
        session: "c1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".codex/sessions/2026/11/30/rollout-2026-11-30T11-00-00-bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn gemini() -> Case {
    let meta = json!({"sessionId": "g1", "projectHash": "p", "startTime": "2026-11-30T10:00:00Z",
        "lastUpdated": "2026-11-30T10:00:00Z"});
    let message = |id: &str, kind: &str, text: &str| json!({"id": id, "timestamp": "2026-11-30T10:00:01Z", "type": kind, "content": text});
    let first = [meta, message("m1", "user", TEXT)];
    let grown = [first[0].clone(), first[1].clone(), message("m2", "gemini", "done 🦀")];
    Case {
        agent: Agent::Gemini,
        file: ".gemini/tmp/p/chats/session-2026-11-30T10-00-g1.jsonl",
        session: "g1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".gemini/tmp/p/chats/session-bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn pi() -> Case {
    let header = json!({"type": "session", "version": 3, "id": "p1", "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": "/src"});
    let message = |id: &str, role: &str, text: &str| {
        json!({"type": "message", "id": id, "parentId": null, "timestamp": "2026-11-30T10:00:01.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1_764_496_801_000_u64}})
    };
    let first = [header, message("a1b2c3d4", "user", TEXT)];
    let grown = [first[0].clone(), first[1].clone(), message("b2c3d4e5", "assistant", "done 🦀")];
    Case {
        agent: Agent::Pi,
        file: ".pi/agent/sessions/--src--/2026-11-30T10-00-00-000Z_p1.jsonl",
        session: "p1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".pi/agent/sessions/--src--/2026-11-30T11-00-00-000Z_bad.jsonl",
        grown_file: None,
        project: None,
    }
}

/// Oh My Pi writes Pi's format under its own folder; here a named profile's.
fn omp() -> Case {
    Case {
        agent: Agent::OhMyPi,
        file: ".omp/profiles/work/agent/sessions/--src--/2026-11-30T10-00-00-000Z_p1.jsonl",
        bad: ".omp/profiles/work/agent/sessions/--src--/2026-11-30T11-00-00-000Z_bad.jsonl",
        ..pi()
    }
}

fn qwen() -> Case {
    let record = |uuid: &str, kind: &str, text: &str| {
        let role = if kind == "user" { "user" } else { "model" };
        json!({"uuid": uuid, "parentUuid": null, "sessionId": "q1", "timestamp": "2026-11-30T10:00:00.000Z",
            "type": kind, "cwd": "/src", "version": "0.5.0", "message": {"role": role, "parts": [{"text": text}]}})
    };
    let first = [record("q-1", "user", TEXT)];
    let grown = [first[0].clone(), record("q-2", "assistant", "done 🦀")];
    Case {
        agent: Agent::Qwen,
        file: ".qwen/projects/-src/chats/q1.jsonl",
        session: "q1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".qwen/projects/-src/chats/bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn copilot() -> Case {
    let event = |id: &str, kind: &str, data: Value| json!({"type": kind, "data": data, "id": id, "timestamp": "2026-11-30T10:00:00.000Z", "parentId": null});
    let first = [
        event("e1", "session.start", json!({"sessionId": "k1", "version": 1})),
        event("e2", "user.message", json!({"content": TEXT})),
    ];
    let grown =
        [first[0].clone(), first[1].clone(), event("e3", "assistant.message", json!({"content": "done 🦀"}))];
    Case {
        agent: Agent::Copilot,
        file: ".copilot/session-state/k1/events.jsonl",
        session: "k1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".copilot/session-state/bad/events.jsonl",
        grown_file: None,
        project: None,
    }
}

fn copilot_legacy() -> Case {
    let document = |timeline: &[Value]| {
        let session = json!({"sessionId": "h1", "startTime": "2025-10-04T05:36:00.000Z",
            "chatMessages": [{"role": "user", "content": TEXT}], "timeline": timeline});
        // As the CLI saves it: `JSON.stringify(session, null, 2)`, rewritten whole.
        serde_json::to_string_pretty(&session).unwrap_or_default()
    };
    let entry = |id: &str, kind: &str, text: &str| json!({"type": kind, "id": id, "timestamp": "2025-10-04T05:36:01.000Z", "text": text});
    let first = [entry("t1", "user", TEXT)];
    Case {
        agent: Agent::Copilot,
        file: ".copilot/history-session-state/session_h1_1759556160000.json",
        session: "h1",
        first: document(&first),
        grown: document(&[first[0].clone(), entry("t2", "copilot", "done 🦀")]),
        added: 1,
        bad: ".copilot/history-session-state/session_bad_1759556160000.json",
        grown_file: None,
        project: None,
    }
}

fn cursor_transcript() -> Case {
    let line = |role: &str, text: &str| json!({"role": role, "message": {"content": [{"type": "text", "text": text}]}});
    let first = [line("user", TEXT), line("assistant", "Reading.")];
    let grown = [first[0].clone(), first[1].clone(), line("assistant", "done 🦀")];
    Case {
        agent: Agent::Cursor,
        file: ".cursor/projects/src-app/agent-transcripts/4e1f/4e1f.jsonl",
        session: "4e1f/transcript",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".cursor/projects/src-app/agent-transcripts/bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn kimi() -> Case {
    let first = [json!({"role": "_checkpoint", "id": 0}), json!({"role": "user", "content": TEXT})];
    let grown = [first[0].clone(), first[1].clone(), json!({"role": "assistant", "content": "done 🦀"})];
    Case {
        agent: Agent::Kimi,
        file: ".kimi/sessions/5d41/m1/context.jsonl",
        session: "m1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".kimi/sessions/5d41/bad/context.jsonl",
        grown_file: None,
        project: None,
    }
}

fn factory() -> Case {
    let start = json!({"type": "session_start", "id": "d1", "title": "fix it", "sessionTitle": "fix it",
        "owner": "u", "version": 2, "cwd": "/src"});
    let message = |id: &str, role: &str, text: &str| {
        json!({"type": "message", "id": id, "timestamp": "2026-11-30T10:00:00.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}})
    };
    let first = [start, message("m1", "user", TEXT)];
    let grown = [first[0].clone(), first[1].clone(), message("m2", "assistant", "done 🦀")];
    Case {
        agent: Agent::Factory,
        file: ".factory/sessions/-src/d1.jsonl",
        session: "d1",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".factory/sessions/-src/bad.jsonl",
        grown_file: None,
        project: None,
    }
}

fn amp() -> Case {
    let thread = |texts: &[(&str, &str)]| {
        let messages: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(id, (role, text))| json!({"role": role, "messageId": id, "content": [{"type": "text", "text": text}]}))
            .collect();
        json!({"v": 5, "id": "T-a1", "created": 1_764_496_800_000_u64, "title": "Fix it",
            "nextMessageId": texts.len(), "messages": messages})
        .to_string()
    };
    Case {
        agent: Agent::Amp,
        file: ".local/share/amp/threads/T-a1.json",
        session: "T-a1",
        first: thread(&[("user", TEXT)]),
        grown: thread(&[("user", TEXT), ("assistant", "done 🦀")]),
        added: 1,
        bad: ".local/share/amp/threads/T-bad.json",
        grown_file: None,
        project: None,
    }
}

fn openhands() -> Case {
    let event = |id: &str, source: &str, role: &str, text: &str| {
        json!({"kind": "MessageEvent", "id": id, "timestamp": "2026-11-30T10:00:00", "source": source,
            "llm_message": {"role": role, "content": [{"type": "text", "text": text}]}})
        .to_string()
    };
    Case {
        agent: Agent::OpenHands,
        file: ".openhands/conversations/9ab0/events/event-00000-e-1.json",
        session: "9ab0",
        first: event("e-1", "user", "user", TEXT),
        // The next event is a file of its own.
        grown: event("e-2", "agent", "assistant", "done 🦀"),
        added: 1,
        bad: ".openhands/conversations/bad/events/event-00000-x.json",
        grown_file: Some(".openhands/conversations/9ab0/events/event-00001-e-2.json"),
        project: None,
    }
}

fn aider() -> Case {
    // As aider writes it: input and notices end in two spaces, a reply in a blank line.
    let first = "\n# aider chat started at 2026-11-30 10:00:00\n\n#### fix the 解析器 🦀  \n\nDone.\n\n";
    Case {
        agent: Agent::Aider,
        file: "code/app/.aider.chat.history.md",
        session: "app@2026-11-30 10:00:00",
        first: first.to_owned(),
        grown: format!("{first}#### and the tests  \n\nDone too.\n\n"),
        added: 2,
        bad: "code/bad/.aider.chat.history.md",
        grown_file: None,
        project: Some("code"),
    }
}

pub(crate) fn cases() -> Vec<Case> {
    vec![
        claude(),
        codex(),
        gemini(),
        pi(),
        omp(),
        qwen(),
        copilot(),
        copilot_legacy(),
        cursor_transcript(),
        kimi(),
        factory(),
        amp(),
        kiro(),
        continue_dev(),
        cline(Agent::Cline, "saoudrizwan.claude-dev"),
        cline(Agent::Roo, "rooveterinaryinc.roo-cline"),
        vscode(),
        openhands(),
        aider(),
    ]
}
