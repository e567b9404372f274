//! The segment files whose checksums were verified, remembered beside the index, so that an
//! open reads each committed file once instead of the whole index every time.
//!
//! Segment files are written once and never changed; a file whose size and modification time
//! are what they were when its checksum last matched is taken as verified, and only its footer
//! is read at open. A file written (or damaged) after that has another modification time and
//! is read whole again. As git does with its index, a file modified shortly before it was
//! verified is not remembered: a write within the file system's timestamp granularity would
//! leave its time unchanged.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The file in the index folder that holds the list; tantivy does not manage it.
const VERIFIED_FILE: &str = "annal-verified";
/// Its first line: another first line (another format, damage) is an empty list.
const HEADER: &str = "annal-verified v1";
/// A file modified less than this before its check is checked again at the next open.
const RACY_MARGIN: Duration = Duration::from_secs(2);

/// A file's size and modification time (nanoseconds since the epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    size_bytes: u64,
    modified_nanos: u128,
}

impl Stamp {
    /// The stamp of `file`; `None` when it cannot be read (the full check then says why).
    pub(crate) fn of(file: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(file).ok()?;
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Stamp { size_bytes: meta.len(), modified_nanos: modified.as_nanos() })
    }

    /// Whether the file was last modified long enough before `now` to be remembered.
    fn settled(&self, now: SystemTime) -> bool {
        let horizon = now.checked_sub(RACY_MARGIN).and_then(|t| t.duration_since(UNIX_EPOCH).ok());
        horizon.is_some_and(|horizon| self.modified_nanos < horizon.as_nanos())
    }
}

/// Verified files by name (relative to the index folder).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Verified {
    files: BTreeMap<String, Stamp>,
}

impl Verified {
    /// The list remembered in `folder`; missing or unreadable, it is empty (everything is
    /// checked, as on the first open).
    pub(crate) fn load(folder: &Path) -> Verified {
        let Ok(text) = std::fs::read_to_string(folder.join(VERIFIED_FILE)) else {
            return Verified::default();
        };
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Verified::default();
        }
        let parse = |line: &str| {
            let mut parts = line.split('\t');
            let name = parts.next()?.to_owned();
            let size_bytes = parts.next()?.parse().ok()?;
            let modified_nanos = parts.next()?.parse().ok()?;
            parts.next().is_none().then_some((name, Stamp { size_bytes, modified_nanos }))
        };
        match lines.map(parse).collect::<Option<BTreeMap<_, _>>>() {
            Some(files) => Verified { files },
            None => Verified::default(),
        }
    }

    /// Whether `name` was verified with exactly this stamp.
    pub(crate) fn holds(&self, name: &str, stamp: Stamp) -> bool {
        self.files.get(name) == Some(&stamp)
    }

    /// Remembers `name` as verified, if it was modified long enough ago.
    pub(crate) fn insert(&mut self, name: String, stamp: Stamp, now: SystemTime) {
        if stamp.settled(now) {
            self.files.insert(name, stamp);
        }
    }

    /// Writes the list into `folder` (a new file renamed over the old one, so a reader never
    /// sees half of it). Failing to write it costs only a full check at the next open, so
    /// errors are ignored: a read-only index is still searchable.
    pub(crate) fn save(&self, folder: &Path) {
        let mut text = String::from(HEADER);
        for (name, stamp) in &self.files {
            text.push_str(&format!("\n{name}\t{}\t{}", stamp.size_bytes, stamp.modified_nanos));
        }
        text.push('\n');
        let temp = folder.join(format!("{VERIFIED_FILE}.{}.tmp", std::process::id()));
        let written = std::fs::File::create(&temp)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .and_then(|()| crate::protect::Protection::of_folder(folder).apply(&temp));
        if written.and_then(|()| std::fs::rename(&temp, folder.join(VERIFIED_FILE))).is_err() {
            let _ = std::fs::remove_file(&temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_forgets_damage() {
        let dir = tempfile::tempdir().expect("temp dir");
        let old = Stamp { size_bytes: 42, modified_nanos: 1_000_000_000 };
        let young = Stamp { size_bytes: 7, modified_nanos: u128::MAX };
        let mut verified = Verified::default();
        verified.insert("a.idx".into(), old, SystemTime::now());
        verified.insert("b.idx".into(), young, SystemTime::now());
        verified.save(dir.path());
        let loaded = Verified::load(dir.path());
        assert_eq!(loaded, verified);
        assert!(loaded.holds("a.idx", old));
        assert!(!loaded.holds("b.idx", young), "a file modified just now is checked again");
        assert!(!loaded.holds("a.idx", Stamp { size_bytes: 43, ..old }));
        std::fs::write(dir.path().join(VERIFIED_FILE), format!("{HEADER}\na.idx\t42\n")).expect("write");
        assert_eq!(Verified::load(dir.path()), Verified::default());
        std::fs::write(dir.path().join(VERIFIED_FILE), "something else\n").expect("write");
        assert_eq!(Verified::load(dir.path()), Verified::default());
    }
}
