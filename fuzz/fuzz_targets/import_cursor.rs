//! Fuzz target: a Cursor conversation made from arbitrary bytes, through the Cursor importers.
//! Values are split on 0x1E: the first is the conversation's `composerData` value (absent when
//! empty), each other a bubble, its id before a 0x1F and its value after. The same pieces go
//! through the CLI's reader as a chat's blobs, and the whole input as a root blob.
//!
//! Properties: parsing never panics and is deterministic, bad bubbles are named, and the
//! session passes [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{cursor_cli_children, parse_cursor_cli_chat, parse_cursor_composer, CursorComposerRow};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut values = data.split(|&b| b == 0x1e);
    let head = values.next().unwrap_or_default();
    let bubbles = values
        .map(|value| match value.iter().position(|&b| b == 0x1f) {
            Some(at) => (String::from_utf8_lossy(&value[..at]).into_owned(), value[at + 1..].to_vec()),
            None => (String::new(), value.to_vec()),
        })
        .collect::<Vec<_>>();
    let children = cursor_cli_children(data);
    assert!(children.iter().all(|id| id.len() == 64), "{children:?}");
    let (chat, _) = parse_cursor_cli_chat("a1", serde_json::Map::new(), &bubbles);
    annal_fuzz::check_rows_session(chat);
    let row =
        CursorComposerRow { id: "c0ffee".into(), data: (!head.is_empty()).then(|| head.to_vec()), bubbles };
    let Ok((parsed, skipped)) = parse_cursor_composer(&row) else { return };
    assert_eq!(parse_cursor_composer(&row), Ok((parsed.clone(), skipped.clone())), "not deterministic");
    assert!(skipped.iter().all(|line| line.starts_with("bubble ")), "{skipped:?}");
    annal_fuzz::check_rows_session(parsed);
});
