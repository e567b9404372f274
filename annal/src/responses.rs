//! Sessions kept as OpenAI Responses-API items, as the Agents SDK keeps a session: an item as a
//! record that holds the item's own text (read back verbatim) and blocks derived from it (for
//! projections and search), a session's records read back as items, and blocks or a
//! projection's messages as input items.

pub use annal_formats::{
    record_from_responses_item, record_message_blocks, responses_item_text, responses_items, session_items,
    ItemError, RESPONSES_ITEM_KEY, RESPONSES_SEAL_KEY,
};
