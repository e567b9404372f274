//! Opening: a store that does not exist yet, created by several threads of one process at once.

use std::sync::{Arc, Barrier};

use annal_engine::{Record, Role, Store, StoreOptions};

#[test]
fn threads_creating_one_new_store_at_once_all_open_it() {
    for round in 0..20 {
        let dir = tempfile::tempdir().expect("dir");
        let path = Arc::new(dir.path().join(format!("新しい store {round}.redb")));
        let start = Arc::new(Barrier::new(3));
        let opens: Vec<_> = (0..3)
            .map(|thread| {
                let (path, start) = (Arc::clone(&path), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    let store = Store::open(path.as_path(), StoreOptions::default())
                        .map_err(|err| format!("thread {thread}: {err}"))?;
                    let record = Record::text(format!("t{thread}"), Role::User, "héllo 👋🏽 世界");
                    store
                        .append(&format!("s{thread}"), Some(0), vec![record])
                        .map_err(|err| err.to_string())?;
                    Ok::<_, String>(store)
                })
            })
            .collect();
        let stores: Vec<Store> =
            opens.into_iter().map(|open| open.join().expect("thread").expect("open")).collect();
        drop(stores);
        let store = Store::open(path.as_path(), StoreOptions::default()).expect("reopen");
        let snapshot = store.snapshot().expect("snapshot");
        for thread in 0..3 {
            assert!(snapshot.session(&format!("s{thread}")).expect("read").is_some(), "round {round}");
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("creating"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
