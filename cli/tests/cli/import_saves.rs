//! `annal import` on the agents that rewrite a session whole at every save (Continue's `cn`, VS
//! Code's chat, Zed), read as a user would: tool outputs kept only in a call's state become
//! searchable results, a copied session keeps its own records, and a save that only moves the
//! session's bookkeeping adds no record.

use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::{json, Value};

use super::import_shapes::exported;
use crate::support::Sandbox;

fn import(sandbox: &Sandbox, path: &Path) -> Value {
    let run = sandbox.annal(&["import", path.to_str().expect("a UTF-8 path"), "--json"], "").ok();
    serde_json::from_str(&run.stdout).expect("a JSON summary")
}

/// The blocks of every exported record, with their record's role.
fn blocks(records: &[Value]) -> Vec<(String, Value)> {
    let role = |record: &Value| record["role"].as_str().unwrap_or_default().to_owned();
    let blocks = |record: &Value| record["blocks"].as_array().cloned().unwrap_or_default();
    records
        .iter()
        .flat_map(|record| blocks(record).into_iter().map(move |block| (role(record), block)))
        .collect()
}

/// A tool call's state as the `cn` CLI keeps it: the call, its status and its output.
fn call_state(id: &str, tool: &str, arguments: &str, status: &str, output: &str) -> Value {
    let call = json!({"id": id, "type": "function", "function": {"name": tool, "arguments": arguments}});
    json!({"toolCallId": id, "toolCall": call, "status": status, "parsedArgs": {},
        "output": [{"content": output, "name": "Tool Result", "description": "Tool execution result"}]})
}

#[test]
fn continue_cli_tool_outputs_become_results_paired_with_their_calls() {
    let sandbox = Sandbox::new();
    let read = call_state(
        "call_1",
        "Read",
        r#"{"filepath":"src/解析器.rs"}"#,
        "done",
        "fn main() { println!(\"héllo 🦀\"); }",
    );
    let test = call_state(
        "call_2",
        "Bash",
        r#"{"command":"cargo test"}"#,
        "errored",
        "error[E0425]: cannot find value `naïve` in this scope",
    );
    let assistant = |content: &str, state: Option<Value>| {
        let mut item = json!({"message": {"role": "assistant", "content": content}, "contextItems": []});
        if let Some(state) = state {
            item["message"]["toolCalls"] = json!([state["toolCall"]]);
            item["toolCallStates"] = json!([state]);
        }
        item
    };
    let session = json!({
        "sessionId": "0f5a7c1e-9d2b-4e6f-8a1c-3b5d7e9f1a2c",
        "title": "Fix the 解析器",
        "workspaceDirectory": "/src/app",
        "history": [
            {"message": {"role": "system", "content": "You are a coding agent."}, "contextItems": []},
            {"message": {"role": "user", "content": "fix the 解析器\u{3000}please 🦀"}, "contextItems": []},
            assistant("", Some(read)),
            assistant("", Some(test)),
            assistant("The build fails on `naïve`; renaming it.", None),
        ],
    });
    let file = sandbox.dir().join("0f5a7c1e-9d2b-4e6f-8a1c-3b5d7e9f1a2c.json");
    std::fs::write(&file, serde_json::to_string_pretty(&session).expect("JSON")).expect("the session");
    import(&sandbox, &file);

    let records = exported(&sandbox, "0f5a7c1e-9d2b-4e6f-8a1c-3b5d7e9f1a2c");
    let blocks = blocks(&records);
    let empty = blocks.iter().filter(|(_, b)| b["type"] == "text" && b["text"] == "").count();
    assert_eq!(empty, 0, "empty text blocks stored: {records:#?}");
    let results: Vec<&Value> =
        blocks.iter().filter(|(_, b)| b["type"] == "toolResult").map(|(_, b)| b).collect();
    assert_eq!(results.len(), 2, "{records:#?}");
    assert_eq!(
        (results[0]["callId"].as_str(), results[0]["isError"].as_bool()),
        (Some("call_1"), Some(false))
    );
    assert!(results[0]["output"].as_str().is_some_and(|o| o.contains("héllo 🦀")), "{results:?}");
    assert_eq!(
        (results[1]["callId"].as_str(), results[1]["isError"].as_bool()),
        (Some("call_2"), Some(true))
    );
    let calls = blocks.iter().filter(|(role, b)| b["type"] == "toolCall" && role == "assistant").count();
    assert_eq!(calls, 2);
    // The failed tool's output is found by a search.
    let found = sandbox.annal(&["history", "search", "E0425", "--json"], "").ok();
    assert!(found.stdout.contains("0f5a7c1e-9d2b-4e6f-8a1c-3b5d7e9f1a2c"), "{}", found.stdout);
}

/// A VS Code chat session as VS Code writes it, holding `requests`.
fn chat_session(id: &str, title: &str, draft: &str, requests: &[Value]) -> Value {
    json!({"version": 3, "requesterUsername": "kōji", "responderUsername": "GitHub Copilot",
        "sessionId": id, "creationDate": 1_764_496_800_000_u64, "lastMessageDate": 1_764_496_900_000_u64 + requests.len() as u64,
        "customTitle": title, "initialLocation": "panel", "inputState": {"inputText": draft, "attachments": []},
        "requests": requests})
}

