//! Fuzz target: arbitrary bytes as the value of a Kiro CLI conversation row, through the Kiro
//! importer.
//!
//! Properties: parsing never panics and is deterministic, and a session it reads passes
//! [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{parse_kiro_conversation, KiroConversationRow};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let row =
        KiroConversationRow { key: "/src".into(), conversation_id: "conv-1".into(), value: data.to_vec() };
    let parsed = parse_kiro_conversation(&row);
    assert_eq!(parse_kiro_conversation(&row), parsed, "not deterministic");
    if let Ok(session) = parsed {
        annal_fuzz::check_rows_session(session);
    }
});
