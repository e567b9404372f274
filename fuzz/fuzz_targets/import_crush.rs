//! Fuzz target: Crush / Go OpenCode database rows made from arbitrary bytes, through the Crush
//! importer. Rows are split on 0x1E and fields on 0x1F: the first row is the session
//! (`id`, `parent_session_id`, `updated_at`, then column name/value pairs), each other row a
//! message (`id`, `role`, `parts`, `created_at`, then column name/value pairs).
//!
//! Properties: parsing never panics and is deterministic, skipped rows are named, and the
//! session passes [`annal_fuzz::check_rows_session`] (entryIds, append, re-append as a no-op).
#![no_main]

use annal_formats::{parse_crush_session, CrushMessageRow, CrushSessionRow};
use libfuzzer_sys::fuzz_target;

fn fields(row: &[u8]) -> Vec<String> {
    row.split(|&b| b == 0x1f).map(|field| String::from_utf8_lossy(field).into_owned()).collect()
}

fn field(fields: &[String], index: usize) -> String {
    fields.get(index).cloned().unwrap_or_default()
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
    let session = CrushSessionRow {
        id: field(&head, 0),
        parent_session_id: head.get(1).filter(|parent| !parent.is_empty()).cloned(),
        updated_at: number(&head, 2),
        columns: columns(&head, 3),
    };
    let messages: Vec<CrushMessageRow> = rows
        .map(|row| {
            let f = fields(row);
            CrushMessageRow {
                id: field(&f, 0),
                role: field(&f, 1),
                parts: field(&f, 2),
                created_at: number(&f, 3),
                columns: columns(&f, 4),
            }
        })
        .collect();
    let (parsed, skipped) = parse_crush_session(&session, &messages);
    assert_eq!(
        parse_crush_session(&session, &messages),
        (parsed.clone(), skipped.clone()),
        "not deterministic"
    );
    assert!(skipped.iter().all(|line| line.starts_with("message ")), "{skipped:?}");
    annal_fuzz::check_rows_session(parsed);
});