fn chat_request(id: &str, text: &str, reply: &str) -> Value {
    json!({"requestId": id, "timestamp": 1_764_496_800_000_u64, "message": {"text": text, "parts": []},
        "variableData": {"variables": []}, "response": [{"value": reply, "supportThemeIcons": false}],
        "modelId": "copilot/claude-sonnet-4.5"})
}

fn system_records(records: &[Value]) -> usize {
    records.iter().filter(|r| r["role"] == "system").count()
}

#[test]
fn vscode_chat_saves_keep_one_metadata_record() {
    let sandbox = Sandbox::new();
    let first = chat_request("request_5b1e", "fix the 解析器\u{3000}🦀", "Reading `naïve.rs`.");
    let file = sandbox.dir().join("a1.json");
    let session = chat_session("a1", "Fix the parser", "", std::slice::from_ref(&first));
    std::fs::write(&file, session.to_string()).expect("a session");
    import(&sandbox, &file);
    // Saved again as the user types a draft and the session goes on: one metadata record still.
    let second = chat_request("request_6c2f", "and the tests, ça marche?", "Running them.");
    let session = chat_session("a1", "Fix the parser", "what about é", &[first, second]);
    std::fs::write(&file, session.to_string()).expect("a save");
    let again = import(&sandbox, &file);
    assert_eq!(again["recordsNew"], 2, "{again}");
    let records = exported(&sandbox, "a1");
    assert_eq!((records.len(), system_records(&records)), (5, 1), "{records:#?}");
}

#[test]
fn a_copied_vscode_chat_session_keeps_its_own_records() {
    let sandbox = Sandbox::new();
    let requests = [
        chat_request("request_5b1e", "fix the 解析器\u{3000}🦀", "Reading `naïve.rs`."),
        chat_request("request_6c2f", "and the tests, ça marche?", "Running them."),
    ];
    let file = sandbox.dir().join("a1.json");
    std::fs::write(&file, chat_session("a1", "Fix the parser", "", &requests).to_string())
        .expect("a session");
    import(&sandbox, &file);
    // A copy of the session under another id (a session moved between windows).
    let copy = sandbox.dir().join("b2.json");
    std::fs::write(&copy, chat_session("b2", "Fix the parser", "", &requests).to_string()).expect("the copy");
    let copied = import(&sandbox, &copy);
    let counts = (copied["recordsNew"].as_u64(), copied["recordsInOtherSessions"].as_u64());
    assert_eq!(counts, (Some(5), Some(0)), "{copied}");
    let texts: Vec<String> = blocks(&exported(&sandbox, "b2"))
        .into_iter()
        .filter_map(|(_, b)| b["text"].as_str().map(str::to_owned))
        .collect();
    assert!(texts.iter().any(|t| t == "fix the 解析器\u{3000}🦀"), "{texts:?}");
}

/// Saves a Zed thread into `threads.db` as Zed does: the whole thread, replacing the row; each
/// finished request's token usage keyed by the user message that started it, and their sum.
fn zed_save(db: &Connection, at: &str, messages: &[Value], usage: &[(&str, u64)]) {
    let spent: serde_json::Map<String, Value> = usage
        .iter()
        .map(|(id, tokens)| ((*id).to_owned(), json!({"input_tokens": tokens, "output_tokens": tokens / 2})))
        .collect();
    let total: u64 = usage.iter().map(|(_, tokens)| tokens).sum();
    let thread = json!({"title": "Fix the 解析器", "version": "0.3.0", "updated_at": at, "messages": messages,
        "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"}, "profile": "write",
        "cumulative_token_usage": {"input_tokens": total, "output_tokens": total / 2},
        "request_token_usage": spent});
    db.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES ('z1', 'Fix', ?1, 'json', ?2)
         ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data",
        params![at, thread.to_string()],
    )
    .expect("a save");
}

#[test]
fn zed_threads_keep_one_metadata_record_across_saves() {
    let sandbox = Sandbox::new();
    let path = sandbox.dir().join("threads.db");
    let db = Connection::open(&path).expect("the database");
    db.execute_batch(annal_support::agent_schemas::ZED).expect("the schema");
    let user = |id: &str, text: &str| json!({"User": {"id": id, "content": [{"Text": text}]}});
    let reply = |text: &str| json!({"Agent": {"content": [{"Text": text}], "tool_results": {}}});
    let first = [user("u-1", "fix the 解析器 🦀"), reply("Reading `naïve.rs`.")];
    zed_save(&db, "2026-11-30T10:00:00Z", &first, &[("u-1", 1200)]);
    import(&sandbox, &path);
    // The user asks again: the thread's time and totals move, its title and model do not.
    let mut second = first.to_vec();
    second.push(user("u-2", "and the tests, ça marche?"));
    zed_save(&db, "2026-11-30T10:01:00Z", &second, &[("u-1", 1200)]);
    import(&sandbox, &path);
    second.push(reply("They pass."));
    zed_save(&db, "2026-11-30T10:02:00Z", &second, &[("u-1", 1200), ("u-2", 1300)]);
    import(&sandbox, &path);
    let records = exported(&sandbox, "z1");
    assert_eq!((records.len(), system_records(&records)), (5, 1), "{records:#?}");
    // Each request's usage is on its reply.
    let answer = records.iter().find(|r| r["entryId"] == "zed:z1:4").expect("the second reply");
    assert_eq!(answer["meta"]["requestTokenUsage"]["input_tokens"], 1300, "{answer:#?}");
}
