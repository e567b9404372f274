//! Sessions kept as OpenAI Responses-API items, as the Agents SDK keeps a session: an item as a
//! record that holds the item's own text (read back verbatim) and blocks derived from it (for
//! projections and search), a session's records read back as items, and a projection's
//! messages as input items. Items travel as JSON text, so no JSON library's type is in the API.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! use annal::responses::{record_from_responses_item, session_items};
//! let annal = annal::Annal::open(dir.path().join("s.redb"))?;
//! let item = r#"{"role":"user","content":"fix the flaky test"}"#;
//! annal.append("s", Some(0), vec![record_from_responses_item("i1", item)?])?;
//! let items = session_items(&annal.snapshot()?, "s", 0..u64::MAX)?;
//! assert_eq!(items, vec![(0, item.to_owned())]);
//! # Ok(()) }
//! ```

use annal_engine::Projection;

pub use annal_formats::{
    record_from_responses_item, session_items, ItemError, RESPONSES_ITEM_KEY, RESPONSES_SEAL_KEY,
};

/// A projection's messages as Responses input items, each the text of one JSON object:
/// consecutive texts as one `{"role", "content"}` message, each call a `function_call`, each
/// result a `function_call_output`. Reasoning is left out (the API takes reasoning back only by
/// the ids it issued), and a binary block is named in a text.
pub fn projection_items(projection: &Projection<'_>) -> Vec<String> {
    let messages = projection.messages.iter();
    messages
        .flat_map(|message| annal_formats::responses_items(message.role, &message.blocks))
        .map(|item| item.to_string())
        .collect()
}
