//! Fuzz target: goose database rows made from arbitrary bytes, through the goose importer. Rows
//! are split on 0x1E and fields on 0x1F: the first row is the session (`id`,
//! `parent_session_id`, `updated_at`, then column name/value pairs), each other row a message
//! (`id`, `message_id`, `role`, `content_json`, `created_timestamp`, `metadata_json`, whether
//! the id repeats, then column name/value pairs); an empty optional field is `NULL`.
//!
//! Properties: parsing never panics and is deterministic, skipped rows are named, and the
//! session passes [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{parse_goose_session, GooseMessageRow, GooseSessionRow};
use libfuzzer_sys::fuzz_target;

fn fields(row: &[u8]) -> Vec<String> {
    row.split(|&b| b == 0x1f).map(|field| String::from_utf8_lossy(field).into_owned()).collect()
}

fn field(fields: &[String], index: usize) -> String {
    fields.get(index).cloned().unwrap_or_default()
}

fn optional(fields: &[String], index: usize) -> Option<String> {
    fields.get(index).filter(|field| !field.is_empty()).cloned()
}

fn number(fields: &[String], index: usize) -> Option<i64> {
    fields.get(index)?.trim().parse().ok()
}

fn columns(fields: &[String], from: usize) -> Vec<(String, String)> {
    let rest = fields.get(from..).unwrap_or_default();
    rest.chunks(2).map(|pair| (pair[0].clone(), pair.get(1).cloned().unwrap_or_default())).collect()
}

fuzz_target!(|data: &[u8]| {
    let mut rows = data.split(|&b| b == 0x1e);
    let head = fields(rows.next().unwrap_or_default());
    let session = GooseSessionRow {
        id: field(&head, 0),
        parent_session_id: optional(&head, 1),
        updated_at: optional(&head, 2),
        columns: columns(&head, 3),
    };
    let messages: Vec<GooseMessageRow> = rows
        .map(|row| {
            let f = fields(row);
            GooseMessageRow {
                id: number(&f, 0).unwrap_or_default(),
                message_id: optional(&f, 1),
                role: field(&f, 2),
                content_json: field(&f, 3),
                created_timestamp: number(&f, 4),
                metadata_json: optional(&f, 5),
                repeated_id: field(&f, 6) == "1",
                columns: columns(&f, 7),
            }
        })
        .collect();
    let (parsed, skipped) = parse_goose_session(&session, &messages);
    assert_eq!(
        parse_goose_session(&session, &messages),
        (parsed.clone(), skipped.clone()),
        "not deterministic"
    );
    assert!(skipped.iter().all(|line| line.starts_with("message row ")), "{skipped:?}");
    annal_fuzz::check_rows_session(parsed);
});
