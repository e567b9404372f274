//! Importing the databases `sync` reads by their path (`annal import PATH`): OpenCode's
//! `opencode.db`, Crush's `crush.db` and goose's `sessions.db`, each built from the agent's own
//! schema and put where no agent keeps it, read by its tables; a folder holding one; OpenCode's
//! older `storage/` folder; a second import storing nothing; and a database of no schema annal
//! reads refused with one error naming it.

use std::error::Error;
use std::path::Path;

use annal::import::transcript_files;
use annal::snapshot::BlockView;
use annal::sync::Agent;
use annal::Annal;
use annal_support::agent_schemas::{CRUSH, GOOSE, OPENCODE};
use rusqlite::{params, Connection};

type TestResult = Result<(), Box<dyn Error>>;

/// An OpenCode database with one session: a question and its finished answer.
fn opencode_db(path: &Path) -> TestResult {
    let db = Connection::open(path)?;
    db.execute_batch(OPENCODE)?;
    db.execute_batch(
        "INSERT INTO project VALUES ('p1', '/src/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');
         INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
            VALUES ('ses_1', 'p1', 'quiet-owl', '/src/app', '解析器の修正 🦀', '1.2.6', 1000, 2500);",
    )?;
    let user = r#"{"role":"user","time":{"created":1000}}"#;
    let answer =
        r#"{"role":"assistant","parentID":"msg_1","time":{"created":2000,"completed":2500},"finish":"stop"}"#;
    for (id, at, data, text) in
        [("msg_1", 1000, user, "rename the 解析器 module"), ("msg_2", 2500, answer, "renamed ✓")]
    {
        db.execute("INSERT INTO message VALUES (?1, 'ses_1', ?2, ?2, ?3)", params![id, at, data])?;
        let part = serde_json::json!({"type": "text", "text": text}).to_string();
        db.execute(
            "INSERT INTO part VALUES (?1, ?2, 'ses_1', ?3, ?3, ?4)",
            params![format!("prt_{id}"), id, at, part],
        )?;
    }
    Ok(())
}

/// A Crush database with one session: a question and its finished answer.
fn crush_db(path: &Path) -> TestResult {
    let db = Connection::open(path)?;
    db.execute_batch(CRUSH)?;
    db.execute_batch(
        r#"INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('cs1', 'Refactor 日本語', 1751991000, 1751991000);
         INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
            ('m1', 'cs1', 'user', '[{"type":"text","data":{"text":"fix the build 🦀"}}]', 1751991001, 1751991001);
         INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, finished_at) VALUES
            ('m2', 'cs1', 'assistant', '[{"type":"text","data":{"text":"fixed"}},{"type":"finish","data":{"reason":"stop","time":1}}]',
             1751991002, 1751991002, 1751991002);"#,
    )?;
    Ok(())
}

/// A goose database with one session: a question and its answer.
fn goose_db(path: &Path) -> TestResult {
    let db = Connection::open(path)?;
    db.execute_batch(GOOSE)?;
    db.execute_batch(
        r#"INSERT INTO sessions (id, name, working_dir) VALUES ('20261130_1', 'Café ☕', '/src/app');
         INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES
            ('msg_a', '20261130_1', 'user', '[{"type":"text","text":"list the files"}]', 1764496800),
            ('msg_b', '20261130_1', 'assistant', '[{"type":"text","text":"a.rs b.rs"}]', 1764496801);"#,
    )?;
    Ok(())
}

