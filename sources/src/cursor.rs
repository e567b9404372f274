//! A unit's cursor: what the last sync saw of it, kept in the store under the unit's name.
//!
//! A file's cursor is its fingerprint (size, modification time, inode, device): when all four
//! match, nothing changed and nothing is read. A grown, rewritten, shrunk or replaced file is
//! read again, whole; its records are stored once because every one has a stable entryId. A
//! database's cursor adds its write-ahead log's fingerprint and the newest update time read, so
//! only rows changed since are read.
//!
//! Encoding (little endian, fixed width): a version byte (1), the file's fingerprint (four
//! u64), the log's fingerprint (four u64), `since_ms` (i64): 73 bytes.

use std::fs::Metadata;
use std::path::Path;

use crate::discover::Unit;

/// What identifies one state of a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub(crate) size: u64,
    pub(crate) mtime_ns: u64,
    pub(crate) inode: u64,
    pub(crate) device: u64,
}

impl Fingerprint {
    pub(crate) fn of(meta: &Metadata) -> Fingerprint {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let (inode, device) = identity(meta);
        Fingerprint { size: meta.len(), mtime_ns, inode, device }
    }

    /// The fingerprint of the file at `path`, or the default (all zero) when there is none.
    pub(crate) fn of_path(path: &Path) -> Fingerprint {
        std::fs::metadata(path).map(|meta| Fingerprint::of(&meta)).unwrap_or_default()
    }
}

#[cfg(unix)]
fn identity(meta: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.ino(), meta.dev())
}

#[cfg(not(unix))]
fn identity(_meta: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// What the last sync saw of a unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) file: Fingerprint,
    /// A database's `-wal` file; zero for other units.
    pub(crate) wal: Fingerprint,
    /// A database's newest update time read (ms since the epoch); zero for files.
    pub(crate) since_ms: i64,
}

const VERSION: u8 = 1;
const ENCODED_LEN: usize = 1 + 32 + 32 + 8;

impl Cursor {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(ENCODED_LEN);
        out.push(VERSION);
        for print in [self.file, self.wal] {
            for value in [print.size, print.mtime_ns, print.inode, print.device] {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.since_ms.to_le_bytes());
        out
    }

    /// Reads an encoded cursor; `None` for bytes of another version or length (the unit is
    /// then read from the start, which stores nothing twice).
    pub(crate) fn decode(bytes: &[u8]) -> Option<Cursor> {
        if bytes.len() != ENCODED_LEN || bytes[0] != VERSION {
            return None;
        }
        let word = |i: usize| {
            let start = 1 + i * 8;
            bytes.get(start..start + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map(u64::from_le_bytes)
        };
        let print = |first: usize| -> Option<Fingerprint> {
            Some(Fingerprint {
                size: word(first)?,
                mtime_ns: word(first + 1)?,
                inode: word(first + 2)?,
                device: word(first + 3)?,
            })
        };
        Some(Cursor { file: print(0)?, wal: print(4)?, since_ms: i64::from_le_bytes(word(8)?.to_le_bytes()) })
    }
}

/// The name a unit's cursor is kept under: `sync:<agent>:<path>`.
pub(crate) fn cursor_name(unit: &Unit) -> String {
    format!("{}{}:{}", CURSOR_PREFIX, unit.agent.name(), unit.path.display())
}

/// The prefix of every cursor sync keeps.
pub(crate) const CURSOR_PREFIX: &str = "sync:";
/// The prefix of the project folders sync remembers: `sync-project:<path>`.
pub(crate) const PROJECT_PREFIX: &str = "sync-project:";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_other_bytes() {
        let cursor = Cursor {
            file: Fingerprint { size: 1 << 40, mtime_ns: 7, inode: u64::MAX, device: 3 },
            wal: Fingerprint { size: 9, ..Fingerprint::default() },
            since_ms: -5,
        };
        let bytes = cursor.encode();
        assert_eq!(bytes.len(), ENCODED_LEN);
        assert_eq!(Cursor::decode(&bytes), Some(cursor));
        assert_eq!(Cursor::decode(&bytes[1..]), None);
        let mut other = bytes.clone();
        other[0] = 2;
        assert_eq!(Cursor::decode(&other), None);
    }
}
