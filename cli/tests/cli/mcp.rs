//! `annal mcp` driven as an MCP client drives it: the real binary, newline-delimited JSON-RPC on
//! its stdin and stdout (initialize, notifications/initialized, tools/list, tools/call). Each
//! tool answers compact text with ids the others take; bad calls are tool errors and the server
//! keeps answering. The end-to-end check over a real transcript is in the `corpus` test binary.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::mcp::{Client, TestResult};
use crate::support::Sandbox;

const RECORDS: &str = r#"{"entryId":"u1","role":"user","blocks":[{"type":"text","text":"Why does the client fail with ECONNRESET?"}]}
{"entryId":"a1","role":"assistant","blocks":[{"type":"text","text":"We decided to retry with backoff."},{"type":"toolCall","callId":"c1","tool":"Read","input":{"file_path":"src/api/client.ts"}}]}
{"entryId":"t1","role":"tool","blocks":[{"type":"toolResult","callId":"c1","tool":"Read","isError":true,"output":"line one\nError: read ECONNRESET\nline three\n"}]}
"#;

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], RECORDS).ok();
    sandbox.annal(&["fork", "s", "--at", "2", "--name", "s-alt"], "").ok();
    sandbox
}

#[test]
fn tools_are_listed_with_their_input_schemas() -> TestResult {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox)?;
    let listed = client.request("tools/list", json!({}))?;
    let tools = listed["result"]["tools"].as_array().ok_or("no tools")?;
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["history_get", "history_search", "sessions_list"]);
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).cloned().unwrap_or_default();
    let search = tool("history_search");
    for field in ["query", "session", "role", "tool", "errors", "limit"] {
        assert!(search["inputSchema"]["properties"][field].is_object(), "{field}: {search}");
    }
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    let get = tool("history_get");
    for field in ["entryId", "block", "fromLine", "toLine"] {
        assert!(get["inputSchema"]["properties"][field].is_object(), "{field}: {get}");
    }
    assert_eq!(get["inputSchema"]["required"], json!(["entryId"]));
    assert!(tool("sessions_list")["description"].as_str().is_some_and(|d| !d.is_empty()));
    client.finish()
}

#[test]
fn search_hits_name_ids_that_get_reads_back() -> TestResult {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox)?;
    let (texts, error) = client.call("history_search", json!({"query": "ECONNRESET"}))?;
    assert!(!error, "{texts:?}");
    let text = texts.concat();
    assert!(text.starts_with("2 hits for \"ECONNRESET\""), "{text}");
    assert!(text.contains("t1#0 [s #2 tool Read toolResult error] "), "{text}");
    assert!(text.contains("**ECONNRESET**"), "{text}");
    // Filters: role, tool, errors, session (a fork sees what it inherits), limit.
    let (texts, _) = client.call("history_search", json!({"query": "ECONNRESET", "role": "user"}))?;
    assert!(texts[0].contains("u1#0 [s #0 user]") && !texts[0].contains("t1#0"), "{texts:?}");
    let (texts, _) = client.call("history_search", json!({"query": "ECONNRESET", "errors": true}))?;
    assert!(texts[0].starts_with("1 hit") && texts[0].contains("t1#0"), "{texts:?}");
    let (texts, _) = client.call("history_search", json!({"query": "src/api/client.ts", "tool": "read"}))?;
    assert!(texts[0].contains("a1#1 [s #1 assistant Read toolCall]"), "{texts:?}");
    let (texts, _) = client.call("history_search", json!({"query": "ECONNRESET", "session": "s-alt"}))?;
    assert!(texts[0].starts_with("1 hit") && texts[0].contains("u1#0"), "{texts:?}");
    let (texts, _) = client.call("history_search", json!({"query": "ECONNRESET", "limit": 1}))?;
    assert!(texts[0].starts_with("1 hit"), "{texts:?}");
    let (texts, error) = client.call("history_search", json!({"query": "nothing-like-this"}))?;
    assert!(!error && texts[0].starts_with("no matches"), "{texts:?}");

    // The id of a hit, whole or by block, with a line range.
    let (texts, error) = client.call("history_get", json!({"entryId": "t1#0"}))?;
    assert!(!error, "{texts:?}");
    assert!(texts[0].starts_with("entry t1 · session s · sourceOrder 2 · tool"), "{texts:?}");
    assert_eq!(texts[1], "line one\nError: read ECONNRESET\nline three\n");
    let (texts, _) = client.call("history_get", json!({"entryId": "a1"}))?;
    assert_eq!(texts.len(), 3, "a description and two blocks: {texts:?}");
    assert_eq!(texts[1], "We decided to retry with backoff.");
    assert_eq!(texts[2], r#"{"file_path":"src/api/client.ts"}"#);
    let (texts, _) =
        client.call("history_get", json!({"entryId": "t1", "block": 0, "fromLine": 2, "toLine": 2}))?;
    assert_eq!(texts[1], "Error: read ECONNRESET\n");
    assert!(texts[0].contains("lines 2-2 of 3"), "{texts:?}");

    let (texts, error) = client.call("sessions_list", json!({}))?;
    assert!(!error, "{texts:?}");
    assert_eq!(texts[0], "2 sessions:\ns · 3 records\ns-alt · 2 records · fork of s at 2\n");
    client.finish()
}

