//! A store's own files in a bad state, through the real binary: a second process at the same
//! time, a read-only store file, a truncated one, the index folder deleted or corrupted.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use annal_engine::{Sharing, Store, StoreOptions};
use serde_json::{json, Value};

use super::{claude_user, entry_ids, error_line, verified};
use crate::support::status;
use crate::support::Sandbox;

#[test]
fn the_store_opened_by_a_second_process_at_the_same_time() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s-first"], "{\"entryId\":\"f1\",\"role\":\"user\"}\n").ok();
    // An import and a series of appends, in separate processes, at once: both complete.
    let file = sandbox.dir().join("long.jsonl");
    let lines: Vec<String> = (0..3_000).map(|i| claude_user("s-import", &format!("i{i}"), "text")).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let mut import = sandbox
        .command(&["import", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for i in 0..10 {
        let run =
            sandbox.annal(&["append", "s-side"], &format!("{{\"entryId\":\"side{i}\",\"role\":\"user\"}}\n"));
        assert_eq!(run.ok().lines(), [i.to_string()]);
    }
    assert!(import.wait().unwrap().success());
    assert_eq!(entry_ids(&sandbox.db, "s-import").len(), 3_000);
    assert_eq!(entry_ids(&sandbox.db, "s-side").len(), 10);

    // An embedder that opened the store for itself alone excludes everyone else, clearly.
    let exclusive =
        Store::open(&sandbox.db, StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() })
            .unwrap();
    let run = sandbox.annal(&["sessions"], "");
    let line = error_line(&run, status::BUSY);
    assert!(
        line.starts_with(&format!(
            "annal: store {} is already open by another process that excludes sharing",
            sandbox.db.display()
        )),
        "{line}"
    );
    let run = sandbox.annal(&["append", "s-first"], "{\"entryId\":\"f2\",\"role\":\"user\"}\n");
    assert!(error_line(&run, status::BUSY).contains("already open by another process"), "{}", run.stderr);
    exclusive.close().unwrap();
    assert_eq!(entry_ids(&sandbox.db, "s-first"), ["f1"]);
    verified(&sandbox);
}

/// The effective user id, from the owner of this process's own `/proc` entry.
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|meta| meta.uid() == 0).unwrap_or(false)
}

