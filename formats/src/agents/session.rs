//! Shared building blocks of the importers: collecting a session's records (derived entryIds,
//! duplicate ids, tool-name pairing) and turning source values into blocks and metadata.

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::ParsedSession;
use annal_engine::Hash;
use annal_engine::{canonical_json, is_rfc3339};
use annal_engine::{Block, Record, Role};

/// The longest source id used as an entryId as is (the store's default limit); a longer one is
/// replaced by a derived id so the record still appends.
const ENTRY_ID_MAX: usize = 512;
/// The longest source session id used as a session name (the store's default limit).
const SESSION_NAME_MAX: usize = 1024;
/// The most blocks in one record (the store's default limit). A source message with more is
/// split into parts rather than refused with the rest of its session.
const BLOCKS_MAX: usize = 10_000;
/// The deepest JSON value `meta` keeps as structure. An export line nests a `meta` value two
/// levels down, and lines deeper than serde_json's recursion limit (128) cannot be read back, so
/// a deeper value is kept as its JSON text inside a JSON string: nothing is lost, and the record
/// still round-trips through an export.
const META_NESTING_MAX: usize = 120;

/// Collects one session's records in source order.
#[derive(Debug)]
pub(super) struct SessionBuilder {
    /// Prefix of derived entryIds: `<prefix>:<session>:<line>`.
    prefix: &'static str,
    /// `(line, record)`; an empty entryId is derived in `finish`, once the name is known.
    records: Vec<(usize, Record)>,
    claimed: Vec<Option<(Hash, Hash)>>,
    /// call id → tool name, of every call seen so far.
    calls: HashMap<String, String>,
    /// Fill an empty `ToolResult::tool` from the call it answers, and give a record whose source
    /// id repeats with different content a derived id. Off for annal exports, whose records
    /// must stay exactly as exported (their hashes claim that content).
    normalize: bool,
}

