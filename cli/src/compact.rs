//! `annal compact`: commit a checkpoint of a session with its receipt, optionally with a handoff
//! summary written by an external command (summarized-v1).

use crate::failure::said;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal::error::{CompactError, SummarizeError};
use annal::{
    Algorithm, CompactOptions, CompactOutcome, CompactStatus, ProjectOptions, Summarizer, SummaryRequest,
};
use anyhow::anyhow;
use clap::Args;

use crate::output::{count, hex, plural, write_line, Out};
use crate::project::BudgetArgs;
use crate::store::StoreLocation;

// Arguments of `annal compact`.
#[derive(Debug, Args)]
pub(crate) struct CompactArgs {
    /// The session's name
    session: String,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Write a handoff summary with this shell command (summarized-v1): it gets the request as
    /// JSON on stdin ({"session","upto","summaryTokens","messages"}) and prints the summary on
    /// stdout. If it fails, times out or prints nothing, deterministic-v1 is committed instead.
    #[arg(long, value_name = "CMD")]
    summarizer_cmd: Option<String>,
    /// How long the summarizer command may run
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    summarizer_timeout: u64,
    /// Compact even when the view fits under the trigger
    #[arg(long)]
    force: bool,
    /// Wait up to this long for another compaction of the same checkpoint to finish
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    wait: u64,
    /// The outcome as one JSON object
    #[arg(long)]
    json: bool,
}

/// `compact` with its arguments checked.
#[derive(Debug)]
pub(crate) struct CompactPlan {
    session: String,
    options: CompactOptions,
    json: bool,
}

impl CompactArgs {
    /// Checks the budget and builds the summarizer; no I/O.
    pub(crate) fn resolve(self) -> anyhow::Result<CompactPlan> {
        let budget = self.budget.resolve()?;
        let timeout = Duration::from_secs(self.summarizer_timeout);
        let summarizer: Option<Arc<dyn Summarizer>> = match self.summarizer_cmd {
            Some(command) if command.trim().is_empty() => return Err(anyhow!("--summarizer-cmd is empty")),
            Some(command) => Some(Arc::new(CommandSummarizer { command, timeout })),
            None => None,
        };
        let algorithm =
            if summarizer.is_some() { Algorithm::SummarizedV1 } else { Algorithm::DeterministicV1 };
        let defaults = CompactOptions::new(ProjectOptions { budget, algorithm });
        let options = CompactOptions {
            summarizer,
            // The claim outlives the summarizer's run, so nobody takes it over while it works.
            lease: (timeout + Duration::from_secs(60)).max(defaults.lease),
            claim_wait: Duration::from_secs(self.wait),
            force: self.force,
            ..defaults
        };
        Ok(CompactPlan { session: self.session, options, json: self.json })
    }
}

/// Runs a shell command as the summarizer: the request on its stdin, the summary from its stdout.
#[derive(Debug)]
pub(crate) struct CommandSummarizer {
    command: String,
    timeout: Duration,
}

fn shell(command: &str) -> Command {
    if cfg!(windows) {
        let mut shell = Command::new("cmd");
        shell.arg("/C").arg(command);
        shell
    } else {
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(command);
        shell
    }
}

impl Summarizer for CommandSummarizer {
    fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizeError> {
        let failed = |what: String| SummarizeError(format!("`{}` {what}", self.command));
        let mut input = Vec::new();
        request.write_json(&mut input).map_err(|e| failed(format!("got no request: {e}")))?;
        let mut child = shell(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("could not start: {e}")))?;
        // Written and read on threads of their own, so a command that answers before it has read
        // everything cannot deadlock against a full pipe.
        let stdin = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(&input);
            }
        });
        let read = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
        let stderr = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(failed(format!(
                        "did not finish within {} s and was stopped",
                        self.timeout.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(failed(format!("could not be waited for: {e}"))),
            }
        };
        let _ = writer.join();
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if !status.success() {
            let why = String::from_utf8_lossy(&stderr);
            let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Err(failed(format!("failed ({status}): {why}")));
        }
        String::from_utf8(stdout).map_err(|_| failed("printed something that is not UTF-8".to_owned()))
    }

    fn timeout(&self) -> Duration {
        // The command is stopped at its own timeout; this is the engine's backstop.
        self.timeout + Duration::from_secs(5)
    }
}

/// Describes a compaction failure, naming the session and the store.
fn compact_error(location: &StoreLocation, session: &str, err: annal::Error) -> anyhow::Error {
    match err {
        annal::Error::Compact(CompactError::UnknownSession(name)) => location.unknown_session(&name),
        other => said(other.kind(), format!("cannot compact session {session:?} in {location}: {other}")),
    }
}

/// Compacts the planned session.
pub(crate) fn run(location: &StoreLocation, plan: &CompactPlan, out: &mut Out) -> anyhow::Result<()> {
    let store = location.open_existing()?;
    let outcome =
        store.compact(&plan.session, &plan.options).map_err(|e| compact_error(location, &plan.session, e))?;
    if plan.json {
        return Ok(write_line(out, &annal::json::compact_outcome(&outcome))?);
    }
    write_outcome(out, &plan.session, &plan.options, &outcome)?;
    Ok(())
}

