//! An index folder damaged while its store is closed: every kind of damage found on open is
//! rebuilt from the journal, giving the same documents and hits; an undamaged index is opened
//! as it is; something other than a folder in the index's place is reported and left alone.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use annal_engine::{Block, Record, Role, Store, StoreOptions};
use annal_query::{IndexError, IndexOptions, IndexedBlock, SearchIndex, SearchRequest};

const WAIT: Duration = Duration::from_secs(60);

fn record(id: &str, blocks: Vec<Block>) -> Record {
    Record { entry_id: id.into(), role: Role::Assistant, timestamp: None, blocks, meta: Default::default() }
}

/// A store of two sessions whose index has several segments (one commit per append, as the
/// indexer commits what it finds), then closed. Few enough segments that tantivy starts no
/// merge: a merge thread outlives `close` and would write into the folder as a test damages it;
/// and each more than twice the ones before, which the end of indexing does not merge.
fn indexed_store(dir: &Path) -> (Arc<Store>, PathBuf) {
    let store = Arc::new(Store::open(dir.join("s.redb"), StoreOptions::default()).unwrap());
    // One indexing thread, so each commit is one segment of the sizes below.
    let options =
        IndexOptions { commit_interval: Duration::ZERO, writer_threads: 1, ..IndexOptions::default() };
    let index = SearchIndex::open(Arc::clone(&store), options).unwrap();
    for (i, count) in [3, 12, 60].into_iter().enumerate() {
        let records = (0..count)
            .map(|j| {
                let id = format!("r{i}-{j}");
                record(
                    &id,
                    vec![
                        Block::Text { text: format!("token{i}x{j} in the words of {id}") },
                        Block::ToolCall {
                            call_id: format!("c{id}"),
                            tool: "Bash".into(),
                            input: format!("{{\"command\":\"grep -r ident-{i}-{j} src/\"}}"),
                            target: String::new(),
                        },
                        Block::Blob { media_type: "image/png".into(), data: vec![i as u8; 64] },
                    ],
                )
            })
            .collect();
        store.append(&format!("s{}", i % 2), None, records).unwrap();
        index.wait_searchable(WAIT).unwrap();
    }
    let folder = index.folder().to_path_buf();
    index.close().unwrap();
    (store, folder)
}

/// Opens the index, waits for it to catch up, and returns its blocks and a few searches.
fn open_and_read(store: &Arc<Store>) -> (Vec<IndexedBlock>, Vec<Vec<String>>, u64) {
    let index = SearchIndex::open(Arc::clone(store), IndexOptions::default()).unwrap();
    index.wait_searchable(WAIT).unwrap();
    let blocks = index.indexed_blocks().unwrap();
    let searches = ["token2x7", "ident-2-24", "words", "src/"]
        .iter()
        .map(|query| {
            let mut request = SearchRequest::new(*query);
            request.limit = 1000;
            index.search(&request).unwrap().iter().map(|hit| hit.id()).collect()
        })
        .collect();
    let documents = index.status().documents;
    index.close().unwrap();
    (blocks, searches, documents)
}

/// The folder's files and their contents.
fn files(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    out.sort();
    out
}

fn restore(folder: &Path, saved: &[(PathBuf, Vec<u8>)]) {
    if folder.is_dir() {
        std::fs::remove_dir_all(folder).unwrap();
    } else if folder.exists() {
        std::fs::remove_file(folder).unwrap();
    }
    std::fs::create_dir(folder).unwrap();
    for (path, bytes) in saved {
        std::fs::write(path, bytes).unwrap();
    }
}

/// The saved segment files with this extension.
fn segment_files<'a>(saved: &'a [(PathBuf, Vec<u8>)], extension: &str) -> Vec<&'a Path> {
    let files: Vec<&Path> = saved
        .iter()
        .map(|(path, _)| path.as_path())
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect();
    assert!(!files.is_empty(), "no .{extension} file");
    files
}

