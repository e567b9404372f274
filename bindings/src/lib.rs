//! What the Python package (`python/src`) and the npm package's addon (`node/src`) share, so
//! the two say the same words and keep the same layout: an Agents SDK session's generations as
//! Responses items (`items.rs`), the error class of each kind and a failure's line
//! (`failure.rs`), and the checks of the arguments both take (`args.rs`). It sits on the
//! `annal` facade only, and knows neither PyO3 nor Node-API.

mod args;
mod failure;
mod items;

pub use args::{out_of_range, seconds, sharing, BudgetArgs, SearchArgs, SEARCH_LIMIT_MAX};
pub use failure::{class_of, Failure};
pub use items::{generation_name, head, read, records, Head, GENERATION_MARK};
