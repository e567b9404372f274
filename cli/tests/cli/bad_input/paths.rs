//! Bad input named by path, through the real binary: a file in no known format, a missing file,
//! a folder with no transcripts; each one clear line and nothing stored lost.
#![allow(clippy::unwrap_used)]

use super::{claude_user, entry_ids, error_line, import_json};
use crate::support::status;
use crate::support::Sandbox;

#[test]
fn a_file_in_an_unknown_format() {
    let sandbox = Sandbox::new();
    let notes = sandbox.dir().join("notes.jsonl");
    std::fs::write(&notes, "{\"a\": 1}\n{\"b\": 2}\n").unwrap();
    let run = sandbox.annal(&["import", notes.to_str().unwrap()], "");
    // The hint names every format `--format` takes, as the registry lists them.
    let formats = annal::import::TranscriptFormat::in_agent_order();
    assert_eq!(formats.len(), annal::import::TranscriptFormat::ALL.len());
    let names: Vec<&str> = formats.into_iter().map(|format| format.name()).collect();
    assert_eq!(
        error_line(&run, status::BAD_INPUT),
        format!(
            "annal: 1 file given is not a transcript annal can read (see above); --format {} reads a \
             file as that format",
            names.join("|")
        )
    );
    assert!(
        run.stderr.starts_with(&format!(
            "{}: not a transcript annal can read; skipped, nothing stored\n",
            notes.display()
        )),
        "{}",
        run.stderr
    );

    // Found in a folder beside a transcript, it is skipped and the rest imported.
    let folder = sandbox.dir().join("mixed");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&notes, folder.join("package.json")).unwrap();
    std::fs::write(folder.join("chat.jsonl"), claude_user("s-mixed", "u1", "hi") + "\n").unwrap();
    let (summary, stderr) = import_json(&sandbox, &folder);
    assert_eq!(summary["filesUnrecognised"], 1);
    assert_eq!(summary["recordsNew"], 1);
    assert!(stderr.contains("package.json: not a transcript annal can read; skipped"), "{stderr}");

    // Read as a format it only looks like (Gemini CLI's log shares Claude Code's `type` and
    // `sessionId`), it is reported and nothing of it is stored.
    let gemini = sandbox.dir().join("gemini.jsonl");
    let lines = [
        r#"{"sessionId":"g1","projectHash":"p","startTime":"2026-11-30T10:00:00Z"}"#,
        r#"{"id":"m1","timestamp":"2026-11-30T10:00:01Z","type":"user","content":"hi"}"#,
        r#"{"id":"m2","timestamp":"2026-11-30T10:00:02Z","type":"gemini","content":"hello"}"#,
    ];
    std::fs::write(&gemini, lines.join("\n") + "\n").unwrap();
    let run = sandbox.annal(&["import", "--format", "claude", gemini.to_str().unwrap()], "");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let reason = format!(
        "{}: read as claude, 3 of its 3 items are of no kind claude writes (first line 1: not a valid record (a line in gemini's format, not claude's)); skipped, nothing stored",
        gemini.display()
    );
    assert!(run.stderr.contains(&reason), "{}", run.stderr);
    assert!(!sandbox.annal(&["sessions"], "").ok().stdout.contains("g1"));

    // A format annal does not know by name is a usage error.
    let run = sandbox.annal(&["import", "--format", "vim", notes.to_str().unwrap()], "");
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("invalid value 'vim' for '--format <FORMAT>'"), "{}", run.stderr);
    assert_eq!(entry_ids(&sandbox.db, "s-mixed"), ["u1"]);
}

#[test]
fn a_missing_file() {
    let sandbox = Sandbox::new();
    let missing = sandbox.dir().join("gone.jsonl");
    let run = sandbox.annal(&["import", missing.to_str().unwrap()], "");
    assert_eq!(
        error_line(&run, status::NOT_FOUND),
        format!("annal: cannot read {}: No such file or directory (os error 2)", missing.display())
    );
    assert!(!sandbox.db.exists(), "a failed import creates no store");
    // A reading command never creates a store either.
    let run = sandbox.annal(&["sessions"], "");
    assert_eq!(
        error_line(&run, status::NOT_FOUND),
        format!("annal: no store at {} (the first `annal append` creates it)", sandbox.db.display())
    );
    assert!(!sandbox.db.exists());
}

#[test]
fn a_folder_with_no_transcripts() {
    let sandbox = Sandbox::new();
    let folder = sandbox.dir().join("docs");
    std::fs::create_dir_all(folder.join("nested")).unwrap();
    std::fs::write(folder.join("README.md"), "# notes\n").unwrap();
    std::fs::write(folder.join("nested").join("log.txt"), "text\n").unwrap();
    let run = sandbox.annal(&["import", folder.to_str().unwrap()], "");
    assert_eq!(
        error_line(&run, status::BAD_INPUT),
        format!(
            "annal: no transcripts (.jsonl, .json or .aider.chat.history.md files) in {}",
            folder.display()
        )
    );
    assert!(!sandbox.db.exists());
}
