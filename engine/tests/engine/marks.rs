//! Change marks: what a snapshot read still holds while `Store::mark_now` gives its mark, across
//! handles that share the log as processes do, and no mark, without waiting, while another holds
//! the log's lock.
#![allow(clippy::unwrap_used)]

use std::fs::File;

use annal_engine::{log_path, ChangeMark, Record, Role, Store, StoreOptions};

/// A record of real-world text: CJK, an emoji with a modifier, a combining mark, a wide space.
fn said(id: &str) -> Record {
    Record::text(id, Role::User, "把索引的提交合并到一个事务里\u{3000}👩🏽‍💻 cafe\u{301} — ok")
}

#[test]
fn a_mark_holds_until_a_session_is_appended_to_forked_or_made() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.redb"), StoreOptions::default()).unwrap();
    let empty = store.snapshot().unwrap().mark().expect("a store with a log has marks");
    assert_eq!(store.mark_now().unwrap(), Some(empty), "nothing happened since the snapshot");

    store.append("s", Some(0), vec![said("e1")]).unwrap();
    let appended = store.mark_now().unwrap().unwrap();
    assert_ne!(appended, empty, "an append changes the mark");
    assert_eq!(store.snapshot().unwrap().mark(), Some(appended), "a snapshot begun now has it");
    // Reading changes nothing.
    let _ = store.snapshot().unwrap().session("s").unwrap();
    assert_eq!(store.mark_now().unwrap(), Some(appended));

    store.fork("s", 1, "s~1").unwrap();
    let forked = store.mark_now().unwrap().unwrap();
    assert_ne!(forked, appended, "a fork changes the mark");

    // An append of what is stored already stores nothing, and leaves the mark.
    store.append("s", None, vec![said("e1")]).unwrap();
    assert_eq!(store.mark_now().unwrap(), Some(forked));
}

#[test]
fn another_handle_s_append_changes_the_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.redb");
    let reader = Store::open(&path, StoreOptions::default()).unwrap();
    let writer = Store::open(&path, StoreOptions::default()).unwrap();
    writer.append("s", Some(0), vec![said("e1")]).unwrap();
    let read = reader.snapshot().unwrap();
    assert_eq!(read.session("s").unwrap().unwrap().len, 1);
    let mark = read.mark().unwrap();
    assert_eq!(reader.mark_now().unwrap(), Some(mark));

    writer.append("s", Some(1), vec![said("e2")]).unwrap();
    let now = reader.mark_now().unwrap().unwrap();
    assert_ne!(now, mark, "the other handle's frame is read");
    let again = reader.snapshot().unwrap();
    assert_eq!((again.mark(), again.session("s").unwrap().unwrap().len), (Some(now), 2));
}

#[test]
fn no_mark_while_another_process_holds_the_log_exclusively() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.redb");
    let store = Store::open(&path, StoreOptions::default()).unwrap();
    store.append("s", Some(0), vec![said("e1")]).unwrap();
    let mark = store.mark_now().unwrap();
    assert!(mark.is_some());

    // An open file description of its own, as another process's would be: its `flock` excludes
    // the store's.
    let other = File::options().read(true).write(true).open(log_path(&path)).unwrap();
    other.lock().unwrap();
    assert_eq!(store.mark_now().unwrap(), None, "answered at once, without a mark");
    other.unlock().unwrap();
    assert_eq!(store.mark_now().unwrap(), mark);
}

#[test]
fn marks_cross_as_hex_and_nothing_else_reads_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("m.redb"), StoreOptions::default()).unwrap();
    store.append("s", Some(0), vec![said("e1")]).unwrap();
    let mark = store.mark_now().unwrap().unwrap();
    let hex = mark.to_hex();
    assert_eq!(hex.len(), 32);
    assert_eq!(ChangeMark::from_hex(&hex), Some(mark));
    // 32 bytes whose 16th is inside a character.
    let multi_byte = format!("{}ab", "€".repeat(10));
    for text in
        ["", "0", &hex[1..], &format!("{hex}0"), &"g".repeat(32), &multi_byte, "１２３４５６７８９０１"]
    {
        assert_eq!(ChangeMark::from_hex(text), None, "{text:?}");
    }
}
