//! The arguments both bindings take and check alike: a sharing mode, seconds, a token budget, a
//! search's filters. Each binding reads its language's values into these (numbers checked as
//! whole first), so a refusal has the same words in Python and TypeScript.

use std::time::Duration;

use annal::{Budget, ProjectOptions, Role, SearchRequest, Sharing};

use crate::Failure;

/// The most hits one search returns: the index sets room aside for each hit asked for.
pub const SEARCH_LIMIT_MAX: usize = 10_000;

/// The sharing mode named `name`: `processes` (other processes may open the file too) or
/// `exclusive`.
pub fn sharing(name: &str) -> Result<Sharing, Failure> {
    match name {
        "processes" => Ok(Sharing::Processes),
        "exclusive" => Ok(Sharing::Exclusive),
        other => {
            Err(Failure::bad_input(format!("sharing {other:?}: expected \"processes\" or \"exclusive\"")))
        }
    }
}

/// A seconds value named `what` as a duration; negative, NaN or endless values are bad input.
pub fn seconds(value: f64, what: &str) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| Failure::bad_input(format!("{what} {value}: expected a number of seconds, 0 or more")))
}

/// The token budget a projection or compaction is asked for, each number already checked.
#[derive(Clone, Copy, Debug)]
pub struct BudgetArgs {
    pub window: u32,
    pub max_output: u32,
    pub tail: Option<u32>,
    pub evidence: Option<u32>,
    pub history: Option<u32>,
}

impl BudgetArgs {
    /// The options: the default part budgets for the window, each part given replacing its
    /// default.
    pub fn options(self) -> ProjectOptions {
        let mut budget = Budget::new(self.window, self.max_output);
        budget.tail_tokens = self.tail.unwrap_or(budget.tail_tokens);
        budget.evidence_tokens = self.evidence.unwrap_or(budget.evidence_tokens);
        budget.history_tokens = self.history.unwrap_or(budget.history_tokens);
        ProjectOptions::new(budget)
    }
}

/// What a search is filtered by, each number already checked as whole.
#[derive(Debug, Default)]
pub struct SearchArgs {
    pub session: Option<String>,
    pub role: Option<String>,
    pub tool: Option<String>,
    pub errors_only: bool,
    pub literal: bool,
    pub limit: usize,
    pub start: Option<u64>,
    pub end: Option<u64>,
}

impl SearchArgs {
    /// The request for `query`: an unknown role or a limit past [`SEARCH_LIMIT_MAX`] is bad
    /// input.
    pub fn request(self, query: String) -> Result<SearchRequest, Failure> {
        let role = match self.role.as_deref() {
            None => None,
            Some(name) => Some(Role::parse(name).ok_or_else(|| {
                Failure::bad_input(format!("role {name:?}: expected user, assistant, tool or system"))
            })?),
        };
        if self.limit > SEARCH_LIMIT_MAX {
            return Err(Failure::bad_input(format!("limit {}: at most {SEARCH_LIMIT_MAX} hits", self.limit)));
        }
        let mut request = SearchRequest::new(query);
        request.session = self.session;
        request.role = role;
        request.tool = self.tool;
        request.errors_only = self.errors_only;
        request.literal = self.literal;
        request.limit = self.limit;
        request.source_orders = self.start.unwrap_or(0)..self.end.unwrap_or(u64::MAX);
        Ok(request)
    }
}

/// A number named `what` that is not a whole number in range: the same words from either
/// language's number type.
pub fn out_of_range(what: &str, value: impl std::fmt::Display) -> Failure {
    Failure::bad_input(format!("{what} {value}: out of range (a whole number, 0 or more)"))
}
