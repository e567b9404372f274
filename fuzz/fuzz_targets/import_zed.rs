//! Fuzz target: arbitrary bytes as the JSON of a Zed agent thread (a `threads` row's `data`,
//! decompressed), through the Zed importer. A first byte below 0x20 is taken off and makes the
//! row a sub-agent's thread, so both shapes of row are driven.
//!
//! Properties: parsing never panics and is deterministic, and a thread it reads passes
//! [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{parse_zed_thread, ZedThreadRow};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (parent_id, json) = match data.split_first() {
        Some((&first, rest)) if first < 0x20 => (Some(format!("parent-{first}")), rest),
        _ => (None, data),
    };
    let row = ZedThreadRow { id: "thread-1".into(), parent_id, json: json.to_vec() };
    let parsed = parse_zed_thread(&row);
    assert_eq!(parse_zed_thread(&row), parsed, "not deterministic");
    if let Ok(session) = parsed {
        annal_fuzz::check_rows_session(session);
    }
});
