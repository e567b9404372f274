//! Tests over the real transcripts in the folder named by `ANNAL_CORPUS` (read-only): import of
//! every format, format detection, projections and search, imported, projected and searched
//! through the facade (`annal::Annal`) as a user would, with the parsers' own claims checked on
//! `annal_formats`. A missing corpus, folder or counted file fails the test. Built only with the
//! `corpus` feature:
//!
//! ```text
//! ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus
//! ```

#[path = "../import/detection.rs"]
mod detection;
#[path = "../projection_support/mod.rs"]
mod projection_support;
#[path = "../search_support/mod.rs"]
mod search_support;

mod aider;
mod crush;
mod detect_formats;
mod gemini;
mod import;
mod projection;
mod search;
