//! The MCP tools: their names, input schemas and descriptions (what a model reads to decide to
//! call them), and each call checked, run against the store and answered as compact text.

use annal::error::ErrorKind;
use annal::SearchRequest;
use annal::{Budget, ProjectOptions, Role};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;

use super::render;
use super::History;

/// The most hits one search returns, whatever the model asks for.
const LIMIT_MAX: usize = 50;
/// The most sessions `sessions_list` names by default.
const SESSIONS_DEFAULT: usize = 100;

const INSTRUCTIONS: &str = "\
annal keeps every record of past agent sessions verbatim: user and assistant text, thinking, tool \
calls and tool output. When a conversation's history was compacted, its omission markers name the \
entryIds of what was left out. Use history_search to find what was said or done (\"what did we \
decide about X\", an error message, a file path), then history_get with an entryId to read the \
original in full.";

/// A record's role, as a filter.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RoleName {
    User,
    Assistant,
    Tool,
    System,
}

impl RoleName {
    fn role(self) -> Role {
        match self {
            RoleName::User => Role::User,
            RoleName::Assistant => Role::Assistant,
            RoleName::Tool => Role::Tool,
            RoleName::System => Role::System,
        }
    }
}

/// The input of `history_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SearchParams {
    /// What to find. All words must match; exact values are found as typed (ECONNRESET,
    /// src/api/client.ts, test_user_auth, v1.18.31). Also "a phrase", a OR b, -excluded.
    query: String,
    /// Only this session (a fork includes the records it inherits).
    #[serde(default)]
    session: Option<String>,
    /// Only records of this role.
    #[serde(default)]
    role: Option<RoleName>,
    /// Only calls and results of this tool (case-insensitive), e.g. Bash or Read.
    #[serde(default)]
    tool: Option<String>,
    /// Only failed tool results.
    #[serde(default)]
    errors: Option<bool>,
    /// The most hits to return (default 10, at most 50).
    #[serde(default)]
    limit: Option<u32>,
    /// Your context window (16K, 32K, 128K, 200K or 1M), with `session` set to the session you
    /// are working in: leaves out what annal's view of that session at that window still
    /// shows you whole, so the hits are what was left out of your context.
    #[serde(default)]
    unseen_window: Option<String>,
    /// What you are working on: the current turn's words (the user's ask, the task, the file).
    /// Hits near where the session discussed them, in the same session, come first; the
    /// context is not searched for itself. Give it when the query's words are ones many records
    /// share (billing ticket) and you have no identifier.
    #[serde(default)]
    context: Option<String>,
}

/// The input of `history_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetParams {
    /// The entryId to read: from a search hit (entryId#block names one block) or an omission
    /// marker of a compacted history.
    entry_id: String,
    /// Only this block of the record (from 0).
    #[serde(default)]
    block: Option<u32>,
    /// The first line of each text to return (from 1).
    #[serde(default)]
    from_line: Option<u32>,
    /// The last line of each text to return (inclusive).
    #[serde(default)]
    to_line: Option<u32>,
}

/// The input of `sessions_list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SessionsParams {
    /// The most sessions to name (default 100).
    #[serde(default)]
    limit: Option<u32>,
}

/// The server: the store's history and the tools over it.
#[derive(Clone, Debug)]
pub(crate) struct HistoryServer {
    history: History,
    tool_router: ToolRouter<HistoryServer>,
}

/// A tool error: one line the model reads; the server keeps running.
fn failure(message: impl AsRef<str>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(crate::output::one_line(message.as_ref()))])
}

/// Runs one tool's work so that a panic inside it (a bug, never an input's fault) becomes that
/// call's one-line tool error: the client gets its answer and the server goes on, where an
/// unwinding task would leave the call unanswered until the client's own timeout.
fn guarded(tool: &str, work: impl FnOnce() -> CallToolResult) -> CallToolResult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            failure(format!(
                "{}: {tool} failed inside annal (a bug; please report it): {what}",
                ErrorKind::Internal
            ))
        }
    }
}

/// One line from an error and its causes, each cause said once, after its kind (`not found:
/// no session named …`): the same kind that sets the command line's exit status.
fn error_line(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if !text.contains(&cause) {
            text = if text.is_empty() { cause } else { format!("{text}: {cause}") };
        }
    }
    format!("{}: {text}", crate::failure::kind_of(err))
}

#[tool_router]
impl HistoryServer {
    pub(crate) fn new(history: History) -> HistoryServer {
        HistoryServer { history, tool_router: Self::tool_router() }
    }

