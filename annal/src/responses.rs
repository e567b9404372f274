//! Sessions kept as OpenAI Responses-API items, as the Agents SDK keeps a session: an item as a
//! record that holds the item's own text (read back verbatim) and blocks derived from it (for
//! projections and search), and blocks or a projection's messages back as input items.

pub use annal_formats::{
    record_from_responses_item, record_message_blocks, responses_item_text, responses_items, ItemError,
    RESPONSES_ITEM_KEY,
};
