//! The index schema: one document per searchable block, its fields, and how a record becomes
//! documents.
//!
//! A hit is located by its session, sourceOrder, block index and store position, kept in
//! tantivy's document store (a few dozen bytes a document, in small blocks): a search reads them
//! for its few hits only. Fast-field columns would have to be opened first, and opening one
//! reads its block index, which grows with the segment (at 380,000 documents a quarter of a
//! CLI search's own work). sourceOrder and position are also fast fields, for range filters,
//! the takeover's delete and, past a few, documents tied at a search's cut (see `top.rs`).
//! Everything shown (entryId, role, snippet) is read from the journal: the index holds no copy
//! of any original, and no entryId either (the session and sourceOrder name the record, and a
//! per-block string id would cost more index bytes than any other field).

use annal_engine::{BlockView, ReadError, RecordView, Snapshot};
use tantivy::schema::document::Value as _;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED,
};
use tantivy::IndexSettings;
use tantivy::TantivyDocument;

use crate::tokenize::{IDENTS, LOWER, WORDS};

/// The fields of a block's document.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    /// The session the record was appended to (its own session, never a fork that inherits it).
    pub(crate) session: Field,
    /// The record's sourceOrder in that session.
    pub(crate) order: Field,
    /// The block's index in the record.
    pub(crate) block: Field,
    /// The record's store-wide position: what a takeover deletes from (see `handover.rs`);
    /// also breaks score ties, newest first.
    pub(crate) position: Field,
    /// `user`, `assistant`, `tool` or `system`.
    pub(crate) role: Field,
    /// The tool of a call or result, lower-cased.
    pub(crate) tool: Field,
    /// A call's derived target, lower-cased.
    pub(crate) target: Field,
    /// Whether the block is a failed tool result.
    pub(crate) error: Field,
    /// The block's words, with positions.
    pub(crate) text: Field,
    /// The block's identifiers.
    pub(crate) ident: Field,
}

/// Where a document's block is, as its stored fields say. A field a document lacks reads as a
/// place no record has (`u64::MAX`, an empty session), which the journal lookup then reports.
#[derive(Debug)]
pub(crate) struct Place {
    pub(crate) session: String,
    pub(crate) order: u64,
    pub(crate) block: u64,
    pub(crate) position: u64,
}

impl Fields {
    /// The place a stored document names.
    pub(crate) fn place(&self, document: &TantivyDocument) -> Place {
        let number = |field| document.get_first(field).and_then(|value| value.as_u64());
        Place {
            session: document
                .get_first(self.session)
                .and_then(|value| value.as_str())
                .unwrap_or_default()
                .to_owned(),
            order: number(self.order).unwrap_or(u64::MAX),
            block: number(self.block).unwrap_or(u64::MAX),
            position: number(self.position).unwrap_or(0),
        }
    }
}

/// The schema and its fields.
pub(crate) fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    // Filters and ids are matched, never scored: no field norms.
    let exact = |tokenizer: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::Basic)
                .set_fieldnorms(false),
        )
    };
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let ident = TextOptions::default().set_indexing_options(
        // An identifier's count in a block says little; without it the postings are smaller.
        TextFieldIndexing::default().set_tokenizer(IDENTS).set_index_option(IndexRecordOption::Basic),
    );
    let fields = Fields {
        session: builder.add_text_field("session", exact("raw") | STORED),
        // Ranges over sourceOrder read the fast field; no terms needed.
        order: builder.add_u64_field("order", FAST | STORED),
        block: builder.add_u64_field("block", STORED),
        position: builder.add_u64_field("position", FAST | STORED),
        role: builder.add_text_field("role", exact("raw")),
        tool: builder.add_text_field("tool", exact(LOWER)),
        target: builder.add_text_field("target", exact(LOWER)),
        error: builder.add_bool_field("error", INDEXED),
        text: builder.add_text_field("text", text),
        ident: builder.add_text_field("ident", ident),
    };
    (builder.build(), fields)
}

/// The settings of a new index: document store blocks small enough that reading one hit's
/// fields decompresses little more than that document.
pub(crate) fn settings() -> IndexSettings {
    IndexSettings { docstore_blocksize: DOCSTORE_BLOCK_BYTES, ..IndexSettings::default() }
}

/// About a hundred documents' stored fields (tantivy's default is 16 KiB).
const DOCSTORE_BLOCK_BYTES: usize = 4096;

/// Field names a query may name (`role:user`, `tool:bash`); anything else before a colon is
/// part of an identifier.
pub(crate) const QUERY_FIELDS: &[&str] = &["session", "role", "tool", "target", "error", "text", "ident"];

/// One block's document, ready to add.
#[derive(Debug)]
pub(crate) struct BlockDocument {
    pub(crate) document: TantivyDocument,
    pub(crate) text_bytes: u64,
}

/// The documents of one record: every block but binary blobs, which have no text. Text kept
/// in the blob table is loaded and indexed like inline text.
pub(crate) fn record_documents(
    fields: &Fields,
    snapshot: &Snapshot,
    session: &str,
    position: u64,
    view: &RecordView<'_>,
    out: &mut Vec<BlockDocument>,
) -> Result<(), ReadError> {
    for (index, block) in view.blocks().enumerate() {
        let (text, tool, target, error) = match block {
            BlockView::Text { text } | BlockView::Thinking { text } => (snapshot.text(text)?, "", "", false),
            BlockView::ToolCall { tool, input, target, .. } => (snapshot.text(input)?, tool, target, false),
            BlockView::ToolResult { tool, is_error, output, .. } => {
                (snapshot.text(output)?, tool, "", is_error)
            }
            BlockView::Blob { .. } => continue,
        };
        let mut document = TantivyDocument::default();
        document.add_text(fields.session, session);
        document.add_u64(fields.order, view.source_order());
        document.add_u64(fields.block, index as u64);
        document.add_u64(fields.position, position);
        document.add_text(fields.role, view.role().as_str());
        if !tool.is_empty() {
            document.add_text(fields.tool, tool);
        }
        if !target.is_empty() {
            document.add_text(fields.target, target);
        }
        document.add_bool(fields.error, error);
        document.add_text(fields.text, &text);
        document.add_text(fields.ident, &text);
        out.push(BlockDocument { document, text_bytes: text.len() as u64 });
    }
    Ok(())
}
