//! Fuzz target: a Cursor conversation made from arbitrary bytes, through the Cursor importer.
//! Values are split on 0x1E: the first is the conversation's `composerData` value (absent when
//! empty), each other a bubble, its id before a 0x1F and its value after.
//!
//! Properties: parsing never panics and is deterministic, bad bubbles are named, and the
//! session passes [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{parse_cursor_composer, CursorComposerRow};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut values = data.split(|&b| b == 0x1e);
    let head = values.next().unwrap_or_default();
    let bubbles = values
        .map(|value| match value.iter().position(|&b| b == 0x1f) {
            Some(at) => (String::from_utf8_lossy(&value[..at]).into_owned(), value[at + 1..].to_vec()),
            None => (String::new(), value.to_vec()),
        })
        .collect();
    let row =
        CursorComposerRow { id: "c0ffee".into(), data: (!head.is_empty()).then(|| head.to_vec()), bubbles };
    let Ok((parsed, skipped)) = parse_cursor_composer(&row) else { return };
    assert_eq!(parse_cursor_composer(&row), Ok((parsed.clone(), skipped.clone())), "not deterministic");
    assert!(skipped.iter().all(|line| line.starts_with("bubble ")), "{skipped:?}");
    annal_fuzz::check_rows_session(parsed);
});