#[test]
fn a_read_only_store_file() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s-ro"], "{\"entryId\":\"r1\",\"role\":\"user\"}\n").ok();
    let before = std::fs::read(&sandbox.db).unwrap();
    // A store opened shared is its file and the log beside it (the record is in the log's
    // frames until a checkpoint): both read-only.
    let log = annal_engine::log_path(&sandbox.db);
    for file in [&sandbox.db, &log] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    // Root writes through file permissions, so as root the binary runs as `nobody`, for whom the
    // file is read-only as for its owner. `nobody` may not reach the build folder (under a private
    // home, say): it runs a copy in the sandbox.
    let as_nobody = running_as_root().then(|| {
        std::fs::set_permissions(sandbox.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = sandbox.dir().join("annal");
        std::fs::copy(env!("CARGO_BIN_EXE_annal"), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        copy
    });
    let command = |args: &[&str]| match &as_nobody {
        None => sandbox.command(args),
        Some(binary) => {
            let mut command = Command::new(binary);
            command
                .arg("--db")
                .arg(&sandbox.db)
                .args(args)
                .env_remove("ANNAL_DB")
                .env("HOME", sandbox.dir())
                .env("XDG_DATA_HOME", sandbox.dir().join("data"))
                .uid(65534)
                .gid(65534);
            command
        }
    };
    let expected = format!(
        "annal: store {} cannot be opened for writing (Permission denied (os error 13)): the file or its \
         file system is read-only; annal needs write access to change it (commands that only read it work)",
        sandbox.db.display()
    );
    // Commands that only read open it read-only and work.
    for args in [&["sessions"][..], &["verify"], &["show", "s-ro"], &["export", "s-ro"]] {
        let run = crate::support::run(command(args), "");
        assert_eq!(run.code, Some(0), "annal {args:?}: {}", run.stderr);
    }
    for args in [&["append", "s-ro"][..], &["fork", "s-ro", "--at", "1", "--name", "f"]] {
        let run = crate::support::run(command(args), "{\"entryId\":\"r2\",\"role\":\"user\"}\n");
        assert_eq!(error_line(&run, status::READ_ONLY), expected, "annal {args:?}");
    }
    assert!(std::fs::read(&sandbox.db).unwrap() == before, "the store file is unchanged");
    for file in [&sandbox.db, &log] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert_eq!(entry_ids(&sandbox.db, "s-ro"), ["r1"]);
    verified(&sandbox);
}

#[test]
fn a_truncated_store_file() {
    let sandbox = Sandbox::new();
    let records: String = (0..300)
        .map(|i| format!("{{\"entryId\":\"t{i}\",\"role\":\"tool\",\"blocks\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}\n", "w".repeat(500)))
        .collect();
    sandbox.annal(&["append", "s-cut"], &records).ok();
    let full = std::fs::read(&sandbox.db).unwrap();
    let display = sandbox.db.display().to_string();
    let cut_to = |len: usize| std::fs::write(&sandbox.db, &full[..len]).unwrap();

    cut_to(full.len() / 2);
    let line = error_line(&sandbox.annal(&["verify"], ""), status::CORRUPTED);
    let expected = format!(
        "annal: store {display} is corrupted: File truncated below stored layout: file_len={}, layout_len={}",
        full.len() / 2,
        full.len()
    );
    assert_eq!(line, expected);
    cut_to(100);
    assert_eq!(
        error_line(&sandbox.annal(&["sessions"], ""), status::CORRUPTED),
        format!(
            "annal: store {display} is corrupted: the file ends inside its header (failed to fill whole \
             buffer); was it truncated?"
        )
    );
    cut_to(4);
    assert_eq!(
        error_line(&sandbox.annal(&["sessions"], ""), status::BAD_INPUT),
        format!("annal: {display} is not an annal store: Not a redb database: magic number mismatch")
    );
    // Cut to nothing, it is not mistaken for a new store, not even by a writing command.
    cut_to(0);
    for args in [&["sessions"][..], &["append", "s-cut"]] {
        let run = sandbox.annal(args, "{\"entryId\":\"late\",\"role\":\"user\"}\n");
        assert_eq!(
            error_line(&run, status::BAD_INPUT),
            format!("annal: {display} is not an annal store: the file is empty (a store is never empty; was it truncated?)")
        );
    }
    assert_eq!(std::fs::metadata(&sandbox.db).unwrap().len(), 0);
    // The whole file again: every record is there.
    std::fs::write(&sandbox.db, &full).unwrap();
    assert_eq!(entry_ids(&sandbox.db, "s-cut").len(), 300);
    verified(&sandbox);
}

/// The files of a folder (flat, as an index folder is) and their contents.
fn folder_files(folder: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The first saved index file with this extension.
fn index_file(saved: &[(std::path::PathBuf, Vec<u8>)], extension: &str) -> std::path::PathBuf {
    let found = saved.iter().find(|(path, _)| path.extension().is_some_and(|e| e == extension));
    found.unwrap_or_else(|| panic!("no .{extension} file in the index")).0.clone()
}

#[test]
fn the_index_folder_deleted_or_corrupted_while_the_store_is_closed() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("work.jsonl");
    let call = json!({"type": "assistant", "uuid": "a1", "sessionId": "s-idx",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
            "input": {"command": "curl -s localhost:8080/api/login"}}]}});
    let result = json!({"type": "user", "uuid": "r1", "sessionId": "s-idx",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": "Error: read ECONNRESET at src/api/client.ts"}]}});
    let lines = [
        claude_user("s-idx", "u1", "the login request times out after a deploy"),
        call.to_string(),
        result.to_string(),
        claude_user("s-idx", "u2", "retry the login with a longer timeout"),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    sandbox.annal(&["import", file.to_str().unwrap()], "").ok();
    sandbox.annal(&["append", "s-more"], "{\"entryId\":\"m1\",\"role\":\"user\",\"blocks\":[{\"type\":\"text\",\"text\":\"a timeout in src/api/client.ts\"}]}\n").ok();

    let queries = ["login", "ECONNRESET", "src/api/client.ts", "timeout", "localhost:8080"];
    let search = |query: &str| sandbox.annal(&["history", "search", query, "--json"], "").ok().stdout;
    let before: Vec<String> = queries.iter().map(|query| search(query)).collect();
    let hits = |text: &str| -> Vec<String> {
        let hits: Vec<Value> = serde_json::from_str(text).unwrap();
        hits.iter().map(|hit| format!("{}#{}", hit["entryId"].as_str().unwrap(), hit["blockIndex"])).collect()
    };
    assert_eq!(hits(&before[0]), ["u2#0", "a1#0", "u1#0"]);
    assert_eq!(hits(&before[2]), ["m1#0", "r1#0"]);
    let shown = |session: &str| sandbox.annal(&["show", session, "--json"], "").ok().stdout;
    let stored = (shown("s-idx"), shown("s-more"));

    let folder = annal_query::index_folder(&sandbox.db);
    let saved = folder_files(&folder);
    let restore = || {
        if folder.is_dir() {
            std::fs::remove_dir_all(&folder).unwrap();
        } else if folder.exists() {
            std::fs::remove_file(&folder).unwrap();
        }
        // As annal made it: readable by the store's owner only.
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&folder)
            .unwrap();
        for (path, bytes) in &saved {
            std::fs::write(path, bytes).unwrap();
        }
    };
    let (idx, fast, term, pos) = (
        index_file(&saved, "idx"),
        index_file(&saved, "fast"),
        index_file(&saved, "term"),
        index_file(&saved, "pos"),
    );
    type Damage<'a> = Box<dyn Fn() + 'a>;
    let damages: Vec<(&str, Damage<'_>)> = vec![
        ("the folder deleted", Box::new(|| std::fs::remove_dir_all(&folder).unwrap())),
        (
            "the folder empty",
            Box::new(|| {
                std::fs::remove_dir_all(&folder).unwrap();
                // Made as annal makes it (readable by the store's owner only): this case is
                // about an empty index, not one left open to others.
                std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
                    .create(&folder)
                    .unwrap();
            }),
        ),
        ("garbage in meta.json", Box::new(|| std::fs::write(folder.join("meta.json"), "garbage").unwrap())),
        (
            "a segment file truncated",
            Box::new(|| {
                let bytes = std::fs::read(&idx).unwrap();
                std::fs::write(&idx, &bytes[..bytes.len() / 2]).unwrap();
            }),
        ),
        (
            "bytes inside a segment file overwritten",
            Box::new(|| {
                let mut bytes = std::fs::read(&fast).unwrap();
                let middle = bytes.len() / 2;
                bytes[middle - 8..middle].copy_from_slice(b"garbage!");
                std::fs::write(&fast, bytes).unwrap();
            }),
        ),
        (
            "a segment file zeroed",
            Box::new(|| {
                let len = std::fs::metadata(&term).unwrap().len() as usize;
                std::fs::write(&term, vec![0; len]).unwrap();
            }),
        ),
        ("a segment file deleted", Box::new(|| std::fs::remove_file(&pos).unwrap())),
    ];
    // Each is rebuilt from the journal by the next search (and, once, by `annal reindex`), which
    // finds what it found before; no stored record changes.
    for (round, (what, damage)) in damages.iter().enumerate() {
        restore();
        damage();
        if round == 2 {
            sandbox.annal(&["reindex"], "").ok();
        }
        for (query, expected) in queries.iter().zip(&before) {
            let run = sandbox.annal(&["history", "search", query, "--json"], "").ok();
            assert!(run.stderr.is_empty(), "{what}: {}", run.stderr);
            assert_eq!(&run.stdout, expected, "{what}: a search for {query}");
        }
        verified(&sandbox);
        assert_eq!((shown("s-idx"), shown("s-more")), stored, "{what}: the stored records changed");
    }

    // A file where the folder goes is not the index: it is named, left alone, and nothing is
    // searched until it is moved.
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, "notes").unwrap();
    let reason = format!(
        "the search index folder {} is not a folder; move or delete it, and the index is rebuilt from the \
         journal",
        folder.display()
    );
    assert_eq!(
        error_line(&sandbox.annal(&["history", "search", "login"], ""), status::IO),
        format!("annal: cannot open the search index of {}: {reason}", sandbox.db.display())
    );
    assert_eq!(error_line(&sandbox.annal(&["reindex"], ""), status::IO), format!("annal: {reason}"));
    assert_eq!(std::fs::read_to_string(&folder).unwrap(), "notes");
    verified(&sandbox);
    std::fs::remove_file(&folder).unwrap();
    assert_eq!(search("login"), before[0]);
    assert_eq!((shown("s-idx"), shown("s-more")), stored);
}
