//! The search index through its public API, in one test binary: index folders damaged while the
//! store is closed, appends indexed as they come, an indexer started on demand, how many
//! segments indexing leaves, the order of hits in every segment layout, the ranking signals, queries nested and
//! sized to break the parser, and arbitrary Unicode text searched, highlighted and cut into lines.

mod damaged_index;
mod eager;
mod hostile_query;
mod on_demand;
mod order;
mod prefix;
mod ranking;
mod segments;
mod unicode_text;
