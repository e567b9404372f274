//! Imports the Go OpenCode (now Crush) databases in `$ANNAL_CORPUS/opencode-go-sqlite/` (a real
//! `.opencode/opencode.db` from a public repository, opened read-only): every message row is a
//! record and nothing is skipped, each session also gets its session record, every tool result
//! pairs with an earlier call of its session; and the database, imported through the facade
//! (`annal::Annal::import_file` given its path, as `annal import` takes it), stores exactly those
//! records in a fresh store that verifies, then imports again as a no-op. A missing corpus or
//! folder fails the test.
//!
//! The rows are read here with rusqlite, as the sources crate's reader does, and converted by
//! `annal_formats::parse_crush_session`: what the import stores is compared with that.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- crush::`

use std::collections::{BTreeMap, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};

use annal::sync::Agent;
use annal::{Annal, Block, Options, Role};
use annal_formats::{parse_crush_session, CrushMessageRow, CrushSessionRow, ParsedSession};
use annal_support::corpus::corpus_root;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Row};
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

const FOLDER: &str = "opencode-go-sqlite";

/// What the corpus holds (SOURCES.md, checked with `sqlite3`: `SELECT role, count(*) FROM
/// messages GROUP BY role`, and `json_each` over `parts` for the part types).
const SESSIONS: usize = 6;
const MESSAGES: [(Role, usize); 3] = [(Role::User, 13), (Role::Assistant, 54), (Role::Tool, 43)];
const TOOL_CALLS: usize = 78;
/// Text parts, none of them empty.
const TEXTS: usize = 25;

fn databases() -> Result<Vec<PathBuf>, Box<dyn Error>> {
    let folder = corpus_root()?.join(FOLDER);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "db") {
            found.push(path);
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(format!("no .db file in {}", folder.display()).into());
    }
    Ok(found)
}

/// A cell as JSON text, as the reader keeps columns in `meta`.
fn json(row: &Row<'_>, index: usize) -> Result<String, Box<dyn Error>> {
    Ok(match row.get_ref(index)? {
        ValueRef::Null => "null".to_owned(),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(x) => Value::from(x).to_string(),
        ValueRef::Text(text) | ValueRef::Blob(text) => Value::from(std::str::from_utf8(text)?).to_string(),
    })
}

fn columns(
    row: &Row<'_>,
    names: &[String],
    except: &[&str],
) -> Result<Vec<(String, String)>, Box<dyn Error>> {
    let mut out = Vec::new();
    for (index, name) in names.iter().enumerate() {
        if !except.contains(&name.as_str()) {
            out.push((name.clone(), json(row, index)?));
        }
    }
    Ok(out)
}

/// A session row and its message rows.
type SessionRows = (CrushSessionRow, Vec<CrushMessageRow>);

/// Every session of a database with its message rows, in the agent's order.
fn sessions(path: &Path) -> Result<Vec<SessionRows>, Box<dyn Error>> {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut statement = db.prepare("SELECT * FROM sessions ORDER BY id")?;
    let names: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut out = BTreeMap::new();
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let session = CrushSessionRow {
            id: row.get("id")?,
            parent_session_id: row.get("parent_session_id")?,
            updated_at: row.get("updated_at")?,
            columns: columns(row, &names, &[])?,
        };
        out.insert(session.id.clone(), (session, Vec::new()));
    }
    let mut statement = db.prepare("SELECT * FROM messages ORDER BY session_id, created_at, rowid")?;
    let names: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let session: String = row.get("session_id")?;
        let message = CrushMessageRow {
            id: row.get("id")?,
            role: row.get("role")?,
            parts: row.get("parts")?,
            created_at: row.get("created_at")?,
            columns: columns(
                row,
                &names,
                &["id", "session_id", "role", "parts", "created_at", "updated_at"],
            )?,
        };
        out.get_mut(&session).ok_or(format!("message of unknown session {session}"))?.1.push(message);
    }
    Ok(out.into_values().collect())
}