impl SessionBuilder {
    pub(super) fn new(prefix: &'static str, normalize: bool) -> SessionBuilder {
        SessionBuilder { prefix, records: Vec::new(), claimed: Vec::new(), calls: HashMap::new(), normalize }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds a record read from `line`. Leave `entry_id` empty to have one derived.
    pub(super) fn push(&mut self, line: usize, mut record: Record, claimed: Option<(Hash, Hash)>) {
        if self.normalize {
            for block in &mut record.blocks {
                match block {
                    Block::ToolCall { call_id, tool, .. } => {
                        self.calls.insert(call_id.clone(), tool.clone());
                    }
                    Block::ToolResult { call_id, tool, .. } if tool.is_empty() => {
                        if let Some(name) = self.calls.get(call_id.as_str()) {
                            tool.clone_from(name);
                        }
                    }
                    _ => {}
                }
            }
        }
        self.records.push((line, record));
        self.claimed.push(claimed);
    }

    /// The session, with derived ids filled in and `extra_meta` added to every record.
    ///
    /// A source id that repeats with different content (a copied line edited later, say) would
    /// make the append fail as a mismatch, so the later record gets its derived id instead.
    pub(super) fn finish(
        self,
        name: String,
        parent: Option<String>,
        fork_at: Option<u64>,
        extra_meta: &[(&str, String)],
    ) -> ParsedSession {
        // A name the store would refuse (too long, control characters) would fail the whole
        // session; every source's names map to one it accepts, the same way every time.
        let name = if usable_name(&name) {
            name
        } else {
            fit(&name.replace(char::is_control, "\u{fffd}"), SESSION_NAME_MAX)
        };
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut records = Vec::with_capacity(self.records.len());
        let mut claimed = Vec::with_capacity(self.claimed.len());
        for ((line, mut record), claim) in self.records.into_iter().zip(self.claimed) {
            for (key, value) in extra_meta {
                record.meta.insert((*key).to_owned(), value.clone());
            }
            // A long session name would make derived ids longer than the store accepts.
            let derived = fit(&format!("{}:{}:{}", self.prefix, name, line), ENTRY_ID_MAX);
            if record.entry_id.is_empty() {
                record.entry_id.clone_from(&derived);
            } else if self.normalize && record.entry_id.len() > ENTRY_ID_MAX {
                // An id built from a source id (OpenCode's `<message id>/result`) can outgrow it.
                record.entry_id = fit(&record.entry_id, ENTRY_ID_MAX);
            }
            if let Some(&first) = seen.get(&record.entry_id) {
                let same = records.get(first).is_some_and(|earlier: &Record| earlier == &record);
                if !same && self.normalize {
                    let mut candidate = derived.clone();
                    let mut n = 1;
                    while seen.contains_key(&candidate) {
                        n += 1;
                        candidate = fit(&format!("{derived}#{n}"), ENTRY_ID_MAX);
                    }
                    record.entry_id = candidate;
                }
            }
            let parts = if self.normalize && record.blocks.len() > BLOCKS_MAX {
                split_blocks(&mut record)
            } else {
                Vec::new()
            };
            seen.entry(record.entry_id.clone()).or_insert(records.len());
            records.push(record);
            claimed.push(claim);
            for part in parts {
                seen.entry(part.entry_id.clone()).or_insert(records.len());
                records.push(part);
                claimed.push(None);
            }
        }
        ParsedSession { name, parent, fork_at, records, claimed_hashes: claimed }
    }
}

/// Cuts `record` to [`BLOCKS_MAX`] blocks and returns the rest as records of their own, in order:
/// `<id>/part-2`, `<id>/part-3`, …, each naming the record it continues in `meta["partOf"]`.
fn split_blocks(record: &mut Record) -> Vec<Record> {
    let rest = record.blocks.split_off(BLOCKS_MAX);
    let part_of = canonical_json(&Value::String(record.entry_id.clone()));
    rest.chunks(BLOCKS_MAX)
        .enumerate()
        .map(|(index, blocks)| Record {
            entry_id: fit(&format!("{}/part-{}", record.entry_id, index + 2), ENTRY_ID_MAX),
            role: record.role,
            timestamp: record.timestamp.clone(),
            blocks: blocks.to_vec(),
            meta: BTreeMap::from([("partOf".to_owned(), part_of.clone())]),
        })
        .collect()
}

/// `text` if it is at most `max` bytes, else its first bytes, `~` and 16 hex digits of its blake3
/// hash, `max` bytes at most: distinct long ids stay distinct, and the same id always maps to the
/// same result (so a re-import still finds what it stored).
fn fit(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let hash = blake3::hash(text.as_bytes()).to_hex();
    let mut cut = max.saturating_sub(17);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}~{}", &text[..cut], &hash.as_str()[..16])
}

/// Whether a source id can serve as an entryId.
pub(super) fn usable_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= ENTRY_ID_MAX
}

/// Whether a source session id can serve as a session name.
pub(super) fn usable_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= SESSION_NAME_MAX && !name.chars().any(char::is_control)
}

/// A string field, if it is one.
pub(super) fn str_of<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// Removes a string field and returns it; any other value stays in place.
pub(super) fn take_str(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.remove(key) {
        Some(Value::String(text)) => Some(text),
        Some(other) => {
            map.insert(key.to_owned(), other);
            None
        }
        None => None,
    }
}

/// Removes an RFC 3339 timestamp field and returns it; anything else stays for `meta`.
pub(super) fn take_timestamp(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(text)) if is_rfc3339(text) => take_str(map, key),
        _ => None,
    }
}

/// The object of a JSON line, for its record: the line's `timestamp` taken into `record`. A
/// line of valid JSON that is no object is kept whole in `meta["value"]` (nothing is dropped)
/// and `None` returned, the record complete.
pub(super) fn line_object(value: Value, record: &mut Record) -> Option<Map<String, Value>> {
    let Value::Object(mut map) = value else {
        put(&mut record.meta, "value", &value);
        return None;
    };
    record.timestamp = take_timestamp(&mut map, "timestamp");
    Some(map)
}

/// Stores a value in `meta` as canonical JSON text (see [`META_NESTING_MAX`] for deep values).
pub(super) fn put(meta: &mut BTreeMap<String, String>, key: &str, value: &Value) {
    meta.insert(key.to_owned(), meta_text(value));
}

