//! Turning appended records into what the writer stores: validation against the limits,
//! content hashes, token estimates, targets and blob extraction.
//!
//! This runs on the caller's thread, before the request reaches the single writer, so the
//! CPU work of many concurrent appenders proceeds in parallel and the writer only assigns
//! positions, chains hashes and writes.

use rayon::iter::{IntoParallelIterator, ParallelIterator};

use crate::claim::{PendingId, PLACEHOLDER_ID};
use crate::codec;
use crate::codec::{StoredBlock, StoredMeta, StoredPayload, StoredRecord};
use crate::digest::{flags, name_key, Digest};
use crate::error::AppendError;
use crate::hash::{content_hash, Hash, ZERO_HASH};
use crate::json_string::is_canonical_json;
use crate::options::{Limits, StoreOptions};
use crate::packing::{pack, pack_record};
use crate::portable::{canonical_input_parsed, canonical_json};
use crate::record::{Block, Record};
use crate::target::{is_priority_target, target_of};
use crate::tokens::TokenCounter;

/// A record ready for the writer: everything but its place in the session.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) entry_id: String,
    pub(crate) content_hash: Hash,
    /// `hash` and `prev_hash` are filled in by the writer.
    pub(crate) stored: StoredRecord,
    /// `position` is filled in by the writer.
    pub(crate) digest: Digest,
    pub(crate) blobs: Vec<(Hash, Vec<u8>)>,
    /// A record appended without an entryId: the writer derives its id (and content hash) once
    /// it knows the sourceOrder; see [`PendingId`].
    pub(crate) pending_id: Option<Box<PendingId>>,
    /// The journal value, encoded and compressed here on the caller's thread with its chain
    /// fields zero, for the committing thread to patch; `None` for a record whose entryId is
    /// derived at commit (its archive holds that id).
    pub(crate) value: Option<Vec<u8>>,
}

impl Prepared {
    /// The bytes its journal value and blobs take as stored (none yet for a value encoded at
    /// commit).
    pub(crate) fn stored_bytes(&self) -> usize {
        self.value.as_ref().map_or(0, Vec::len) + self.blobs.iter().map(|(_, blob)| blob.len()).sum::<usize>()
    }
}

pub(crate) fn check_session_name(name: &str, limits: &Limits) -> Result<(), String> {
    if name.is_empty() {
        return Err("a session name cannot be empty".into());
    }
    if name.len() > limits.session_name_bytes_max {
        return Err(format!("{} bytes, over the limit of {}", name.len(), limits.session_name_bytes_max));
    }
    if name.chars().any(char::is_control) {
        return Err("a session name cannot contain control characters".into());
    }
    Ok(())
}

/// The records of a batch for `session` as the store would keep them (checked, their JSON in
/// canonical text), each with the chain hash it gets when the batch lands after a record whose
/// chain hash is `prev`. A replica publishes these before any store holds them, so that every
/// store that applies them can check the chain; appending the returned records after `prev`
/// stores exactly these hashes.
///
/// # Errors
/// [`AppendError::InvalidRecord`], as [`Store::append`](crate::Store::append) would give.
pub fn chain_records(
    session: &str,
    prev: &Hash,
    records: Vec<Record>,
    options: &StoreOptions,
) -> Result<Vec<(Record, Hash)>, AppendError> {
    let mut prev = *prev;
    let mut out = Vec::with_capacity(records.len());
    for (index, mut record) in records.into_iter().enumerate() {
        let checked = check_record(&record, &options.limits).and_then(|()| canonicalise(&mut record));
        if let Err(reason) = checked {
            let entry_id = record.entry_id;
            let index = index as u64;
            return Err(AppendError::InvalidRecord { session: session.to_owned(), entry_id, reason, index });
        }
        prev = crate::hash::chain_hash(&prev, &content_hash(&record));
        out.push((record, prev));
    }
    Ok(out)
}

/// From this many bytes outside a batch's largest record, its records are prepared on every
/// core: compressing and hashing them is most of an append's work, and a large batch's share of
/// it is then over in a fraction of the time. Below it, handing records to other threads costs
/// more than it saves: one large record among small ones (a checkpoint's value beside its new
/// messages) is prepared by one thread either way, while the pool's threads woken for the rest
/// spin before they sleep again.
const PARALLEL_BATCH_BYTES_MIN: usize = 64 * 1024;

/// Validates and prepares a batch for `session`.
pub(crate) fn prepare_batch(
    session: &str,
    records: Vec<Record>,
    options: &StoreOptions,
) -> Result<Vec<Prepared>, AppendError> {
    prepare_seeded(session, records.into_iter().map(|record| (record, None)), options)
}

