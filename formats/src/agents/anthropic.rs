//! Anthropic Messages API content parts as blocks: the `message.content` of Claude Code's lines
//! and the `content` of Cline's and Roo Code's history elements, one reader for both.
//!
//! `text` and `thinking` parts become text and thinking blocks, `tool_use` a tool call (its
//! `input` as JSON text), `tool_result` a tool result followed by a blob per base64 image in it,
//! `image` and `document` parts with a base64 source blobs. What a part has beyond its block (a
//! signature, a cache control, a document's title) stays with the part, kept in
//! `Content::extra` by its index; a part of no known kind stays whole there.

use serde_json::{Map, Value};

use super::session::{str_of, take_base64_source, take_str, text_of};
use annal_engine::{canonical_input, canonical_json, Block};

/// Which agent wrote the parts: the readers differ at the edges, and each keeps reading its
/// files into the records it always has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Claude Code: server tools too (`server_tool_use`, `*_tool_result`, and an error result
    /// whose content is an object of a type ending in `_error`); a tool input given as a string
    /// is kept verbatim.
    ClaudeCode,
    /// Cline and Roo Code: Roo's `reasoning` parts (thinking in `text`); a tool input given as a
    /// string of JSON is made canonical.
    Cline,
    /// Cursor's agent transcripts: calls carry no id (the call id is left empty) and a tool
    /// input given as a string (a patch) is kept verbatim.
    Cursor,
}

/// A message's content parts read as blocks.
#[derive(Debug)]
pub(super) struct Content {
    pub(super) blocks: Vec<Block>,
    /// Part index → the part's fields that no block holds.
    pub(super) extra: Map<String, Value>,
    /// Every part is a `tool_result` (and there is at least one): the message is a tool's.
    pub(super) only_results: bool,
}

/// The blocks of a message's content parts, in order.
pub(super) fn content_blocks(parts: Vec<Value>, dialect: Dialect) -> Content {
    let mut content = Content { blocks: Vec::new(), extra: Map::new(), only_results: !parts.is_empty() };
    for (index, part) in parts.into_iter().enumerate() {
        let Value::Object(mut part) = part else {
            content.only_results = false;
            content.extra.insert(index.to_string(), part);
            continue;
        };
        let kind = str_of(&part, "type").unwrap_or_default().to_owned();
        content.only_results &= kind == "tool_result";
        let consumed = part_blocks(&mut part, &kind, dialect, &mut content.blocks);
        // The block says what the part was for the five plain kinds; otherwise the type stays.
        if consumed && matches!(kind.as_str(), "text" | "thinking" | "tool_use" | "tool_result" | "image") {
            part.remove("type");
        }
        if !part.is_empty() {
            content.extra.insert(index.to_string(), Value::Object(part));
        }
    }
    content
}

/// Reads one part of kind `kind` into `blocks`, taking out of `part` what the blocks hold;
/// whether it became blocks (otherwise the part is left as it came).
fn part_blocks(part: &mut Map<String, Value>, kind: &str, dialect: Dialect, blocks: &mut Vec<Block>) -> bool {
    let server_tools = dialect == Dialect::ClaudeCode;
    let block = match kind {
        "text" => take_str(part, "text").map(|text| Block::Text { text }),
        "thinking" => take_str(part, "thinking").map(|text| Block::Thinking { text }),
        "reasoning" if dialect == Dialect::Cline => {
            take_str(part, "text").map(|text| Block::Thinking { text })
        }
        "tool_use" => tool_use(part, dialect),
        "server_tool_use" if server_tools => tool_use(part, dialect),
        "image" | "document" => {
            part.get_mut("source").and_then(Value::as_object_mut).and_then(take_base64_source)
        }
        "tool_result" => return tool_result(part, dialect, blocks),
        _ if server_tools && kind.ends_with("_tool_result") => return tool_result(part, dialect, blocks),
        _ => None,
    };
    let taken = block.is_some();
    blocks.extend(block);
    taken
}

fn tool_use(part: &mut Map<String, Value>, dialect: Dialect) -> Option<Block> {
    let call_id = match take_str(part, "id") {
        Some(id) => id,
        None if dialect == Dialect::Cursor => String::new(),
        None => return None,
    };
    let Some(tool) = take_str(part, "name") else {
        if !call_id.is_empty() {
            part.insert("id".into(), Value::String(call_id));
        }
        return None;
    };
    // Tools take a JSON object; keep whatever came, canonical when it is JSON structure.
    let input = match (part.remove("input"), dialect) {
        (None, _) => "{}".to_owned(),
        (Some(Value::String(text)), Dialect::Cline) => canonical_input(&text),
        (Some(input), _) => text_of(&input),
    };
    Some(Block::ToolCall { call_id, tool, input, target: String::new() })
}

/// A `tool_result` (or a server tool's `*_tool_result`) into `blocks`, then a blob per base64
/// image in it; the content's shape stays in the part. Whether the part had a call id.
fn tool_result(part: &mut Map<String, Value>, dialect: Dialect, blocks: &mut Vec<Block>) -> bool {
    let Some(call_id) = take_str(part, "tool_use_id") else { return false };
    let mut is_error = part.get("is_error").and_then(Value::as_bool);
    if is_error.is_some() {
        part.remove("is_error");
    }
    let mut images = Vec::new();
    let output = match part.remove("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text,
        Some(Value::Array(items)) => {
            let (output, shape) = result_items(items, &mut images);
            part.insert("content".into(), Value::Array(shape));
            output
        }
        Some(other) => {
            // A server tool's error result is an object whose type ends in `_error`.
            let typed = other.get("type").and_then(Value::as_str);
            if dialect == Dialect::ClaudeCode && typed.is_some_and(|t| t.ends_with("_error")) {
                is_error = Some(true);
            }
            canonical_json(&other)
        }
    };
    blocks.push(Block::ToolResult {
        call_id,
        tool: String::new(),
        is_error: is_error.unwrap_or(false),
        output,
    });
    blocks.append(&mut images);
    true
}

/// A result's content items: their text parts joined as the output, their base64 images as
/// blobs into `images`, and what stays of each item (its type, an image's media type), in
/// order, so the shape of the content survives.
fn result_items(items: Vec<Value>, images: &mut Vec<Block>) -> (String, Vec<Value>) {
    let mut texts = Vec::new();
    let mut shape = Vec::with_capacity(items.len());
    for mut item in items {
        if let Value::Object(item) = &mut item {
            match str_of(item, "type") {
                Some("text") => texts.extend(take_str(item, "text")),
                Some("image") => images.extend(
                    item.get_mut("source").and_then(Value::as_object_mut).and_then(take_base64_source),
                ),
                _ => {}
            }
        }
        shape.push(item);
    }
    (texts.join("\n"), shape)
}
