//! Every file annal writes beside a store (the search index, its segments and locks, the
//! durability log) is protected as the store file is, at creation and when an index left
//! readable by others is opened again.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use annal::{Annal, Options, Record, Role, SearchRequest, Sharing};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("a file annal wrote").permissions().mode() & 0o777
}

/// Every file and folder below `root`, the root excluded.
fn everything_below(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).expect("a readable folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            found.extend(everything_below(&path));
        }
        found.push(path);
    }
    found
}

/// Writes records in real-world text and searches them, so the index commits segments.
fn fill(annal: &Annal) {
    let texts =
        ["fix the flaky test\u{3000}please", "日本語のテスト 🦀 e\u{301}", &"a long line ".repeat(2_000)];
    for (i, text) in texts.iter().enumerate() {
        annal.append("s", None, vec![Record::text(format!("u{i}"), Role::User, *text)]).expect("an append");
    }
    let hits = annal.search(&SearchRequest::new("flaky")).expect("a search");
    assert_eq!(hits.len(), 1, "the index holds what was appended");
}

/// Asserts nothing below `root` allows more than `file_bits` (folders: plus search).
fn assert_protected(root: &Path, file_bits: u32) {
    let folder_bits = file_bits | ((file_bits & 0o444) >> 2);
    let files = everything_below(root);
    assert!(files.iter().any(|p| p.to_string_lossy().contains(".index")), "an index was written: {files:?}");
    for path in files {
        let allowed = if path.is_dir() { folder_bits } else { file_bits };
        let mode = mode(&path);
        assert_eq!(
            mode & !allowed,
            0,
            "{} is {mode:o}, wider than the store's {file_bits:o}",
            path.display()
        );
    }
}

#[test]
fn every_file_beside_a_new_store_is_the_owners_only() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = dir.path().join("s.redb");
    for sharing in [Sharing::Processes, Sharing::Exclusive] {
        let annal =
            Annal::open_with(&store, &Options { sharing, ..Options::default() }).expect("the store opens");
        fill(&annal);
        if sharing == Sharing::Exclusive {
            // The log exists while the store is open alone.
            assert_protected(dir.path(), 0o600);
        }
        annal.close().expect("the store closes");
        std::fs::remove_file(&store).expect("the store is removed");
        std::fs::remove_dir_all(dir.path().join("s.redb.index")).expect("the index is removed");
    }
    let annal = Annal::open(&store).expect("the store opens");
    fill(&annal);
    assert_protected(dir.path(), 0o600);
    assert_eq!(mode(&store), 0o600);
}

#[test]
fn an_index_left_readable_by_others_is_narrowed_to_the_store() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = dir.path().join("s.redb");
    let annal = Annal::open(&store).expect("the store opens");
    fill(&annal);
    annal.close().expect("the store closes");
    // As an earlier version left it: a world-readable folder and files.
    let index = dir.path().join("s.redb.index");
    for path in everything_below(&index).into_iter().chain([index.clone()]) {
        let wide = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(wide)).expect("chmod");
    }
    // A store its owner shares with a group: the index follows the store, no wider.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let annal = Annal::open(&store).expect("the store opens again");
    fill_more(&annal);
    assert_protected(dir.path(), 0o640);
    assert_eq!(mode(&index), 0o750, "the folder follows the store's bits");
}

/// More records after a reopen, so new segments are written into the narrowed folder.
fn fill_more(annal: &Annal) {
    let record = Record::text("u-more", Role::User, "später: ein zweiter Fehler im Test");
    annal.append("s", None, vec![record]).expect("an append");
    let hits = annal.search(&SearchRequest::new("zweiter")).expect("a search");
    assert_eq!(hits.len(), 1);
}
