//! Read-only SQLite access the database readers share: opening without disturbing the agent,
//! one transaction per read, the schema check, rows copied out as cells (text that is not
//! UTF-8 kept as bytes rather than refused), and the time text the agents write.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, Params, Transaction};
use serde_json::Value;

use crate::error::SourceError;

/// How long a read waits for the agent to release a lock.
pub(super) const BUSY_TIMEOUT_MS: u64 = 2_000;

/// Milliseconds of a Unix time in seconds or milliseconds: 10^11 seconds is in the year 5138,
/// 10^11 milliseconds in 1973.
pub(super) fn to_ms(value: i64) -> i64 {
    if value.unsigned_abs() >= 100_000_000_000 {
        value
    } else {
        value.saturating_mul(1000)
    }
}

pub(super) fn now_ms() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// Opens a database read-only: never created, never written, the agent never disturbed.
pub(super) fn open(path: &Path) -> Result<Connection, SourceError> {
    std::fs::metadata(path).map_err(|source| SourceError::Io { path: path.to_owned(), source })?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|err| db_error(path, err))?;
    conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS)).map_err(|err| db_error(path, err))?;
    Ok(conn)
}

/// One transaction for the whole read, so every query sees the same commit.
pub(super) fn begin<'c>(conn: &'c Connection, path: &Path) -> Result<Transaction<'c>, SourceError> {
    conn.unchecked_transaction().map_err(|err| db_error(path, err))
}

pub(super) fn db_error(path: &Path, err: rusqlite::Error) -> SourceError {
    match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            SourceError::Locked { path: path.to_owned(), waited_ms: BUSY_TIMEOUT_MS }
        }
        _ => SourceError::Database { path: path.to_owned(), message: err.to_string() },
    }
}

/// The columns of `table`, which must have every one of `required`.
pub(super) fn table_columns(
    conn: &Connection,
    path: &Path,
    table: &str,
    required: &[&str],
) -> Result<Vec<String>, SourceError> {
    let mut names = Vec::new();
    for row in query(conn, path, "SELECT name FROM pragma_table_info(?1)", [table])? {
        names.extend(row.text("name").ok().flatten());
    }
    let schema =
        |detail: String| SourceError::Schema { path: path.to_owned(), table: table.to_owned(), detail };
    if names.is_empty() {
        return Err(schema("(the database has no such table)".into()));
    }
    let missing: Vec<String> =
        required.iter().filter(|c| !names.iter().any(|n| n == *c)).map(|c| format!("{c:?}")).collect();
    if missing.is_empty() {
        Ok(names)
    } else {
        Err(schema(format!("with column {} (missing)", missing.join(", "))))
    }
}

/// Every row of a query, each cell copied out as it is stored.
pub(super) fn query(
    conn: &Connection,
    path: &Path,
    sql: &str,
    params: impl Params,
) -> Result<Vec<Row>, SourceError> {
    let fail = |err| db_error(path, err);
    let mut statement = conn.prepare(sql).map_err(fail)?;
    let names: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query(params).map_err(fail)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(fail)? {
        let mut cells = Vec::with_capacity(names.len());
        for (index, name) in names.iter().enumerate() {
            cells.push((name.clone(), Cell::from(row.get_ref(index).map_err(fail)?)));
        }
        out.push(Row(cells));
    }
    Ok(out)
}

