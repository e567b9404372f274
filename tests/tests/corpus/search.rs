//! For each real transcript in the folder named by `ANNAL_CORPUS`, imported and searched through
//! the facade as a user does (`annal::Annal::import_file`, `search`, `get`): identifiers taken
//! from its own records (paths, flags, ids, versions, snake_case names, URLs) are found in the
//! top 5 hits for their session, and the hit's original holds the identifier; the index then
//! holds exactly the journal's blocks. A missing corpus or format
//! folder, or a transcript with no identifier checked, fails the test.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- search::`
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::error::Error;

use crate::search_support::*;
use annal::{Annal, SearchRequest};
use annal_formats::parse_transcript;
use annal_support::corpus::{corpus_root, format_files, FormatFile};
use annal_support::identifiers::{identifiers, readable, searchable_texts};

/// Identifiers checked per session, spread over it.
const PER_SESSION: usize = 12;

#[test]
fn identifiers_from_each_transcript_are_found_in_the_top_5_of_their_session() -> Result<(), Box<dyn Error>> {
    let mut checked = 0;
    for FormatFile { name, path, format } in format_files(&corpus_root()?)? {
        let checked_before = checked;
        let stem = path.file_stem().and_then(|n| n.to_str()).unwrap_or("session").to_owned();
        let parsed = parse_transcript(&std::fs::read(&path)?, format, &stem);
        let dir = tempfile::tempdir()?;
        let annal = Annal::open(dir.path().join("corpus.redb"))?;
        let summary = annal.import_file(&path, Some(format))?;
        assert!(summary.failed.is_empty(), "{name}: sessions not stored: {:?}", summary.failed);
        assert_eq!(summary.records_new as usize, parsed.record_count(), "{name}: records imported");
        for session in &parsed.sessions {
            let mut candidates = Vec::new();
            for record in &session.records {
                for text in searchable_texts(record) {
                    let text = readable(text);
                    candidates.extend(identifiers(&text).into_iter().map(str::to_owned));
                }
            }
            let mut seen = BTreeSet::new();
            candidates.retain(|c| seen.insert(c.to_lowercase()));
            let step = (candidates.len() / PER_SESSION).max(1);
            for wanted in candidates.iter().step_by(step).take(PER_SESSION) {
                let mut request = SearchRequest::new(wanted.clone());
                request.session = Some(session.name.clone());
                request.limit = 5;
                let hits = annal.search(&request).map_err(|e| format!("{name}: {wanted:?}: {e}"))?;
                let holds = hits.iter().any(|hit| {
                    annal.get(&hit.id(), None).is_ok_and(|original| {
                        original
                            .blocks
                            .iter()
                            .filter_map(|b| b.text.as_deref())
                            .any(|text| text.to_lowercase().contains(&wanted.to_lowercase()))
                    })
                });
                let found: Vec<String> = hits.iter().map(|h| h.id()).collect();
                assert!(
                    holds,
                    "{name}, session {}: {wanted:?} is not in the top 5 ({found:?})",
                    session.name
                );
                checked += 1;
            }
        }
        assert_closed_index_equals_journal(annal);
        assert!(checked > checked_before, "{name}: no identifier was checked");
    }
    eprintln!("{checked} identifiers found");
    assert!(checked > 0, "no identifiers were checked");
    Ok(())
}
