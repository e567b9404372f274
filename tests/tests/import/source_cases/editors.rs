//! The fixtures of the sources that live in an editor: Kiro, Continue, Cline and Roo Code, and
//! VS Code's chat, each as its extension or IDE writes it.

use annal::sync::Agent;
use serde_json::{json, Value};

use super::{jsonl, Case};
use crate::sync_sources::TEXT;

pub(super) fn kiro() -> Case {
    let entry = |kind: &str, id: &str, text: &str| json!({"version": "v1", "kind": kind, "data": {"message_id": id, "content": [{"kind": "text", "data": text}]}});
    let first = [entry("Prompt", "msg-1", TEXT)];
    let grown = [first[0].clone(), entry("AssistantMessage", "msg-2", "done 🦀")];
    Case {
        agent: Agent::Kiro,
        file: ".kiro/sessions/cli/5f0c.jsonl",
        session: "5f0c",
        first: jsonl(&first),
        grown: jsonl(&grown),
        added: 1,
        bad: ".kiro/sessions/cli/bad.jsonl",
        grown_file: None,
        project: None,
    }
}

pub(super) fn continue_dev() -> Case {
    let session = |items: &[(&str, &str)]| {
        let history: Vec<Value> = items
            .iter()
            .map(|(role, text)| json!({"message": {"role": role, "content": text}, "contextItems": []}))
            .collect();
        json!({"sessionId": "n1", "title": "Fix it", "workspaceDirectory": "file:///src", "history": history})
            .to_string()
    };
    Case {
        agent: Agent::Continue,
        file: ".continue/sessions/n1.json",
        session: "n1",
        first: session(&[("user", TEXT)]),
        grown: session(&[("user", TEXT), ("assistant", "done 🦀")]),
        added: 1,
        bad: ".continue/sessions/bad.json",
        grown_file: None,
        project: None,
    }
}

pub(super) fn cline(agent: Agent, extension: &'static str) -> Case {
    let history = |items: &[(&str, &str)]| {
        let items: Vec<Value> = items
            .iter()
            .map(|(role, text)| json!({"role": role, "content": [{"type": "text", "text": text}]}))
            .collect();
        Value::Array(items).to_string()
    };
    let (file, bad) = match extension {
        "saoudrizwan.claude-dev" => (
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1733/api_conversation_history.json",
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/bad/api_conversation_history.json",
        ),
        _ => (
            ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/1733/api_conversation_history.json",
            ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/bad/api_conversation_history.json",
        ),
    };
    Case {
        agent,
        file,
        session: "1733",
        first: history(&[("user", TEXT)]),
        grown: history(&[("user", TEXT), ("assistant", "done 🦀")]),
        added: 1,
        bad,
        grown_file: None,
        project: None,
    }
}

pub(super) fn vscode() -> Case {
    let request = |id: &str, text: &str| json!({"requestId": id, "message": {"text": text, "parts": []}, "response": [{"value": "ok"}]});
    let state = |requests: Vec<Value>| {
        json!({"version": 3, "requesterUsername": "u", "responderUsername": "GitHub Copilot", "sessionId": "v1",
            "creationDate": 1_764_496_800_000_u64, "requests": requests})
        .to_string()
    };
    Case {
        agent: Agent::VsCode,
        file: ".config/Code/User/workspaceStorage/0a1b/chatSessions/v1.json",
        session: "v1",
        first: state(vec![request("r1", TEXT)]),
        grown: state(vec![request("r1", TEXT), request("r2", "more 🦀")]),
        // The request and its response.
        added: 2,
        bad: ".config/Code/User/workspaceStorage/0a1b/chatSessions/bad.json",
        grown_file: None,
        project: None,
    }
}
