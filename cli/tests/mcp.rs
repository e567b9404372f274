//! `annal mcp` driven as an MCP client drives it: the real binary, newline-delimited JSON-RPC on
//! its stdin and stdout (initialize, notifications/initialized, tools/list, tools/call). Each
//! tool answers compact text with ids the others take; bad calls are tool errors and the server
//! keeps answering. With the `corpus` feature, the end-to-end check: a real transcript imported,
//! projected at a small window, and an omitted record named by a marker read back through the
//! server byte for byte.
//!
//! Run the corpus test: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-cli --features corpus --test mcp`

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};
use support::Sandbox;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// How long one answer may take (the first search builds the index).
const ANSWER: Duration = Duration::from_secs(60);

const RECORDS: &str = r#"{"entryId":"u1","role":"user","blocks":[{"type":"text","text":"Why does the client fail with ECONNRESET?"}]}
{"entryId":"a1","role":"assistant","blocks":[{"type":"text","text":"We decided to retry with backoff."},{"type":"toolCall","callId":"c1","tool":"Read","input":{"file_path":"src/api/client.ts"}}]}
{"entryId":"t1","role":"tool","blocks":[{"type":"toolResult","callId":"c1","tool":"Read","isError":true,"output":"line one\nError: read ECONNRESET\nline three\n"}]}
"#;