/// Tool results whose call is not earlier in the session.
fn unpaired(session: &ParsedSession) -> Vec<String> {
    let mut calls = HashSet::new();
    let mut unpaired = Vec::new();
    for record in &session.records {
        for block in &record.blocks {
            match block {
                Block::ToolCall { call_id, .. } => {
                    calls.insert(call_id.clone());
                }
                Block::ToolResult { call_id, .. } if !calls.contains(call_id) => {
                    unpaired.push(call_id.clone())
                }
                _ => {}
            }
        }
    }
    unpaired
}

/// Imports the database at `path` into a fresh store as a user does: every session parsed from
/// its rows is stored with exactly those records, the store verifies, and importing again
/// stores nothing.
fn import_whole(path: &Path, parsed: &[ParsedSession], dir: &Path) -> TestResult {
    let name = path.display();
    let annal =
        Annal::open_with(dir.join("corpus.redb"), &Options { index_eagerly: false, ..Options::default() })?;
    let summary = annal.import_file(path, None)?;
    assert_eq!((summary.agent, summary.format), (Some(Agent::Crush), None), "{name}: read as");
    assert!(summary.failed.is_empty() && summary.skipped_rows.is_empty(), "{name}: {summary:?}");
    let mut names: Vec<&str> = summary.sessions.iter().map(String::as_str).collect();
    let mut wanted: Vec<&str> = parsed.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    wanted.sort_unstable();
    assert_eq!(names, wanted, "{name}: sessions");
    let records: usize = parsed.iter().map(|s| s.records.len()).sum();
    assert_eq!(summary.records_new, records as u64, "{name}: records stored");
    let snapshot = annal.snapshot()?;
    for session in parsed {
        let stored: Vec<String> = snapshot
            .records(&session.name, 0..u64::MAX)?
            .map(|guard| Ok(guard?.view()?.entry_id().to_owned()))
            .collect::<Result<_, Box<dyn Error>>>()?;
        let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
        assert_eq!(stored, ids, "{name}: session {}", session.name);
        // The same records appended again are each already there, at the place they hold.
        let again = annal.append(&session.name, None, session.records.clone())?;
        let orders: Vec<u64> = (0..session.records.len() as u64).collect();
        assert_eq!((again.appended, again.source_orders), (0, orders), "{name}: session {}", session.name);
    }
    drop(snapshot);
    let report = annal.verify(None)?;
    assert!(report.is_ok(), "{:?}", report.problems);
    let again = annal.import_file(path, None)?;
    assert_eq!((again.records_new, again.records_present), (0, records as u64), "{name}: {again:?}");
    assert!(annal.close()?);
    Ok(())
}

#[test]
fn the_go_opencode_database_imports_whole() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (mut session_count, mut roles, mut calls, mut texts) = (0, BTreeMap::new(), 0, 0);
    for path in databases()? {
        let mut expected = Vec::new();
        for (row, messages) in sessions(&path)? {
            let (parsed, skipped) = parse_crush_session(&row, &messages);
            assert!(skipped.is_empty(), "{}: {skipped:?}", path.display());
            assert_eq!(parsed.name, row.id);
            let (info, records) = parsed.records.split_last().ok_or("a session without records")?;
            assert!(info.entry_id.starts_with(&format!("crush:{}:session:", row.id)), "{}", info.entry_id);
            let ids: Vec<String> = messages.iter().map(|m| format!("crush:{}", m.id)).collect();
            assert_eq!(records.iter().map(|r| r.entry_id.clone()).collect::<Vec<_>>(), ids);
            assert_eq!(unpaired(&parsed), Vec::<String>::new(), "session {}", row.id);
            for record in records {
                *roles.entry(record.role).or_insert(0) += 1;
                calls += record.blocks.iter().filter(|b| matches!(b, Block::ToolCall { .. })).count();
                texts += record.blocks.iter().filter(|b| matches!(b, Block::Text { .. })).count();
            }
            expected.push(parsed);
            session_count += 1;
        }
        import_whole(&path, &expected, dir.path())?;
        std::fs::remove_file(dir.path().join("corpus.redb"))?;
    }
    assert_eq!(session_count, SESSIONS);
    assert_eq!(roles, BTreeMap::from(MESSAGES));
    assert_eq!((calls, texts), (TOOL_CALLS, TEXTS));
    Ok(())
}