fn write_outcome(
    out: &mut impl Write,
    session: &str,
    options: &CompactOptions,
    outcome: &CompactOutcome,
) -> std::io::Result<()> {
    let key = outcome.key.map(|k| hex(&k)[..16].to_owned()).unwrap_or_default();
    let receipt = outcome.receipt.map(|r| format!("receipt at sourceOrder {r}")).unwrap_or_default();
    let trigger = count(options.project.budget.trigger_tokens().into());
    match outcome.status {
        CompactStatus::NotNeeded => {
            return writeln!(
                out,
                "session {session:?}: nothing to compact: the view has {} tokens, within the trigger of {trigger} \
                 (--force compacts anyway)",
                count(outcome.view_tokens)
            );
        }
        CompactStatus::Reused => writeln!(
            out,
            "session {session:?}: checkpoint {key} is committed and current ({receipt}); nothing written, no \
             summarizer called"
        )?,
        CompactStatus::Reinstated => writeln!(
            out,
            "session {session:?}: checkpoint {key} was committed before; a new {receipt} makes it current again"
        )?,
        CompactStatus::Committed => writeln!(
            out,
            "session {session:?}: committed checkpoint {key} ({}, fencing token {}) covering sourceOrder 0 to {}, \
             {receipt}",
            outcome.algorithm,
            outcome.fencing_token,
            outcome.upto.saturating_sub(1)
        )?,
    }
    write_counts(out, outcome, &trigger)
}

/// The checkpoint's tokens of each kind, what it keeps and leaves out, and why another
/// algorithm than the one asked for was committed.
fn write_counts(out: &mut impl Write, outcome: &CompactOutcome, trigger: &str) -> std::io::Result<()> {
    let s = &outcome.stats;
    writeln!(
        out,
        "  the view had {} tokens (trigger {trigger}); the checkpoint holds {}: user {} · assistant {} · markers {} · \
         summary {} · evidence {} · tail {}",
        count(outcome.view_tokens),
        count(s.tokens.total),
        count(s.tokens.user),
        count(s.tokens.assistant),
        count(s.tokens.markers),
        count(s.tokens.summary),
        count(s.tokens.evidence),
        count(s.tokens.tail),
    )?;
    writeln!(
        out,
        "  kept {} · {} · {} · {}; {} named by {}",
        plural(s.kept.user_messages + s.kept.user_messages_cut, "user message"),
        plural(s.kept.assistant_outputs, "assistant output"),
        plural(s.kept.evidence_rows, "evidence row"),
        plural(s.kept.tail_records, "tail record"),
        plural(s.omitted.assistant_outputs, "omitted assistant output"),
        plural(s.omitted.markers, "marker"),
    )?;
    if let Some(reason) = &outcome.fallback_reason {
        writeln!(out, "  {} was asked for; deterministic-v1 was committed: {reason}", outcome.requested)?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use annal::Role;

    fn request() -> SummaryRequest {
        let mut json = Vec::new();
        let request = SummaryRequest {
            session: "s".into(),
            upto: 3,
            summary_tokens: 100,
            messages: vec![annal::Message {
                role: Role::User,
                blocks: vec![annal::MessageBlock::Text { text: "fix the \"ledger\"".into() }],
            }],
        };
        request.write_json(&mut json).unwrap_or_default();
        assert!(serde_json::from_slice::<serde_json::Value>(&json).is_ok());
        request
    }

    fn run(command: &str, timeout: Duration) -> Result<String, SummarizeError> {
        CommandSummarizer { command: command.into(), timeout }.summarize(&request())
    }

    #[test]
    fn the_command_reads_the_request_and_prints_the_summary() {
        let echoed = run("cat", Duration::from_secs(10)).unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&echoed).unwrap_or_default();
        assert_eq!(value["session"], "s");
        assert_eq!(value["messages"][0]["blocks"][0]["text"], "fix the \"ledger\"");
        let summary = run("cat >/dev/null; printf 'Goal: fix the ledger.'", Duration::from_secs(10));
        assert_eq!(summary, Ok("Goal: fix the ledger.".to_owned()));
    }

    #[test]
    fn failures_and_timeouts_are_reasons_not_panics() {
        let failed = run("echo 'model overloaded' >&2; exit 3", Duration::from_secs(10));
        let reason = failed.err().map(|e| e.0).unwrap_or_default();
        assert!(reason.contains("model overloaded") && reason.contains("failed"), "{reason}");
        let slow = run("sleep 5", Duration::from_millis(200));
        let reason = slow.err().map(|e| e.0).unwrap_or_default();
        assert!(reason.contains("did not finish"), "{reason}");
        let missing = run("/nonexistent/summarizer", Duration::from_secs(10));
        assert!(missing.is_err());
    }
}