/// A running `annal mcp` and the lines it writes.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts the server on the sandbox's store and completes the handshake.
    fn start(sandbox: &Sandbox) -> Result<Client, Box<dyn std::error::Error>> {
        Client::start_with(sandbox, &["mcp"])
    }

    /// Starts `annal ARGS` as the server, with the sandbox as every agent's home.
    fn start_with(sandbox: &Sandbox, args: &[&str]) -> Result<Client, Box<dyn std::error::Error>> {
        let mut command = sandbox.command(args);
        for name in
            ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "GOOSE_PATH_ROOT", "XDG_CONFIG_HOME"]
        {
            command.env_remove(name);
        }
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut client = Client { child, stdin, lines, next_id: 1 };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "annal-tests", "version": "1"}
            }),
        )?;
        assert_eq!(init["result"]["serverInfo"]["name"], "annal", "{init}");
        assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(client)
    }

    fn send(&mut self, message: &Value) -> TestResult {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Sends a request and returns the response with its id (notifications are skipped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Box<dyn std::error::Error>> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let line = self.lines.recv_timeout(ANSWER).map_err(|_| format!("no answer to {method}"))?;
            let message: Value =
                serde_json::from_str(&line).map_err(|e| format!("not JSON ({e}): {line}"))?;
            if message["id"] == id {
                return Ok(message);
            }
        }
    }

    /// Calls a tool; returns its content texts and whether it is a tool error.
    fn call(
        &mut self,
        tool: &str,
        arguments: Value,
    ) -> Result<(Vec<String>, bool), Box<dyn std::error::Error>> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let result = answer.get("result").ok_or_else(|| format!("{tool}: no result: {answer}"))?;
        let texts = result["content"]
            .as_array()
            .ok_or_else(|| format!("{tool}: no content: {answer}"))?
            .iter()
            .map(|item| item["text"].as_str().map(str::to_owned).ok_or("an item without text"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((texts, result["isError"] == true))
    }

    /// Closes stdin and waits for the server to exit successfully.
    fn finish(mut self) -> TestResult {
        drop(self.stdin.take());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait()? {
                assert!(status.success(), "the server exited with {status}");
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        Err("the server did not exit after stdin closed".into())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

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
    // Passes are at most one a second apart.
    std::thread::sleep(Duration::from_millis(1100));
    let (texts, error) = client.call("history_search", json!({"query": "kestrel"}))?;
    assert!(!error, "{texts:?}");
    assert!(texts[0].contains("k1#0 [other-agent #0 user]"), "{texts:?}");
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

#[cfg(feature = "corpus")]
mod corpus {
    use super::*;

    /// A real Claude Code session (53 records) with assistant text a small window omits.
    const TRANSCRIPT: &str =
        "claude-code-jsonl/d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
    const SESSION: &str = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7";

    /// The entryIds an omission marker names: `entry <id>,` or `entry <id> (sourceOrder n)`.
    fn marker_entries(text: &str) -> Vec<String> {
        let mut ids = Vec::new();
        for marker in text.split("[omitted / not summarised: ").skip(1) {
            let marker = marker.split(']').next().unwrap_or_default();
            for part in marker.split("entry ").skip(1) {
                if let Some(id) = part.split([',', ' ']).next().filter(|id| !id.is_empty()) {
                    ids.push(id.to_owned());
                }
            }
        }
        ids
    }

    #[test]
    fn an_omitted_record_named_by_a_marker_comes_back_byte_for_byte() -> TestResult {
        let root = std::env::var_os("ANNAL_CORPUS").ok_or("set ANNAL_CORPUS to the corpus folder")?;
        let transcript = std::path::PathBuf::from(root).join(TRANSCRIPT);
        assert!(transcript.is_file(), "the corpus has no {TRANSCRIPT}");
        let sandbox = Sandbox::new();
        let path = transcript.to_str().ok_or("the corpus path is not UTF-8")?;
        sandbox.annal(&["import", path], "").ok();
        let args = ["project", SESSION, "--window", "8000", "--max-output", "1000", "--json"];
        let projection: Value = serde_json::from_str(&sandbox.annal(&args, "").ok().stdout)?;
        assert!(projection["stats"]["omitted"]["markers"].as_u64() > Some(0), "{}", projection["stats"]);
        let texts: Vec<&str> = projection["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["blocks"].as_array().into_iter().flatten())
            .filter_map(|b| b["text"].as_str())
            .collect();
        let ids = marker_entries(&texts.concat());
        assert!(!ids.is_empty(), "no omission marker in the projection");

        let mut client = Client::start(&sandbox)?;
        let (listed, _) = client.call("sessions_list", json!({}))?;
        assert!(listed[0].contains(&format!("{SESSION} · 53 records")), "{listed:?}");
        let (found, error) = client.call("history_search", json!({"query": "claude", "session": SESSION}))?;
        assert!(!error && found[0].contains(&format!(" [{SESSION} #")), "{found:?}");

        // The transcript's own text of each line, by its uuid (the entryId of its record).
        let source = std::fs::read_to_string(&transcript)?;
        let mut written = std::collections::HashMap::<String, Vec<String>>::new();
        for line in source.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
            let Some(uuid) = line["uuid"].as_str() else { continue };
            let texts = match &line["message"]["content"] {
                Value::String(text) => vec![text.clone()],
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().or(p["thinking"].as_str()))
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            written.insert(uuid.to_owned(), texts);
        }

        let store = annal_engine::Store::open(&sandbox.db, annal_engine::StoreOptions::default())?;
        let mut against_file = 0;
        for id in &ids {
            let (items, error) = client.call("history_get", json!({"entryId": id}))?;
            assert!(!error, "{id}: {items:?}");
            assert!(items[0].starts_with(&format!("entry {id} · session {SESSION}")), "{items:?}");
            // The originals as the journal holds them, read through the engine alone.
            let snapshot = store.snapshot()?;
            let (_, guard) = snapshot.record_by_entry(id)?;
            let record = snapshot.to_record(&guard.view()?)?;
            let originals: Vec<&str> = record
                .blocks
                .iter()
                .map(|block| match block {
                    annal_engine::Block::Text { text } | annal_engine::Block::Thinking { text } => {
                        text.as_str()
                    }
                    annal_engine::Block::ToolCall { input, .. } => input.as_str(),
                    annal_engine::Block::ToolResult { output, .. } => output.as_str(),
                    annal_engine::Block::Blob { .. } => "",
                })
                .collect();
            assert_eq!(items.len(), originals.len() + 1, "{id}: {items:?}");
            for (got, original) in items[1..].iter().zip(&originals) {
                assert_eq!(got.as_bytes(), original.as_bytes(), "{id}");
            }
            assert!(originals.iter().any(|text| !text.is_empty()), "{id} has text");
            // And the text blocks are what the transcript file itself says, byte for byte.
            let in_file =
                written.get(id.as_str()).ok_or_else(|| format!("{id} is not a line of the transcript"))?;
            for (got, block) in items[1..].iter().zip(&record.blocks) {
                if matches!(block, annal_engine::Block::Text { .. }) {
                    assert!(in_file.iter().any(|text| text == got), "{id}: {got:?} is not in the transcript");
                    against_file += 1;
                }
            }
        }
        assert!(against_file > 0, "no text block was compared with the transcript");
        drop(store);
        client.finish()
    }

    #[test]
    fn markers_are_parsed_as_projections_write_them() {
        let run = "[omitted / not summarised: 2 entries, from entry a-1 (sourceOrder 16) to entry b-2 \
                   (sourceOrder 21), ~290 tokens]";
        let one = "x [omitted / not summarised: entry c-3, sourceOrder 4, ~12 tokens] y";
        assert_eq!(marker_entries(&format!("{run}{one}")), ["a-1", "b-2", "c-3"]);
    }
}
