//! Getting agents' sessions in: every transcript format told from every other (by the
//! importers, and by `annal::Annal::import`), and `annal sync` through the facade over the files
//! and the SQLite databases each agent writes.

mod detect_formats;
mod detection;
mod source_cases;
mod sync_agents;
mod sync_cursor;
mod sync_databases;
mod sync_each_database;
mod sync_each_source;
mod sync_kimi;
mod sync_kiro;
mod sync_sources;
