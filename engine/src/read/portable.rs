//! The portable record format: one JSON object per record, used by `append` on stdin, by
//! export and by `--json` output. docs/format.md is its reference.
//!
//! Round trips are exact: JSON values inside a record (tool inputs, metadata) are stored in
//! serde_json's canonical text (sorted keys, no spaces), so parsing an export and appending it
//! reproduces the same content hashes. A tool input that is not a JSON object or array is
//! carried verbatim as `inputText`.

use base64::Engine as _;
use serde_json::{json, Map, Value};

pub use crate::canonical::canonical_json;
use crate::claim::Claim;
use crate::error::ReadError;
use crate::hash::{hash_from_hex, hash_to_hex, Hash};
use crate::read::Snapshot;
use crate::record::{Block, Record, Role};
pub use crate::time::is_rfc3339;
use crate::view::{BlockView, RecordView};

/// A record read from the portable format, with the optional fields checked at append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortableRecord {
    /// The record.
    pub record: Record,
    /// Where the source says it belongs.
    pub source_order: Option<u64>,
    /// The chain hash the source claims.
    pub hash: Option<Hash>,
    /// The previous chain hash the source claims.
    pub prev_hash: Option<Hash>,
    /// For a record without an entryId: the canonical JSON of its line, which its derived id
    /// hashes (see [`Store::append_portable`](crate::Store::append_portable)).
    pub id_seed: Option<String>,
}

impl PortableRecord {
    /// Reads one record from a line of JSON text in the portable format.
    ///
    /// # Errors
    /// [`PortableError`]: the text is not JSON, or a field is missing or malformed.
    pub fn parse(line: &str) -> Result<PortableRecord, PortableError> {
        let value: Value = serde_json::from_str(line).map_err(|e| PortableError(format!("not JSON: {e}")))?;
        record_from_json(&value)
    }

    /// The record, what it claims, and the seed of its derived id.
    pub(crate) fn into_parts(self) -> (Record, Claim, Option<String>) {
        let claim = Claim { source_order: self.source_order, hash: self.hash, prev_hash: self.prev_hash };
        (self.record, claim, self.id_seed)
    }
}

/// Why a portable record could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PortableError(pub String);

impl PortableError {
    /// What kind of failure this is: a portable record is the caller's input.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::BadInput
    }
}

fn err<T>(message: impl Into<String>) -> Result<T, PortableError> {
    Err(PortableError(message.into()))
}

/// A tool input as stored: canonical JSON text for objects and arrays, verbatim otherwise.
pub fn canonical_input(input: &str) -> String {
    canonical_input_parsed(input).0
}

/// [`canonical_input`], also handing back the parsed value (for deriving the target without
/// parsing twice). Input that is already canonical is returned as is, without a copy.
pub(crate) fn canonical_input_parsed(input: &str) -> (String, Option<Value>) {
    match serde_json::from_str::<Value>(input) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            let canonical = canonical_json(&value);
            (canonical, Some(value))
        }
        _ => (input.to_owned(), None),
    }
}

fn str_field<'v>(object: &'v Map<String, Value>, key: &str) -> Result<&'v str, PortableError> {
    match object.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => err(format!("\"{key}\" must be a string")),
        None => err(format!("missing \"{key}\"")),
    }
}

fn opt_str_field(object: &Map<String, Value>, key: &str) -> Result<String, PortableError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => err(format!("\"{key}\" must be a string")),
    }
}

fn hash_field(object: &Map<String, Value>, key: &str) -> Result<Option<Hash>, PortableError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => match hash_from_hex(s) {
            Some(hash) => Ok(Some(hash)),
            None => err(format!("\"{key}\" must be 64 hex digits")),
        },
        Some(_) => err(format!("\"{key}\" must be a string")),
    }
}