/// With `--sync`, a session another agent writes while the server runs is found by the next
/// search, and the store is made by the first pass if there was none.
#[test]
fn with_sync_what_another_agent_just_wrote_is_found() -> TestResult {
    let sandbox = Sandbox::new();
    let mut client = Client::start_with(&sandbox, &["mcp", "--sync"])?;
    let (texts, error) = client.call("history_search", json!({"query": "kestrel"}))?;
    assert!(!error && texts[0].starts_with("no matches"), "{texts:?}");
    let project = sandbox.dir().join(".claude/projects/-src-app");
    std::fs::create_dir_all(&project)?;
    let line = json!({"type": "user", "uuid": "k1", "sessionId": "other-agent",
        "message": {"role": "user", "content": "name the release kestrel, 发布 🦅"}});
    std::fs::write(project.join("other-agent.jsonl"), format!("{line}\n"))?;
    // Passes are at most one a second apart, so a search soon after the last may not sync yet:
    // search until a pass has captured the new session (one is due within a second).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (texts, error) = client.call("history_search", json!({"query": "kestrel"}))?;
        assert!(!error, "{texts:?}");
        if texts[0].contains("k1#0 [other-agent #0 user]") {
            break;
        }
        assert!(texts[0].starts_with("no matches"), "{texts:?}");
        assert!(Instant::now() < deadline, "no sync pass captured the new session within 60 s: {texts:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    client.finish()
}

#[test]
fn bad_calls_are_tool_errors_and_the_server_goes_on() -> TestResult {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox)?;
    let cases = [
        ("history_get", json!({"entryId": "no-such-entry"}), "no entry \"no-such-entry\""),
        ("history_get", json!({"entryId": "t1", "block": 5}), "no block #5"),
        ("history_get", json!({"entryId": "t1", "fromLine": 3, "toLine": 2}), "fromLine 3 is after toLine 2"),
        ("history_get", json!({"entryId": "t1", "fromLine": 0}), "lines count from 1"),
        ("history_get", json!({"entryId": " "}), "entryId is empty"),
        ("history_search", json!({"query": "\"unclosed"}), "cannot parse the query"),
        ("history_search", json!({"query": "x", "session": "nope"}), "no session named \"nope\""),
        ("history_search", json!({"query": "  "}), "the query is empty"),
        ("history_search", json!({"session": "s"}), "query"),
    ];
    for (tool, arguments, expected) in cases {
        let (texts, error) = client.call(tool, arguments.clone())?;
        assert!(error, "{tool} {arguments} should fail: {texts:?}");
        assert_eq!(texts.len(), 1, "{texts:?}");
        assert!(texts[0].contains(expected) && !texts[0].contains('\n'), "{tool} {arguments}: {texts:?}");
    }
    // An unknown tool is a protocol error, not a crash.
    let answer = client.request("tools/call", json!({"name": "no_such_tool", "arguments": {}}))?;
    assert!(answer.get("error").is_some() || answer["result"]["isError"] == true, "{answer}");
    let (texts, error) = client.call("history_search", json!({"query": "ECONNRESET"}))?;
    assert!(!error && texts[0].starts_with("2 hits"), "still answering: {texts:?}");
    client.finish()
}