/// Stores `fields` in `meta` under `key` (as [`put`] does) unless there are none: what an
/// importer's blocks left of a message's parts.
pub(super) fn put_nonempty(meta: &mut BTreeMap<String, String>, key: &str, fields: Map<String, Value>) {
    if !fields.is_empty() {
        put(meta, key, &Value::Object(fields));
    }
}

/// Stores every remaining field of `map` in `meta` under its own key.
pub(super) fn put_all(meta: &mut BTreeMap<String, String>, map: Map<String, Value>) {
    for (key, value) in map {
        meta.insert(key, meta_text(&value));
    }
}

fn meta_text(value: &Value) -> String {
    if nesting(value) > META_NESTING_MAX {
        canonical_json(&Value::String(canonical_json(value)))
    } else {
        canonical_json(value)
    }
}

/// How many arrays and objects deep `value` goes. Values come from serde_json, which stops at
/// 128 levels, so the recursion is bounded.
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// Takes the array under `key` out of `map`; anything else under it stays (for `meta`) and an
/// empty list is returned.
pub(super) fn take_array(map: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match map.remove(key) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            map.insert(key.to_owned(), other);
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// A whole-document session's own fields (those that change on every save) as a system record
/// whose entryId is `<prefix>:session:<16 hex digits of their hash>`: a save that changes them
/// adds one record, a save that does not adds none.
pub(super) fn fields_record(prefix: &str, fields: Map<String, Value>) -> Record {
    let fields = Value::Object(fields);
    let hash = blake3::hash(canonical_json(&fields).as_bytes()).to_hex();
    let mut record = Record::new(format!("{prefix}:session:{}", &hash.as_str()[..16]), Role::System, vec![]);
    if let Value::Object(fields) = fields {
        put_all(&mut record.meta, fields);
    }
    record
}

/// A message's content, a string or an array of parts, as blocks appended to `blocks`: a string
/// is one text block, each part what `block_of` makes of it (taking out of the part what the
/// block holds). Returns, keyed by part index, what of each part no block holds (a part of no
/// known kind whole); content of another shape is kept under `content`.
pub(super) fn content_parts(
    content: Value,
    blocks: &mut Vec<Block>,
    mut block_of: impl FnMut(&mut Map<String, Value>) -> Option<Block>,
) -> Map<String, Value> {
    let mut extra = Map::new();
    let parts = match content {
        Value::String(text) => {
            blocks.push(Block::Text { text });
            return extra;
        }
        Value::Array(parts) => parts,
        other => {
            extra.insert("content".into(), other);
            return extra;
        }
    };
    for (index, part) in parts.into_iter().enumerate() {
        let Value::Object(mut part) = part else {
            extra.insert(index.to_string(), part);
            continue;
        };
        blocks.extend(block_of(&mut part));
        if !part.is_empty() {
            extra.insert(index.to_string(), Value::Object(part));
        }
    }
    extra
}

/// A part whose block holds all of it but its `type` is left empty; a part with more keeps
/// its `type`, so what is kept of it says what it was.
pub(super) fn drop_lone_type(part: &mut Map<String, Value>) {
    if part.len() == 1 {
        part.remove("type");
    }
}

/// A JSON value as tool text: strings verbatim, anything else as canonical JSON.
pub(super) fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => canonical_json(other),
    }
}

/// Decodes standard base64 (with or without padding).
pub(super) fn base64_bytes(text: &str) -> Option<Vec<u8>> {
    let engine = base64::engine::general_purpose::STANDARD;
    engine.decode(text).ok().or_else(|| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text).ok())
}

/// A blob from a `data:<mime>;base64,<data>` URL.
pub(super) fn data_url_blob(url: &str) -> Option<Block> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some(Block::Blob { media_type: media_type.to_owned(), data: base64_bytes(data)? })
}

/// A blob from an Anthropic-style `{"type":"base64","media_type","data"}` source, taking
/// `data` and `media_type` out of it (what remains is left for `meta`).
pub(super) fn take_base64_source(source: &mut Map<String, Value>) -> Option<Block> {
    if str_of(source, "type") != Some("base64") {
        return None;
    }
    let data = base64_bytes(str_of(source, "data")?)?;
    source.remove("data");
    let media_type = take_str(source, "media_type").unwrap_or_default();
    Some(Block::Blob { media_type, data })
}

#[cfg(test)]
mod tests;