#[test]
fn a_damaged_index_folder_is_rebuilt_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let (store, folder) = indexed_store(dir.path());
    let saved = files(&folder);
    let (blocks, searches, documents) = open_and_read(&store);
    // Each record: a text and a tool call; the image has no document.
    assert_eq!(blocks.len(), 3 * 25 * 2);
    assert_eq!(documents, blocks.len() as u64);
    assert_eq!(searches[0], ["r2-7#0"]);
    assert_eq!(searches[1], ["r2-24#1"]);
    assert_eq!(searches[2].len(), 75);
    assert!(
        saved.iter().filter(|(path, _)| path.extension().is_some_and(|e| e == "idx")).count() > 1,
        "the index has several segments"
    );
    // Opened undamaged, the index is kept as it is, not rebuilt: it is searchable up to the
    // journal's end at once, before its indexer has looked at the journal.
    let end = store.snapshot().unwrap().position_end().unwrap();
    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap();
    assert_eq!(index.status().searchable, end);
    index.close().unwrap();

    type Damage = Box<dyn Fn(&Path)>;
    let mut damages: Vec<(String, Damage)> = vec![
        ("the folder deleted".into(), Box::new(|folder| std::fs::remove_dir_all(folder).unwrap())),
        (
            "the folder emptied".into(),
            Box::new(|folder| {
                std::fs::remove_dir_all(folder).unwrap();
                std::fs::create_dir(folder).unwrap();
            }),
        ),
        (
            "garbage in meta.json".into(),
            Box::new(|folder| std::fs::write(folder.join("meta.json"), "{ garbage").unwrap()),
        ),
        ("meta.json empty".into(), Box::new(|folder| std::fs::write(folder.join("meta.json"), "").unwrap())),
        (
            "meta.json deleted".into(),
            Box::new(|folder| std::fs::remove_file(folder.join("meta.json")).unwrap()),
        ),
        (
            "meta.json cut in half".into(),
            Box::new(|folder| {
                let meta = std::fs::read(folder.join("meta.json")).unwrap();
                std::fs::write(folder.join("meta.json"), &meta[..meta.len() / 2]).unwrap();
            }),
        ),
        (
            "garbage in .managed.json".into(),
            Box::new(|folder| std::fs::write(folder.join(".managed.json"), "[").unwrap()),
        ),
    ];
    for extension in ["idx", "pos", "term", "fieldnorm", "fast", "store"] {
        let file = segment_files(&saved, extension)[0].to_path_buf();
        let (cut, overwrite, zero, gone) = (file.clone(), file.clone(), file.clone(), file);
        damages.push((
            format!("a .{extension} file cut short"),
            Box::new(move |_| {
                let bytes = std::fs::read(&cut).unwrap();
                std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
            }),
        ));
        damages.push((
            format!("bytes inside a .{extension} file overwritten"),
            Box::new(move |_| {
                let mut bytes = std::fs::read(&overwrite).unwrap();
                let middle = bytes.len() / 2;
                for (i, byte) in bytes[middle.saturating_sub(8)..middle].iter_mut().enumerate() {
                    *byte ^= 0x5A + i as u8;
                }
                std::fs::write(&overwrite, bytes).unwrap();
            }),
        ));
        damages.push((
            format!("a .{extension} file zeroed"),
            Box::new(move |_| {
                let len = std::fs::metadata(&zero).unwrap().len() as usize;
                std::fs::write(&zero, vec![0; len]).unwrap();
            }),
        ));
        damages.push((
            format!("a .{extension} file deleted"),
            Box::new(move |_| std::fs::remove_file(&gone).unwrap()),
        ));
    }
    for (what, damage) in &damages {
        restore(&folder, &saved);
        damage(&folder);
        let (after, found, count) = open_and_read(&store);
        assert_eq!(after, blocks, "{what}: the rebuilt index has other documents");
        assert_eq!(found, searches, "{what}: the rebuilt index finds other hits");
        assert_eq!(count, documents, "{what}");
    }
}

#[test]
fn a_file_where_the_index_folder_goes_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (store, folder) = indexed_store(dir.path());
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, "not an index").unwrap();
    let err = SearchIndex::open(Arc::clone(&store), IndexOptions::default()).unwrap_err();
    assert!(matches!(&err, IndexError::NotAFolder { path } if *path == folder), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "the search index folder {} is not a folder; move or delete it, and the index is rebuilt \
             from the journal",
            folder.display()
        )
    );
    let err = SearchIndex::rebuild(&store, &IndexOptions::default(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, IndexError::NotAFolder { .. }), "{err:?}");
    assert_eq!(std::fs::read_to_string(&folder).unwrap(), "not an index");
    // Moved away, the index is rebuilt in its place.
    std::fs::remove_file(&folder).unwrap();
    let (blocks, searches, _) = open_and_read(&store);
    assert_eq!(blocks.len(), 150);
    assert_eq!(searches[0], ["r2-7#0"]);
}

/// Sets every file's modification time to `when`.
fn touch(folder: &Path, when: std::time::SystemTime) {
    for (path, _) in files(folder) {
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    }
}

/// Sets every file's modification time to one fixed day in the past, as if the index had been
/// written long before this open.
fn settle(folder: &Path) {
    touch(folder, std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000));
}

/// The segment files the index remembers as verified.
fn remembered(folder: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(folder.join("annal-verified")).unwrap_or_default();
    text.lines().skip(1).filter_map(|line| line.split('\t').next()).map(str::to_owned).collect()
}

#[test]
fn a_verified_index_is_read_once_and_later_damage_is_still_found() {
    let dir = tempfile::tempdir().unwrap();
    let (store, folder) = indexed_store(dir.path());
    // Files written just now are not remembered (a write in the same clock tick would not show).
    // Stamped now, so a slow machine cannot let the first segments settle before this open.
    touch(&folder, std::time::SystemTime::now());
    let (blocks, searches, _) = open_and_read(&store);
    let segments: Vec<PathBuf> = files(&folder)
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| {
            ["idx", "pos", "term", "store"].iter().any(|e| path.extension().is_some_and(|x| x == *e))
        })
        .collect();
    assert!(remembered(&folder).is_empty(), "{:?}", remembered(&folder));
    settle(&folder);
    open_and_read(&store);
    let names = remembered(&folder);
    for segment in &segments {
        let name = segment.file_name().unwrap().to_string_lossy().into_owned();
        assert!(names.contains(&name), "{name} is not remembered: {names:?}");
    }
    let saved = files(&folder);
    // A remembered file overwritten later has another modification time: read whole, rebuilt.
    let target = segments.iter().find(|p| p.extension().is_some_and(|e| e == "store")).unwrap().clone();
    let mut bytes = std::fs::read(&target).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xA5;
    std::fs::write(&target, &bytes).unwrap();
    let (after, found, _) = open_and_read(&store);
    assert_eq!((after, found), (blocks.clone(), searches.clone()), "overwritten .store");
    // A remembered file whose footer is damaged is found by the footer read, even with its old
    // size and time put back.
    restore(&folder, &saved);
    settle(&folder);
    let stamp_source = std::fs::metadata(&target).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&target).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(&target, &bytes).unwrap();
    std::fs::File::options().write(true).open(&target).unwrap().set_modified(stamp_source).unwrap();
    let (after, found, _) = open_and_read(&store);
    assert_eq!((after, found), (blocks, searches), "damaged footer");
}