/// As [`prepare_batch`], each record with the seed of its derived entryId if it has no id of its
/// own (see [`crate::claim::derived_entry_id`]).
pub(crate) fn prepare_seeded(
    session: &str,
    records: impl ExactSizeIterator<Item = (Record, Option<String>)>,
    options: &StoreOptions,
) -> Result<Vec<Prepared>, AppendError> {
    let limits = &options.limits;
    check_session_name(session, limits)
        .map_err(|reason| AppendError::InvalidSessionName { name: session.to_owned(), reason })?;
    let limit = |what: String, actual: usize, limit: usize| AppendError::LimitExceeded {
        session: session.to_owned(),
        what,
        actual: actual as u64,
        limit: limit as u64,
    };
    if records.len() > limits.batch_records_max {
        return Err(limit("records in one batch".into(), records.len(), limits.batch_records_max));
    }
    // Every limit is checked before any record is prepared; a record before the first one
    // over a limit is still prepared, so an invalid record there is the error, as when each
    // record was checked and prepared in turn.
    let mut batch_bytes = 0usize;
    let mut largest_bytes = 0usize;
    let mut over = None;
    let mut within = Vec::with_capacity(records.len());
    for (index, (record, seed)) in records.enumerate() {
        let size = record.size_bytes();
        batch_bytes = batch_bytes.saturating_add(size);
        largest_bytes = largest_bytes.max(size);
        if size > limits.record_size_bytes_max {
            let what = format!("size of entry {:?} in bytes", record.entry_id);
            over = Some(limit(what, size, limits.record_size_bytes_max));
        } else if batch_bytes > limits.batch_size_bytes_max {
            over = Some(limit("batch size in bytes".into(), batch_bytes, limits.batch_size_bytes_max));
        } else if record.blocks.len() > limits.blocks_per_record_max {
            let what = format!("block count of entry {:?}", record.entry_id);
            over = Some(limit(what, record.blocks.len(), limits.blocks_per_record_max));
        }
        if over.is_some() {
            break;
        }
        within.push((index, record, seed));
    }
    let prepare = |(index, record, seed): (usize, Record, Option<String>)| {
        prepare_record(session, record, seed, options).map_err(|err| match err {
            AppendError::InvalidRecord { session, entry_id, reason, .. } => {
                AppendError::InvalidRecord { session, entry_id, reason, index: index as u64 }
            }
            other => other,
        })
    };
    let prepared = if batch_bytes.saturating_sub(largest_bytes) >= PARALLEL_BATCH_BYTES_MIN {
        // Every record's result, in order, so the first error is the one reported.
        let results: Vec<Result<Prepared, AppendError>> = within.into_par_iter().map(prepare).collect();
        results.into_iter().collect::<Result<Vec<_>, _>>()?
    } else {
        within.into_iter().map(prepare).collect::<Result<Vec<_>, _>>()?
    };
    match over {
        Some(err) => Err(err),
        None => Ok(prepared),
    }
}

fn prepare_record(
    session: &str,
    mut record: Record,
    seed: Option<String>,
    options: &StoreOptions,
) -> Result<Prepared, AppendError> {
    let seed = seed.filter(|_| record.entry_id.is_empty());
    if seed.is_some() {
        record.entry_id = PLACEHOLDER_ID.to_owned();
    }
    let checked = check_record(&record, &options.limits).and_then(|()| canonicalise(&mut record));
    if let Err(reason) = checked {
        let entry_id = record.entry_id;
        return Err(AppendError::InvalidRecord { session: session.to_owned(), entry_id, reason, index: 0 });
    }
    let pending_id = seed.map(|seed| Box::new(PendingId { seed, record: record.clone() }));
    let hash = content_hash(&record);
    let entry_id = record.entry_id.clone();
    let (stored, digest, blobs) = stored_form(record, hash, options);
    // An encoding failure is left to the committing thread, which encodes again and reports it.
    let value = pending_id.is_none().then(|| codec::encode(&stored).ok()).flatten().map(|a| pack_record(&a));
    Ok(Prepared { entry_id, content_hash: hash, stored, digest, blobs, pending_id, value })
}

/// What a record must be before anything else is done with it: an entryId within the limit,
/// an RFC 3339 timestamp.
fn check_record(record: &Record, limits: &Limits) -> Result<(), String> {
    if record.entry_id.is_empty() {
        return Err("entryId cannot be empty".into());
    }
    if record.entry_id.len() > limits.entry_id_bytes_max {
        let len = record.entry_id.len();
        return Err(format!("entryId is {len} bytes, over the limit of {}", limits.entry_id_bytes_max));
    }
    if let Some(timestamp) = &record.timestamp {
        if !crate::portable::is_rfc3339(timestamp) {
            return Err(format!("timestamp {timestamp:?} is not RFC 3339"));
        }
    }
    Ok(())
}

/// JSON inside a record (metadata values, tool inputs) in canonical text, so an export
/// re-imports to the same hash; each tool call's target derived if it has none.
fn canonicalise(record: &mut Record) -> Result<(), String> {
    for (key, value) in record.meta.iter_mut() {
        if is_canonical_json(value) {
            continue;
        }
        let parsed = serde_json::from_str::<serde_json::Value>(value)
            .map_err(|_| format!("meta value of {key:?} is not JSON text"))?;
        let canonical = canonical_json(&parsed);
        if canonical != *value {
            *value = canonical;
        }
    }
    for block in &mut record.blocks {
        if let Block::ToolCall { tool, input, target, .. } = block {
            let (canonical, parsed) = canonical_input_parsed(input);
            if canonical != *input {
                *input = canonical;
            }
            // The target is derived data, outside the content hash.
            if target.is_empty() {
                if let Some(parsed) = &parsed {
                    *target = target_of(tool, parsed);
                }
            }
        }
    }
    Ok(())
}

