//! Arguments crossing from JavaScript: numbers checked as whole positions and budgets, and the
//! option objects that become open, budget and search options.

use annal::{PortableRecord, ProjectOptions, SearchRequest};
use annal_bindings::{BudgetArgs, Failure, SearchArgs};
use napi_derive::napi;

/// How a store is opened.
#[napi(object)]
#[derive(Debug, Default)]
pub struct OpenOptions {
    /// `"processes"` (default: other processes may open the file too) or `"exclusive"`.
    pub sharing: Option<String>,
    /// Open for reading only.
    pub read_only: Option<bool>,
    /// Open the search index with the store (default), so it follows every append.
    pub index_eagerly: Option<bool>,
    /// How long a search waits for the index to catch up (default 30).
    pub search_wait_seconds: Option<f64>,
}

impl OpenOptions {
    pub(crate) fn options(self) -> Result<annal::Options, Failure> {
        let sharing = annal_bindings::sharing(self.sharing.as_deref().unwrap_or("processes"))?;
        let search_wait =
            annal_bindings::seconds(self.search_wait_seconds.unwrap_or(30.0), "searchWaitSeconds")?;
        Ok(annal::Options {
            sharing,
            read_only: self.read_only.unwrap_or(false),
            index_eagerly: self.index_eagerly.unwrap_or(true),
            search_wait,
            ..annal::Options::default()
        })
    }
}

/// A token budget: the model's window, the most it may write, and optional part budgets.
#[napi(object)]
#[derive(Debug, Default)]
pub struct BudgetOptions {
    pub window: Option<f64>,
    pub max_output: Option<f64>,
    pub tail: Option<f64>,
    pub evidence: Option<f64>,
    pub history: Option<f64>,
    /// For `project`: add the view's items in the Responses-API shape as `items`.
    pub responses_items: Option<bool>,
    /// For `compact`: commit a checkpoint even when none is due.
    pub force: Option<bool>,
}

impl BudgetOptions {
    /// The options: the default part budgets for the window, each part given replacing its
    /// default.
    pub(crate) fn options(&self) -> Result<ProjectOptions, Failure> {
        let budget = BudgetArgs {
            window: whole(self.window.unwrap_or(200_000.0), "window")?,
            max_output: whole(self.max_output.unwrap_or(32_000.0), "maxOutput")?,
            tail: optional(self.tail, "tail")?,
            evidence: optional(self.evidence, "evidence")?,
            history: optional(self.history, "history")?,
        };
        Ok(budget.options())
    }
}

/// What a search is filtered by.
#[napi(object)]
#[derive(Debug, Default)]
pub struct SearchOptions {
    pub session: Option<String>,
    pub role: Option<String>,
    pub tool: Option<String>,
    pub errors_only: Option<bool>,
    pub literal: Option<bool>,
    pub limit: Option<f64>,
    pub start: Option<f64>,
    pub end: Option<f64>,
}

impl SearchOptions {
    pub(crate) fn request(self, query: String) -> Result<SearchRequest, Failure> {
        let args = SearchArgs {
            limit: whole(self.limit.unwrap_or(10.0), "limit")?,
            start: optional(self.start, "start")?,
            end: optional(self.end, "end")?,
            session: self.session,
            role: self.role,
            tool: self.tool,
            errors_only: self.errors_only.unwrap_or(false),
            literal: self.literal.unwrap_or(false),
        };
        args.request(query)
    }
}

/// A whole number given from JavaScript as the unsigned type `T` (a count, a position, a token
/// budget): a negative, fractional or too large one is bad input naming `what`.
pub(crate) fn whole<T: TryFrom<u64>>(value: f64, what: &str) -> Result<T, Failure> {
    let refused = || annal_bindings::out_of_range(what, value);
    // 2^53: past it a JavaScript number no longer holds every whole number.
    if !(0.0..=9_007_199_254_740_992.0).contains(&value) || value.fract() != 0.0 {
        return Err(refused());
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    T::try_from(value as u64).map_err(|_| refused())
}

/// [`whole`] for an optional argument.
pub(crate) fn optional<T: TryFrom<u64>>(value: Option<f64>, what: &str) -> Result<Option<T>, Failure> {
    value.map(|value| whole(value, what)).transpose()
}

/// Records given as the JSON text of each, in the portable format.
pub(crate) fn portable_records(texts: &[String]) -> Result<Vec<PortableRecord>, Failure> {
    texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            PortableRecord::parse(text).map_err(|e| Failure::bad_input(format!("record {index}: {e}")))
        })
        .collect()
}