/// One agent's database: its file name, how it is built, whose it is, its session and the
/// texts said in it.
struct Case {
    name: &'static str,
    build: fn(&Path) -> TestResult,
    agent: Agent,
    session: &'static str,
    said: [&'static str; 2],
}

/// The text blocks of a session, in order.
fn texts(annal: &Annal, session: &str) -> Result<Vec<String>, Box<dyn Error>> {
    let snapshot = annal.snapshot()?;
    let mut out = Vec::new();
    for guard in snapshot.records(session, 0..u64::MAX)? {
        let guard = guard?;
        for block in guard.view()?.blocks() {
            if let BlockView::Text { text } = block {
                out.push(snapshot.text(text)?.into_owned());
            }
        }
    }
    Ok(out)
}

#[test]
fn each_database_imports_by_its_path_and_again_stores_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let annal = Annal::open(dir.path().join("annal.redb"))?;
    let cases = [
        Case {
            name: "opencode.db",
            build: opencode_db,
            agent: Agent::OpenCode,
            session: "ses_1",
            said: ["rename the 解析器 module", "renamed ✓"],
        },
        Case {
            name: "crush.db",
            build: crush_db,
            agent: Agent::Crush,
            session: "cs1",
            said: ["fix the build 🦀", "fixed"],
        },
        Case {
            name: "sessions.db",
            build: goose_db,
            agent: Agent::Goose,
            session: "20261130_1",
            said: ["list the files", "a.rs b.rs"],
        },
    ];
    for Case { name, build, agent, session, said } in cases {
        // Copied somewhere no agent keeps it: the tables say whose it is.
        let path = dir.path().join("copies").join(agent.name()).join(name);
        std::fs::create_dir_all(path.parent().ok_or("a folder")?)?;
        build(&path)?;
        let first = annal.import_file(&path, None)?;
        assert_eq!((first.agent, first.format), (Some(agent), None), "{name}");
        assert_eq!(first.sessions, [session], "{name}");
        assert!(first.failed.is_empty() && first.skipped_rows.is_empty(), "{name}: {first:?}");
        // Each message, and the session's own row as a record.
        assert_eq!(first.records_new, 3, "{name}: {first:?}");
        assert_eq!(texts(&annal, session)?, said, "{name}");
        let again = annal.import_file(&path, None)?;
        assert_eq!((again.records_new, again.records_present), (0, 3), "{name}: {again:?}");
    }
    Ok(())
}

#[test]
fn a_folder_is_walked_to_the_databases_and_storage_it_holds() -> TestResult {
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("app");
    std::fs::create_dir_all(project.join(".crush"))?;
    crush_db(&project.join(".crush/crush.db"))?;
    // OpenCode's older storage tree: one store, not a folder of JSON files.
    let storage = project.join("opencode/storage");
    let info = r#"{"id":"ses_9","projectID":"global","directory":"/src/app","title":"한국어","version":"1.1.3","time":{"created":1,"updated":1}}"#;
    let user = r#"{"id":"msg_9","sessionID":"ses_9","role":"user","time":{"created":2}}"#;
    let part = r#"{"id":"prt_9","sessionID":"ses_9","messageID":"msg_9","type":"text","text":"안녕 👋"}"#;
    for (file, json) in [
        ("session/global/ses_9.json", info),
        ("message/ses_9/msg_9.json", user),
        ("part/msg_9/prt_9.json", part),
    ] {
        let path = storage.join(file);
        std::fs::create_dir_all(path.parent().ok_or("a folder")?)?;
        std::fs::write(path, json)?;
    }
    let found = transcript_files(&project)?;
    assert_eq!(found, [project.join(".crush/crush.db"), storage.clone()]);

    let annal = Annal::open(dir.path().join("annal.redb"))?;
    let imported: Vec<_> =
        found.iter().map(|path| annal.import_file(path, None)).collect::<Result<_, _>>()?;
    assert_eq!(imported[0].sessions, ["cs1"]);
    assert_eq!(
        (imported[1].agent, imported[1].sessions.as_slice()),
        (Some(Agent::OpenCode), &["ses_9".to_owned()][..])
    );
    assert_eq!(texts(&annal, "ses_9")?, ["안녕 👋"]);
    assert_eq!(annal.import_file(&storage, None)?.records_new, 0);
    Ok(())
}

#[test]
fn a_database_of_an_unknown_schema_is_one_error_naming_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("notes.db");
    Connection::open(&path)?.execute_batch("CREATE TABLE notes (id INTEGER, body TEXT);")?;
    let annal = Annal::open(dir.path().join("annal.redb"))?;
    let err = annal.import_file(&path, None).err().ok_or("an unknown schema was imported")?;
    assert!(matches!(&err, annal::Error::Source(_)), "{err:?}");
    let message = annal::error::message(&err);
    assert!(message.starts_with(&format!("{}: ", path.display())) && !message.contains('\n'), "{message}");
    assert_eq!(err.kind(), annal::error::ErrorKind::BadInput);
    assert!(annal.snapshot()?.sessions()?.is_empty(), "nothing was stored");
    Ok(())
}