/// The record as the journal stores it (long texts moved out as blobs), with its digest.
fn stored_form(
    record: Record,
    hash: Hash,
    options: &StoreOptions,
) -> (StoredRecord, Digest, Vec<(Hash, Vec<u8>)>) {
    let mut digest = Digest {
        role: record.role,
        flags: 0,
        block_count: u16::try_from(record.blocks.len()).unwrap_or(u16::MAX),
        tokens_total: 0,
        tokens_text: 0,
        tokens_tool: 0,
        position: u64::MAX,
        tool_key: 0,
        target_key: 0,
        content_hash: hash,
    };
    let mut payloads = Payloads { threshold_bytes: options.blob_threshold_bytes, blobs: Vec::new() };
    let counter = options.token_counter.as_ref();
    let blocks =
        record.blocks.into_iter().map(|block| stored_block(block, &mut digest, counter, &mut payloads));
    let stored = StoredRecord {
        entry_id: record.entry_id,
        role: record.role.tag(),
        timestamp: record.timestamp,
        blocks: blocks.collect(),
        meta: record.meta.into_iter().map(|(key, value)| StoredMeta { key, value }).collect(),
        hash: ZERO_HASH,
        prev_hash: ZERO_HASH,
        seal: 0,
    };
    (stored, digest, payloads.blobs)
}

/// Texts kept inline, or moved to the blob table when longer than the threshold.
struct Payloads {
    threshold_bytes: usize,
    blobs: Vec<(Hash, Vec<u8>)>,
}

impl Payloads {
    fn keep(&mut self, text: String) -> StoredPayload {
        if text.len() <= self.threshold_bytes {
            return StoredPayload::Inline(text);
        }
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        let len = text.len() as u64;
        self.blobs.push((hash, pack(text.into_bytes())));
        StoredPayload::Blob { hash, len }
    }
}

/// One block as stored, its tokens, flags and keys added to the record's digest.
fn stored_block(
    block: Block,
    digest: &mut Digest,
    counter: &dyn TokenCounter,
    payloads: &mut Payloads,
) -> StoredBlock {
    match block {
        Block::Text { text } => {
            let tokens = counter.count_tokens(&text);
            digest.tokens_text = digest.tokens_text.saturating_add(tokens);
            digest.tokens_total = digest.tokens_total.saturating_add(tokens);
            digest.flags |= flags::TEXT;
            StoredBlock::Text(payloads.keep(text))
        }
        Block::Thinking { text } => {
            digest.tokens_total = digest.tokens_total.saturating_add(counter.count_tokens(&text));
            digest.flags |= flags::THINKING;
            StoredBlock::Thinking(payloads.keep(text))
        }
        Block::ToolCall { call_id, tool, input, target } => {
            let tokens = counter.count_tokens(&input).saturating_add(counter.count_tokens(&tool));
            digest.tokens_tool = digest.tokens_tool.saturating_add(tokens);
            digest.tokens_total = digest.tokens_total.saturating_add(tokens);
            if digest.tool_key == 0 {
                digest.tool_key = name_key(&tool);
            }
            if digest.target_key == 0 && !target.is_empty() {
                digest.target_key = name_key(&target);
                if is_priority_target(&target) {
                    digest.flags |= flags::PRIORITY_TARGET;
                }
            }
            digest.flags |= flags::TOOL_CALL;
            StoredBlock::ToolCall { call_id, tool, input: payloads.keep(input), target }
        }
        Block::ToolResult { call_id, tool, is_error, output } => {
            let tokens = counter.count_tokens(&output);
            digest.tokens_tool = digest.tokens_tool.saturating_add(tokens);
            digest.tokens_total = digest.tokens_total.saturating_add(tokens);
            if digest.tool_key == 0 {
                digest.tool_key = name_key(&tool);
            }
            digest.flags |= flags::TOOL_RESULT;
            if is_error {
                digest.flags |= flags::ERROR;
            }
            StoredBlock::ToolResult { call_id, tool, is_error, output: payloads.keep(output) }
        }
        Block::Blob { media_type, data } => {
            let hash = *blake3::hash(&data).as_bytes();
            let size_bytes = data.len() as u64;
            digest.flags |= flags::BLOB;
            payloads.blobs.push((hash, pack(data)));
            StoredBlock::Blob { hash, media_type, size_bytes }
        }
    }
}

/// Gives each record appended without an entryId its derived id, now that the session's next
/// sourceOrder is known: the record at batch index `i` would land at `next + i`.
pub(crate) fn settle_ids(session: &str, next: u64, prepared: &mut [Prepared]) {
    for (index, record) in prepared.iter_mut().enumerate() {
        if let Some(pending) = record.pending_id.take() {
            let (entry_id, hash) = pending.settle(session, next + index as u64);
            record.stored.entry_id.clone_from(&entry_id);
            record.entry_id = entry_id;
            record.content_hash = hash;
            record.digest.content_hash = hash;
        }
    }
}