/// Milliseconds of `YYYY-MM-DD HH:MM:SS[.fff]` (UTC, as SQLite writes it) or of RFC 3339 text.
pub(super) fn sql_time_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let shape = [4, 7, 13, 16].iter().zip(b"--::").all(|(&at, &c)| b.get(at) == Some(&c));
    if !shape || !matches!(b.get(10), Some(b' ' | b'T' | b't')) {
        return None;
    }
    let num = |at: usize, len: usize| -> Option<i64> {
        let digits = text.get(at..at + len).filter(|s| s.bytes().all(|c| c.is_ascii_digit()))?;
        digits.parse().ok()
    };
    let days = days_from_civil(num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let seconds = days * 86_400 + num(11, 2)? * 3600 + num(14, 2)? * 60 + num(17, 2)?;
    let mut rest = text.get(19..)?;
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        millis = format!("{:0<3}", &fraction[..digits.min(3)]).parse().ok()?;
        rest = &fraction[digits..];
    }
    let offset = match rest.as_bytes() {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] if rest.len() == 6 => {
            let minutes = num(text.len() - 5, 2)? * 60 + num(text.len() - 2, 2)?;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    Some((seconds - offset * 60) * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// One stored value. Text that is not UTF-8 is kept as bytes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
}

impl From<ValueRef<'_>> for Cell {
    fn from(value: ValueRef<'_>) -> Cell {
        match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(n) => Cell::Int(n),
            ValueRef::Real(x) => Cell::Real(x),
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Cell::Text(text.to_owned()),
                Err(_) => Cell::Bytes(bytes.to_vec()),
            },
        }
    }
}

/// One row's cells by column name, in the table's order.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Row(pub(super) Vec<(String, Cell)>);

impl Row {
    fn cell(&self, name: &str) -> &Cell {
        self.0.iter().find(|(column, _)| column == name).map_or(&Cell::Null, |(_, cell)| cell)
    }

    /// A text column; an error says what else it holds.
    pub(super) fn text(&self, name: &str) -> Result<Option<String>, String> {
        match self.cell(name) {
            Cell::Null => Ok(None),
            Cell::Text(text) => Ok(Some(text.clone())),
            Cell::Bytes(_) => Err(format!("column {name} is not UTF-8 text")),
            Cell::Int(_) | Cell::Real(_) => Err(format!("column {name} is a number, not text")),
        }
    }

    pub(super) fn required_text(&self, name: &str) -> Result<String, String> {
        self.text(name)?.ok_or_else(|| format!("column {name} is NULL"))
    }

    /// A text or blob column's bytes; `None` for NULL and numbers.
    pub(super) fn bytes(&self, name: &str) -> Option<Vec<u8>> {
        match self.cell(name) {
            Cell::Text(text) => Some(text.as_bytes().to_vec()),
            Cell::Bytes(bytes) => Some(bytes.clone()),
            Cell::Null | Cell::Int(_) | Cell::Real(_) => None,
        }
    }

    /// An integer column (a whole real or integer text counts); `None` for anything else.
    pub(super) fn int(&self, name: &str) -> Option<i64> {
        match self.cell(name) {
            Cell::Int(n) => Some(*n),
            // Saturating: any finite real maps to some integer; only the cursor reads it.
            Cell::Real(x) if x.is_finite() => Some(*x as i64),
            Cell::Text(text) => text.trim().parse().ok(),
            _ => None,
        }
    }

    /// How a skipped row is named: its `id` (text, or a row id), else its place in the read.
    pub(super) fn name(&self, index: usize) -> String {
        match (self.text("id"), self.int("id")) {
            (Ok(Some(id)), _) => format!("{id:?}"),
            (_, Some(id)) => format!("row {id}"),
            _ => format!("#{} of the read", index + 1),
        }
    }

    /// Every column but `except`, each value as JSON text (bytes as `{"hex": …}`).
    pub(super) fn json_columns(&self, except: &[&str]) -> Vec<(String, String)> {
        let json = |cell: &Cell| match cell {
            Cell::Null => Value::Null,
            Cell::Int(n) => Value::from(*n),
            Cell::Real(x) => {
                serde_json::Number::from_f64(*x).map_or_else(|| Value::from(x.to_string()), Value::Number)
            }
            Cell::Text(text) => Value::from(text.as_str()),
            Cell::Bytes(bytes) => {
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                serde_json::json!({ "hex": hex })
            }
        };
        let kept = self.0.iter().filter(|(name, _)| !except.contains(&name.as_str()));
        kept.map(|(name, cell)| (name.clone(), json(cell).to_string())).collect()
    }
}