    /// Full-text search over every original of the store (user and assistant text, thinking,
    /// tool calls and output), best matches first. Ask with the exact identifiers you have (an
    /// error code, a path, a ticket id, a function name): they are found first. Without one, give
    /// the subject's words, your `session` and your `unseen_window`, so what you already see is
    /// left out and what was left out of your context comes first, and a `context` with the
    /// current turn's words, so what was said where that work was discussed comes first. Each hit is one line: its id
    /// (entryId#block, for history_get), [session, #sourceOrder, role, tool, block type, error],
    /// and a snippet with the matches in **bold**.
    #[tool(name = "history_search")]
    async fn history_search(&self, params: Parameters<SearchParams>) -> Result<CallToolResult, ErrorData> {
        let params = params.0;
        if params.query.trim().is_empty() {
            return Ok(failure("the query is empty: give words or identifiers to search for"));
        }
        let limit = params.limit.map_or(10, |n| n as usize);
        if limit == 0 {
            return Ok(failure("limit must be at least 1"));
        }
        let mut request = SearchRequest::new(params.query);
        request.session = params.session.filter(|s| !s.is_empty());
        request.role = params.role.map(RoleName::role);
        request.tool = params.tool.filter(|t| !t.is_empty());
        request.errors_only = params.errors.unwrap_or(false);
        request.context = params.context.filter(|c| !c.trim().is_empty());
        request.limit = limit.min(LIMIT_MAX);
        if let Some(label) = params.unseen_window.filter(|w| !w.is_empty()) {
            let Some(&(_, window, output)) =
                Budget::WINDOWS.iter().find(|(l, ..)| l.eq_ignore_ascii_case(&label))
            else {
                let labels: Vec<&str> = Budget::WINDOWS.iter().map(|(l, ..)| *l).collect();
                return Ok(failure(format!("unseen_window {label:?} is not one of {}", labels.join(", "))));
            };
            request.unseen = Some(ProjectOptions::new(Budget::new(window, output)));
        }
        Ok(guarded("history_search", || match self.history.search(&request) {
            Ok(found) => CallToolResult::success(vec![ContentBlock::text(render::hits(&request, &found))]),
            Err(err) => failure(error_line(&err)),
        }))
    }

    /// An original read back verbatim from the journal by its entryId (as search hits and the
    /// omission markers of a compacted history name it). The first content item describes the
    /// record and its blocks; each block's text follows, byte for byte, as one more item. Use
    /// fromLine/toLine to read part of a long text.
    #[tool(name = "history_get")]
    async fn history_get(&self, params: Parameters<GetParams>) -> Result<CallToolResult, ErrorData> {
        let params = params.0;
        let entry = params.entry_id.trim();
        if entry.is_empty() {
            return Ok(failure("entryId is empty: give an entryId, or entryId#BLOCK"));
        }
        let id = match params.block {
            Some(block) => format!("{entry}#{block}"),
            None => entry.to_owned(),
        };
        let lines = match (params.from_line, params.to_line) {
            (None, None) => None,
            (from, to) => {
                let (from, to) = (from.map_or(1, |n| n as usize), to.map_or(usize::MAX, |n| n as usize));
                if from == 0 {
                    return Ok(failure("fromLine 0: lines count from 1"));
                }
                if from > to {
                    return Ok(failure(format!("fromLine {from} is after toLine {to}")));
                }
                Some(from..=to)
            }
        };
        Ok(guarded("history_get", || match self.history.get(&id, lines) {
            Ok(original) => CallToolResult::success(
                render::original(&original).into_iter().map(ContentBlock::text).collect(),
            ),
            Err(err) => failure(error_line(&err)),
        }))
    }

    /// The sessions of the store, in name order: name, records, and for a fork its parent and
    /// fork point. Session names are what history_search's session filter takes.
    #[tool(name = "sessions_list")]
    async fn sessions_list(&self, params: Parameters<SessionsParams>) -> Result<CallToolResult, ErrorData> {
        let limit = params.0.limit.map_or(SESSIONS_DEFAULT, |n| n as usize);
        Ok(guarded("sessions_list", || match self.history.sessions() {
            Ok(sessions) => {
                CallToolResult::success(vec![ContentBlock::text(render::sessions(&sessions, limit))])
            }
            Err(err) => failure(error_line(&err)),
        }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HistoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("annal", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(result: &CallToolResult) -> String {
        let value = serde_json::to_value(result).unwrap_or_default();
        value["content"][0]["text"].as_str().unwrap_or_default().to_owned()
    }

    #[test]
    fn a_panic_inside_a_tool_is_that_calls_one_line_error() {
        let fine = guarded("history_search", || CallToolResult::success(vec![ContentBlock::text("ok")]));
        assert_eq!(fine.is_error, Some(false));
        // A panic as the snippet bug raised one: a byte index inside a multi-byte character.
        let text_with_thin_space = "linux-arm64\u{2009}0.21.5";
        let cut = std::hint::black_box(12);
        let failed = guarded("history_search", || {
            CallToolResult::success(vec![ContentBlock::text(&text_with_thin_space[cut..])])
        });
        assert_eq!(failed.is_error, Some(true));
        let line = text(&failed);
        assert!(line.starts_with("internal: history_search failed inside annal"), "{line}");
        assert!(line.contains("char boundary") && !line.contains('\n'), "{line}");
        let owned = guarded("history_get", || panic!("{} went wrong", "something"));
        assert!(text(&owned).ends_with("something went wrong"), "{}", text(&owned));
    }

    #[test]
    fn a_tool_error_begins_with_its_kind() {
        let unknown = annal::Error::Get(annal::error::GetError::UnknownEntry("e1".into()));
        let line = error_line(&anyhow::Error::new(unknown).context("cannot read the store"));
        assert_eq!(
            line,
            "not found: cannot read the store: no entry \"e1\" (ids look like ENTRY or ENTRY#BLOCK)"
        );
        let syntax = annal::Error::Search(annal::error::SearchError::EmptyQuery);
        assert!(error_line(&anyhow::Error::new(syntax)).starts_with("bad input: the query is empty"));
    }
}
