//! OpenCode's older `storage/` JSON tree, written before OpenCode 1.2 moved to `opencode.db`
//! (1.2 copies it into the database on first start and leaves it in place).
//!
//! Layout: `session/<projectID>/<sessionID>.json` (a session's info, as its export prints it),
//! `message/<sessionID>/<messageID>.json` (a message's info) and
//! `part/<messageID>/<partID>.json` (one part), the ids taken from the paths as OpenCode's own
//! migration takes them. A file's update time is its modification time: the one clock every file
//! has (a JSON `time.updated` may run ahead of or behind it, and only sessions carry one), so a
//! cursor compares like with like. From there it is the database's rule: files changed at or
//! after the cursor are read, a message whole with its parts when it or a part changed, messages
//! still being written are held back, and the rows become records as the database's do.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use annal_formats::OpenCodeMessageRows;
use serde_json::Value;

use crate::db::opencode::{assemble, ChangedMessage, Changes};
use crate::db::DbReading;
use crate::error::SourceError;

/// One `<folder>/<parent>/<id>.json` file of the tree.
#[derive(Debug)]
struct Entry {
    id: String,
    /// The folder it sits in: a project, session or message id.
    parent: String,
    path: PathBuf,
    mtime: i64,
}

/// Reads the sessions of the tree at `root` (the `storage` folder) changed at or after
/// `since_ms` (all with `None`).
pub(crate) fn read(root: &Path, since_ms: Option<i64>) -> Result<DbReading, SourceError> {
    let since = since_ms.unwrap_or(i64::MIN);
    let io = |source| SourceError::Io { path: root.to_owned(), source };
    if !fs::metadata(root).map_err(io)?.is_dir() {
        return Err(io(std::io::Error::other("not a folder")));
    }
    let mut skipped = Vec::new();
    let sessions = entries(root, "session", true, &mut skipped)?;
    let messages = entries(root, "message", true, &mut skipped)?;
    let mut parts: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for part in entries(root, "part", false, &mut skipped)? {
        parts.entry(part.parent.clone()).or_default().push(part);
    }
    let newest = sessions.iter().chain(&messages).chain(parts.values().flatten()).map(|e| e.mtime);
    let mut changes = Changes { newest: newest.filter(|&t| t >= since).max(), ..Changes::default() };
    for message in &messages {
        let parts = parts.get(&message.id).map_or(&[][..], Vec::as_slice);
        if message.mtime >= since || parts.iter().any(|p| p.mtime >= since) {
            if let Some(changed) = changed_message(message, parts, &mut skipped) {
                changes.messages.push(changed);
            }
        }
    }
    let files: BTreeMap<&str, &Entry> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut wanted: Vec<String> = changes.messages.iter().map(|m| m.session.clone()).collect();
    wanted.extend(sessions.iter().filter(|s| s.mtime >= since).map(|s| s.id.clone()));
    for id in wanted {
        if changes.sessions.contains_key(&id) {
            continue;
        }
        // A session file may be missing (deleted, or never written): its messages still count.
        let info = files.get(id.as_str()).and_then(|session| contents(&session.path, &mut skipped));
        changes.sessions.insert(id, info.unwrap_or_else(|| "{}".to_owned()));
    }
    changes.skipped = skipped;
    Ok(assemble(changes, since_ms, root))
}

/// The JSON files two levels under `root/folder`, sorted by path. A missing folder is a tree
/// that is not OpenCode's when `required`, and empty otherwise.
fn entries(
    root: &Path,
    folder: &str,
    required: bool,
    skipped: &mut Vec<String>,
) -> Result<Vec<Entry>, SourceError> {
    let top = root.join(folder);
    if !top.is_dir() {
        if !required {
            return Ok(Vec::new());
        }
        let detail = format!("(no folder {folder}/ in the storage tree)");
        return Err(SourceError::Schema { path: root.to_owned(), table: folder.to_owned(), detail });
    }
    let mut found = Vec::new();
    for dir in sorted(&top).map_err(|source| SourceError::Io { path: top.clone(), source })? {
        // Linked folders are followed; the depth is fixed, so a link cannot loop.
        if !dir.is_dir() {
            continue;
        }
        let files = match sorted(&dir) {
            Ok(files) => files,
            Err(err) => {
                skipped.push(format!("{}: {err}", dir.display()));
                continue;
            }
        };
        let parent = file_name(&dir);
        for path in files {
            let name = file_name(&path);
            // OpenCode's temporary files start with a dot; only `<id>.json` is a row.
            let Some(id) = name.strip_suffix(".json").filter(|id| !id.is_empty() && !name.starts_with('.'))
            else {
                continue;
            };
            match fs::metadata(&path).and_then(|meta| meta.modified()) {
                Ok(time) => {
                    let mtime = time
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                    found.push(Entry { id: id.to_owned(), parent: parent.clone(), path, mtime });
                }
                // Removed since it was listed: gone, not unreadable.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => skipped.push(format!("{}: {err}", path.display())),
            }
        }
    }
    Ok(found)
}