/// One tool call could once take the server down: a query nested 20,000 deep overflowed its
/// stack. Now it is that call's error, and the server answers the next.
#[test]
fn a_history_search_nested_thousands_deep_is_a_tool_error() -> TestResult {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox)?;
    let nested = |levels: usize| format!("{}ECONNRESET{}", "(".repeat(levels), ")".repeat(levels));
    let nots = format!("ECONNRESET {}retry", "NOT ".repeat(3_000));
    let cases = [
        (nested(20_000), "bad input: the query is 40010 bytes long, over the limit of 16384"),
        (nested(5_000), "bad input: the query nests groups and NOTs 5000 deep, over the limit of 32"),
        (nots, "bad input: the query nests groups and NOTs 3000 deep"),
    ];
    for (query, expected) in cases {
        let (texts, error) = client.call("history_search", json!({"query": query}))?;
        assert!(error, "{texts:?}");
        assert_eq!(texts.len(), 1, "{texts:?}");
        assert!(texts[0].starts_with(expected) && !texts[0].contains('\n'), "{texts:?}");
    }
    let (texts, error) = client.call("history_search", json!({"query": nested(32)}))?;
    assert!(!error && texts[0].starts_with("2 hits"), "still answering: {texts:?}");
    client.finish()
}

#[test]
fn a_missing_store_is_a_tool_error_until_one_exists() -> TestResult {
    let sandbox = Sandbox::new();
    let mut client = Client::start(&sandbox)?;
    let (texts, error) = client.call("sessions_list", json!({}))?;
    assert!(error && texts[0].contains("no store at"), "{texts:?}");
    assert!(!sandbox.db.exists(), "the server never creates a store");
    sandbox.annal(&["append", "s"], RECORDS).ok();
    let (texts, error) = client.call("history_search", json!({"query": "backoff"}))?;
    assert!(!error && texts[0].contains("a1#0"), "{texts:?}");
    // Appends by another process after the index opened are searchable at the next call.
    let more = r#"{"entryId":"a2","role":"assistant","blocks":[{"type":"text","text":"Switched to jittered backoff."}]}"#;
    sandbox.annal(&["append", "s"], more).ok();
    let (texts, _) = client.call("history_search", json!({"query": "jittered"}))?;
    assert!(texts[0].contains("a2#0 [s #3 assistant]"), "{texts:?}");
    client.finish()
}

#[test]
fn a_store_of_a_newer_format_is_unsupported_to_the_command_line_and_the_server() -> TestResult {
    const META: redb::TableDefinition<'_, &str, &[u8]> = redb::TableDefinition::new("meta");
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], RECORDS).ok();
    // What a later annal would leave behind.
    let newer = u64::from(annal_engine::FORMAT_VERSION) + 1;
    {
        let db = redb::Database::open(&sandbox.db)?;
        let txn = db.begin_write()?;
        txn.open_table(META)?.insert("format_version", newer.to_le_bytes().as_slice())?;
        txn.commit()?;
    }
    for args in [&["sessions"][..], &["append", "s"]] {
        let run = sandbox.annal(args, RECORDS);
        assert_eq!(run.code, Some(crate::support::status::UNSUPPORTED), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("upgrade annal") && run.stderr.lines().count() == 1, "{}", run.stderr);
    }
    let mut client = Client::start(&sandbox)?;
    let (texts, error) = client.call("sessions_list", json!({}))?;
    assert!(error && texts[0].starts_with("unsupported: "), "{texts:?}");
    client.finish()?;
    // The refusals lost nothing: put back this annal's version and everything reads and verifies.
    {
        let db = redb::Database::open(&sandbox.db)?;
        let txn = db.begin_write()?;
        let version = u64::from(annal_engine::FORMAT_VERSION).to_le_bytes();
        txn.open_table(META)?.insert("format_version", version.as_slice())?;
        txn.commit()?;
    }
    let shown = sandbox.annal(&["show", "s", "--json"], "").ok();
    assert!(shown.stdout.contains("ECONNRESET"), "{}", shown.stdout);
    sandbox.annal(&["verify"], "").ok();
    Ok(())
}