fn block_from_json(value: &Value) -> Result<Block, PortableError> {
    let Some(object) = value.as_object() else { return err("a block must be an object") };
    let kind = str_field(object, "type")?;
    Ok(match kind {
        "text" => Block::Text { text: str_field(object, "text")?.to_owned() },
        "thinking" => Block::Thinking { text: str_field(object, "text")?.to_owned() },
        "toolCall" => {
            let input = match (object.get("input"), object.get("inputText")) {
                (_, Some(Value::String(raw))) => raw.clone(),
                (_, Some(_)) => return err("\"inputText\" must be a string"),
                (Some(value), None) => canonical_json(value),
                (None, None) => "{}".to_owned(),
            };
            Block::ToolCall {
                call_id: str_field(object, "callId")?.to_owned(),
                tool: str_field(object, "tool")?.to_owned(),
                input,
                target: opt_str_field(object, "target")?,
            }
        }
        "toolResult" => Block::ToolResult {
            call_id: str_field(object, "callId")?.to_owned(),
            tool: opt_str_field(object, "tool")?,
            is_error: match object.get("isError") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return err("\"isError\" must be true or false"),
            },
            output: str_field(object, "output")?.to_owned(),
        },
        "blob" => {
            let media_type = opt_str_field(object, "mediaType")?;
            let data = base64::engine::general_purpose::STANDARD
                .decode(str_field(object, "data")?)
                .map_err(|e| PortableError(format!("\"data\" is not base64: {e}")))?;
            if let Some(hash) = hash_field(object, "hash")? {
                if blake3::hash(&data).as_bytes() != &hash {
                    return err("blob \"data\" does not match its \"hash\"");
                }
            }
            Block::Blob { media_type, data }
        }
        other => return err(format!("unknown block type {other:?}")),
    })
}

/// Reads one record in the portable format.
///
/// # Errors
/// [`PortableError`] naming the field that is missing or malformed.
pub fn record_from_json(value: &Value) -> Result<PortableRecord, PortableError> {
    let Some(object) = value.as_object() else { return err("a record must be a JSON object") };
    let role_name = str_field(object, "role")?;
    let Some(role) = Role::parse(role_name) else {
        return err(format!("unknown role {role_name:?} (user, assistant, tool or system)"));
    };
    let entry_id = opt_str_field(object, "entryId")?;
    let timestamp = match object.get("timestamp") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if is_rfc3339(s) => Some(s.clone()),
        Some(_) => return err("\"timestamp\" must be RFC 3339 text"),
    };
    let blocks = match object.get("blocks") {
        Some(Value::Array(items)) => items.iter().map(block_from_json).collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
        Some(_) => return err("\"blocks\" must be an array"),
    };
    let meta = match object.get("meta") {
        None | Some(Value::Null) => Default::default(),
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), canonical_json(v))).collect(),
        Some(_) => return err("\"meta\" must be an object"),
    };
    let source_order = match object.get("sourceOrder") {
        None | Some(Value::Null) => None,
        Some(v) => {
            Some(v.as_u64().ok_or_else(|| PortableError("\"sourceOrder\" must be a whole number".into()))?)
        }
    };
    let id_seed = entry_id.is_empty().then(|| canonical_json(value));
    Ok(PortableRecord {
        record: Record { entry_id, role, timestamp, blocks, meta },
        id_seed,
        source_order,
        hash: hash_field(object, "hash")?,
        prev_hash: hash_field(object, "prevHash")?,
    })
}

/// Writes a stored record in the portable format, loading blob payloads.
///
/// # Errors
/// As [`Snapshot::text`].
pub fn record_to_json(snapshot: &Snapshot, view: &RecordView<'_>) -> Result<Value, ReadError> {
    let mut blocks = Vec::with_capacity(view.block_count());
    for block in view.blocks() {
        blocks.push(match block {
            BlockView::Text { text } => json!({"type": "text", "text": snapshot.text(text)?}),
            BlockView::Thinking { text } => json!({"type": "thinking", "text": snapshot.text(text)?}),
            BlockView::ToolCall { call_id, tool, input, target } => {
                let input = snapshot.text(input)?;
                let mut object = Map::new();
                object.insert("type".into(), "toolCall".into());
                object.insert("callId".into(), call_id.into());
                object.insert("tool".into(), tool.into());
                match serde_json::from_str::<Value>(&input) {
                    Ok(value @ (Value::Object(_) | Value::Array(_))) if canonical_json(&value) == input => {
                        object.insert("input".into(), value);
                    }
                    _ => {
                        object.insert("inputText".into(), Value::String(input.into_owned()));
                    }
                }
                object.insert("target".into(), target.into());
                Value::Object(object)
            }
            BlockView::ToolResult { call_id, tool, is_error, output } => json!({
                "type": "toolResult", "callId": call_id, "tool": tool, "isError": is_error,
                "output": snapshot.text(output)?,
            }),
            BlockView::Blob { hash, media_type, size_bytes } => json!({
                "type": "blob", "hash": hash_to_hex(&hash), "mediaType": media_type, "bytes": size_bytes,
                "data": base64::engine::general_purpose::STANDARD.encode(snapshot.blob(&hash)?),
            }),
        });
    }
    let mut meta = Map::new();
    for (key, value) in view.meta() {
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        meta.insert(key.to_owned(), value);
    }
    let mut object = Map::new();
    object.insert("sourceOrder".into(), view.source_order().into());
    object.insert("entryId".into(), view.entry_id().into());
    object.insert("role".into(), view.role().as_str().into());
    if let Some(timestamp) = view.timestamp() {
        object.insert("timestamp".into(), timestamp.into());
    }
    object.insert("blocks".into(), Value::Array(blocks));
    object.insert("meta".into(), Value::Object(meta));
    object.insert("hash".into(), hash_to_hex(&view.hash()).into());
    object.insert("prevHash".into(), hash_to_hex(&view.prev_hash()).into());
    Ok(Value::Object(object))
}

