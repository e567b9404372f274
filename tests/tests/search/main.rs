//! Search: queries, filters and originals read back through the facade (`annal::Annal`), as a
//! user searches; the index against the journal under random workloads, and several real
//! processes sharing one index, on the inner crates' `Store` and `SearchIndex`.

#[path = "../search_support/mod.rs"]
mod search_support;

mod api;
mod model;
mod processes;
