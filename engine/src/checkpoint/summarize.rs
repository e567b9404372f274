//! summarized-v1's summarizer: a trait embedders implement, the request it is given, and the
//! timeout around it.
//!
//! The request is the session's current view exactly as a host last sent it (the previous
//! summary rides inside it), followed by one instruction message, so a provider's prefix cache
//! serves almost all of it. A summarizer that fails, times out or returns nothing makes the
//! compaction commit `deterministic-v1` with the reason in its receipt; the caller never fails
//! because a summary did.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use crate::project::{write_messages_json, Message};
use crate::record::Role;

/// How long a summarizer may take unless it says otherwise.
pub const SUMMARIZER_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);

/// Writes a handoff summary (usually by calling a model).
pub trait Summarizer: Send + Sync + std::fmt::Debug {
    /// The summary for `request`: the text, or why there is none. Called on a thread of its own;
    /// after [`Summarizer::timeout`] the compaction stops waiting and commits without it.
    ///
    /// # Errors
    /// [`SummarizeError`] with a reason the receipt records.
    fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizeError>;

    /// How long the compaction waits for [`Summarizer::summarize`].
    fn timeout(&self) -> Duration {
        SUMMARIZER_TIMEOUT_DEFAULT
    }
}

/// Why a summarizer produced no summary.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SummarizeError(pub String);

impl SummarizeError {
    /// What kind of failure this is. A compaction never returns it (a failed summary falls
    /// back to the deterministic view); a summarizer's own caller may.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Internal
    }
}

/// What a summarizer is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRequest {
    /// The session.
    pub session: String,
    /// The summary covers sourceOrders `[0, upto)`.
    pub upto: u64,
    /// The longest summary accepted, in tokens.
    pub summary_tokens: u32,
    /// The current view, then one instruction message (role `user`).
    pub messages: Vec<Message<'static>>,
}

/// The instruction appended to the view.
pub(crate) fn instruction(summary_tokens: u32) -> String {
    format!(
        "Write a handoff summary of the conversation above for a model that will continue this work \
         without seeing it. Keep the user's goal and every constraint they stated; decisions made and \
         why; the current state of the work (files, commands, results, what passed and what failed); \
         open problems and the next steps. Quote exact values (paths, names, numbers, error messages) \
         verbatim. At most {summary_tokens} tokens. Reply with the summary only."
    )
}

impl SummaryRequest {
    /// The request for `view`'s messages.
    pub(crate) fn new(
        session: &str,
        upto: u64,
        summary_tokens: u32,
        view: Vec<Message<'static>>,
    ) -> SummaryRequest {
        let mut messages = view;
        messages.push(Message::text(Role::User, instruction(summary_tokens)));
        SummaryRequest { session: session.to_owned(), upto, summary_tokens, messages }
    }

    /// Writes the request as one JSON object:
    /// `{"session","upto","summaryTokens","messages"}`, messages in the projection format.
    ///
    /// # Errors
    /// What `out` reports.
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(b"{\"session\":")?;
        serde_json::to_writer(&mut *out, &self.session).map_err(io::Error::from)?;
        write!(out, ",\"upto\":{},\"summaryTokens\":{},\"messages\":", self.upto, self.summary_tokens)?;
        write_messages_json(out, &self.messages)?;
        out.write_all(b"}")
    }
}

/// Runs `summarizer` on a thread of its own and waits up to its timeout. `Err` is the reason
/// recorded in the receipt. A summarizer still running at the timeout is left to finish on its
/// own; its answer is dropped.
pub(crate) fn summarize_within(
    summarizer: &Arc<dyn Summarizer>,
    request: SummaryRequest,
) -> Result<String, String> {
    let timeout = summarizer.timeout();
    let (sender, receiver) = crossbeam_channel::bounded(1);
    let worker = Arc::clone(summarizer);
    let spawned = std::thread::Builder::new().name("annal-summarizer".into()).spawn(move || {
        let _ = sender.send(worker.summarize(&request));
    });
    if let Err(err) = spawned {
        return Err(format!("the summarizer could not start: {err}"));
    }
    match receiver.recv_timeout(timeout) {
        Ok(Ok(text)) if text.trim().is_empty() => Err("the summarizer returned nothing".into()),
        Ok(Ok(text)) => Ok(text.trim().to_owned()),
        Ok(Err(err)) => Err(format!("the summarizer failed: {err}")),
        Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
            Err(format!("the summarizer did not answer within {} ms", timeout.as_millis()))
        }
        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
            Err("the summarizer stopped without an answer".into())
        }
    }
}