/// An owned record in the portable format at `source_order` with its chain: what
/// [`record_to_json`] writes for the same record once stored, without a store to read it from.
pub fn portable_json(record: &Record, source_order: u64, hash: &Hash, prev_hash: &Hash) -> Value {
    let mut object = unplaced_json(record);
    object.insert("sourceOrder".into(), source_order.into());
    object.insert("hash".into(), hash_to_hex(hash).into());
    object.insert("prevHash".into(), hash_to_hex(prev_hash).into());
    Value::Object(object)
}

/// An owned record's fields in the portable format, without its place in a session and its
/// chain (`sourceOrder`, `hash`, `prevHash`): what an importer reads back as the same record
/// (`record_from_json`), and what a store that keeps the place apart keeps per record.
pub fn unplaced_json(record: &Record) -> Map<String, Value> {
    let blocks = record.blocks.iter().map(block_to_json).collect();
    let meta: Map<String, Value> = record
        .meta
        .iter()
        .map(|(key, value)| {
            let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.clone()));
            (key.clone(), value)
        })
        .collect();
    let mut object = Map::new();
    object.insert("entryId".into(), record.entry_id.as_str().into());
    object.insert("role".into(), record.role.as_str().into());
    if let Some(timestamp) = &record.timestamp {
        object.insert("timestamp".into(), timestamp.as_str().into());
    }
    object.insert("blocks".into(), Value::Array(blocks));
    object.insert("meta".into(), Value::Object(meta));
    object
}

fn block_to_json(block: &Block) -> Value {
    match block {
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Thinking { text } => json!({"type": "thinking", "text": text}),
        Block::ToolCall { call_id, tool, input, target } => {
            let mut object = Map::new();
            object.insert("type".into(), "toolCall".into());
            object.insert("callId".into(), call_id.as_str().into());
            object.insert("tool".into(), tool.as_str().into());
            match serde_json::from_str::<Value>(input) {
                Ok(value @ (Value::Object(_) | Value::Array(_))) if canonical_json(&value) == *input => {
                    object.insert("input".into(), value);
                }
                _ => {
                    object.insert("inputText".into(), Value::String(input.clone()));
                }
            }
            object.insert("target".into(), target.as_str().into());
            Value::Object(object)
        }
        Block::ToolResult { call_id, tool, is_error, output } => json!({
            "type": "toolResult", "callId": call_id, "tool": tool, "isError": is_error, "output": output,
        }),
        Block::Blob { media_type, data } => json!({
            "type": "blob", "hash": hash_to_hex(blake3::hash(data).as_bytes()), "mediaType": media_type,
            "bytes": data.len(), "data": base64::engine::general_purpose::STANDARD.encode(data),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_shapes() {
        assert!(is_rfc3339("2026-01-02T03:04:05Z"));
        assert!(is_rfc3339("2026-01-02T03:04:05.123456+02:00"));
        assert!(!is_rfc3339("2026-01-02"));
        assert!(!is_rfc3339("2026-01-02T03:04:05"));
        assert!(!is_rfc3339("yesterday at noon, roughly"));
    }

    #[test]
    fn tool_input_kept_exactly() {
        assert_eq!(canonical_input(r#"{ "b": 1, "a": [1, 2] }"#), r#"{"a":[1,2],"b":1}"#);
        assert_eq!(canonical_input("*** Begin Patch"), "*** Begin Patch");
        assert_eq!(canonical_input("\"quoted\""), "\"quoted\"");
    }
}