fn sorted(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = fs::read_dir(dir)?.map(|entry| entry.map(|e| e.path())).collect::<Result<Vec<_>, _>>()?;
    paths.sort();
    Ok(paths)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A file's text, or `None` (reported unless it was removed meanwhile).
fn contents(path: &Path, skipped: &mut Vec<String>) -> Option<String> {
    match fs::read(path).map(String::from_utf8) {
        Ok(Ok(text)) => Some(text),
        Ok(Err(err)) => {
            skipped.push(format!(
                "{}: not UTF-8 (invalid byte at offset {})",
                path.display(),
                err.utf8_error().valid_up_to()
            ));
            None
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            skipped.push(format!("{}: {err}", path.display()));
            None
        }
    }
}

/// A message file and its part files, read whole.
fn changed_message(message: &Entry, parts: &[Entry], skipped: &mut Vec<String>) -> Option<ChangedMessage> {
    let data = contents(&message.path, skipped)?;
    let created = serde_json::from_str::<Value>(&data)
        .ok()
        .and_then(|info| info.get("time")?.get("created")?.as_i64())
        .unwrap_or(0);
    let mut active = message.mtime;
    let mut rows =
        OpenCodeMessageRows { id: message.id.clone(), data, parts: Vec::with_capacity(parts.len()) };
    for part in parts {
        if let Some(data) = contents(&part.path, skipped) {
            active = active.max(part.mtime);
            rows.parts.push((part.id.clone(), data));
        }
    }
    Some(ChangedMessage { session: message.parent.clone(), created, active, rows })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::{Duration, SystemTime};

    use annal_engine::{Block, Store, StoreOptions};
    use annal_formats::load_session;
    use serde_json::json;

    use super::*;

    const T: i64 = 1_700_000_000_000;

    fn at(ms: i64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap())
    }

    /// Writes `storage/<path>` with `json` and sets its modification time to `ms`.
    fn put(root: &Path, path: &str, json: &Value, ms: i64) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, serde_json::to_string_pretty(json).unwrap()).unwrap();
        fs::File::options().write(true).open(&path).unwrap().set_modified(at(ms)).unwrap();
    }

    fn message(root: &Path, session: &str, id: &str, role: &str, completed: Option<i64>, ms: i64) {
        let time = match completed {
            Some(end) => json!({"created": ms, "completed": end}),
            None => json!({"created": ms}),
        };
        let info = json!({"id": id, "sessionID": session, "role": role, "time": time});
        put(root, &format!("message/{session}/{id}.json"), &info, ms);
    }

    fn text(root: &Path, message: &str, id: &str, text: &str, ms: i64) {
        let part =
            json!({"id": id, "sessionID": "ses_1", "messageID": message, "type": "text", "text": text});
        put(root, &format!("part/{message}/{id}.json"), &part, ms);
    }

    /// A tree as OpenCode 1.1 left it: a session with a Korean title, a finished exchange.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("storage");
        let info = json!({"id": "ses_1", "projectID": "global", "directory": "/home/ü", "title": "한국어 세션",
            "version": "1.1.3", "time": {"created": T, "updated": T}});
        put(&root, "session/global/ses_1.json", &info, T);
        message(&root, "ses_1", "msg_1", "user", None, T + 100);
        text(&root, "msg_1", "prt_1", "fix the 🐛 in naïve\u{308} code", T + 100);
        message(&root, "ses_1", "msg_2", "assistant", Some(T + 900), T + 900);
        text(&root, "msg_2", "prt_2", "已修复", T + 800);
        (dir, root)
    }

    fn ids(reading: &DbReading) -> Vec<String> {
        let ids = reading.sessions.iter().flat_map(|s| s.records.iter().map(|r| r.entry_id.clone()));
        ids.filter(|id| !id.contains(":info:")).collect()
    }

    #[test]
    fn reads_everything_then_only_what_changed() {
        let (_dir, root) = tree();
        let first = read(&root, None).unwrap();
        assert!(first.skipped.is_empty(), "{:?}", first.skipped);
        assert_eq!(ids(&first), ["msg_1", "msg_2"]);
        assert_eq!(first.since_ms, T + 900);
        let records = &first.sessions[0].records;
        assert_eq!(records[0].blocks, [Block::Text { text: "fix the 🐛 in naïve\u{308} code".into() }]);
        assert!(records[2].meta["session"].contains("한국어 세션"));
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("s.annal"), StoreOptions::default()).unwrap();
        let load = |reading: &DbReading| -> u64 {
            reading.sessions.iter().map(|s| load_session(&store, s.clone()).unwrap().appended).sum()
        };
        assert_eq!(load(&first), 3);

        let again = read(&root, Some(first.since_ms)).unwrap();
        assert_eq!(ids(&again), ["msg_2"], "at the cursor's time");
        assert_eq!(load(&again), 0);

        message(&root, "ses_1", "msg_3", "user", None, T + 2000);
        text(&root, "msg_3", "prt_3", "שלום", T + 2000);
        let next = read(&root, Some(again.since_ms + 1)).unwrap();
        assert_eq!(ids(&next), ["msg_3"]);
        assert_eq!(load(&next), 1);

        text(&root, "msg_1", "prt_1", "fix the 🐛 — please", T + 3000);
        let edited = read(&root, Some(next.since_ms + 1)).unwrap();
        assert_eq!(ids(&edited), ["msg_1"]);
        assert_eq!(
            edited.sessions[0].records[0].blocks,
            [Block::Text { text: "fix the 🐛 — please".into() }]
        );
        assert_eq!(edited.since_ms, T + 3000);
    }

    #[test]
    fn a_message_being_streamed_waits_until_it_is_complete() {
        let (_dir, root) = tree();
        message(&root, "ses_1", "msg_3", "assistant", None, T + 2000);
        text(&root, "msg_3", "prt_3", "Работаю", T + 2500);
        let streaming = read(&root, Some(T + 1000)).unwrap();
        assert_eq!(ids(&streaming), Vec::<String>::new());
        assert_eq!(streaming.since_ms, T + 2500);
        text(&root, "msg_3", "prt_3", "Работаю… готово", T + 2600);
        message(&root, "ses_1", "msg_3", "assistant", Some(T + 2700), T + 2700);
        let done = read(&root, Some(streaming.since_ms)).unwrap();
        assert_eq!(ids(&done), ["msg_3"]);
        assert_eq!(done.since_ms, T + 2700);
    }

    #[test]
    fn unreadable_files_are_skipped_and_named() {
        let (_dir, root) = tree();
        fs::write(root.join("message/ses_1/msg_4.json"), "{\"role\":").unwrap();
        fs::write(root.join("part/msg_2/prt_9.json"), b"{\"type\":\"text\",\"text\":\"\xff\"}").unwrap();
        fs::write(root.join("part/msg_2/.oc-prt_8.json.1.tmp"), "{").unwrap();
        fs::write(root.join("part/msg_2/notes.txt"), "{").unwrap();
        fs::remove_file(root.join("session/global/ses_1.json")).unwrap();
        let reading = read(&root, None).unwrap();
        assert_eq!(reading.skipped.len(), 2, "{:?}", reading.skipped);
        assert!(
            reading.skipped[0].ends_with("prt_9.json: not UTF-8 (invalid byte at offset 23)"),
            "{}",
            reading.skipped[0]
        );
        assert!(reading.skipped[1]
            .ends_with(r#"message "msg_4": not JSON (EOF while parsing a value at line 1 column 8)"#));
        assert_eq!(ids(&reading), ["msg_1", "msg_2"], "without its session file, a session still reads");
    }

    #[test]
    fn what_is_not_a_storage_tree_is_refused_by_name() {
        let (dir, root) = tree();
        fs::remove_dir_all(root.join("message")).unwrap();
        let err = read(&root, None).unwrap_err().to_string();
        assert!(
            err.ends_with(r#"expected table "message" (no folder message/ in the storage tree)"#),
            "{err}"
        );
        let file = dir.path().join("storage.json");
        fs::write(&file, "{}").unwrap();
        let err = read(&file, None).unwrap_err().to_string();
        assert!(err.starts_with("cannot read ") && err.ends_with("storage.json: not a folder"), "{err}");
        assert!(matches!(read(&dir.path().join("absent"), None), Err(SourceError::Io { .. })));
    }
}
