//! An MCP client of `annal mcp`: the real binary, newline-delimited JSON-RPC on its stdin and
//! stdout, as an agent drives it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use super::Sandbox;

pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

/// How long one answer may take (the first search builds the index).
const ANSWER: Duration = Duration::from_secs(60);

/// A running `annal mcp` and the lines it writes.
pub(crate) struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts the server on the sandbox's store and completes the handshake.
    pub(crate) fn start(sandbox: &Sandbox) -> Result<Client, Box<dyn std::error::Error>> {
        Client::start_with(sandbox, &["mcp"])
    }

    /// Starts `annal ARGS` as the server, with the sandbox as every agent's home.
    pub(crate) fn start_with(sandbox: &Sandbox, args: &[&str]) -> Result<Client, Box<dyn std::error::Error>> {
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

    pub(crate) fn send(&mut self, message: &Value) -> TestResult {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Sends a request and returns the response with its id (notifications are skipped).
    pub(crate) fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Value, Box<dyn std::error::Error>> {
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
    pub(crate) fn call(
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
    pub(crate) fn finish(mut self) -> TestResult {
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
