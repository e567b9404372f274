//! Imports every aider chat log in the `aider-chat-history-md` folder of the corpus named by
//! `ANNAL_CORPUS` (real `.aider.chat.history.md` files from public repositories, read-only):
//! each detects as aider, parses to the sessions and input lines counted by hand, skips nothing
//! but a torn last line, parses a cut copy to a prefix of its records, and is imported through
//! the facade (`annal::Annal::import_file`, as `annal import` does) into a fresh store that
//! verifies, then imports again as a no-op. A missing corpus, folder or counted file fails the
//! test.
//!
//! Run: `ANNAL_CORPUS=<corpus folder> cargo test -p annal-tests --features corpus --test corpus -- aider::`

use std::error::Error;
use std::path::{Path, PathBuf};

use annal::import::transcript_stem;
use annal::{Annal, Block, Options, Role};
use annal_formats::{detect_format, parse_transcript, ParsedTranscript, SkipReason, TranscriptFormat};
use annal_support::corpus::corpus_root;

type TestResult = Result<(), Box<dyn Error>>;

const FOLDER: &str = "aider-chat-history-md";

/// What one log must parse to, counted by hand (`grep -c '^# aider chat started at'`,
/// `grep -c '^####'`, and reading the files).
struct Expected {
    file: &'static str,
    sessions: usize,
    /// `####` lines: the lines of every user record.
    input_lines: usize,
    /// Replies of the model, where the count is known.
    replies: Option<usize>,
}

const EXPECTED: &[Expected] = &[
    Expected {
        file: "AFI-Protocol__afi-core__.aider.chat.history.md",
        sessions: 9,
        input_lines: 350,
        replies: None,
    },
    Expected {
        file: "AlexShchuka__mozgoslav__.aider.chat.history.md",
        sessions: 3,
        input_lines: 305,
        replies: None,
    },
    // Four starts, /add and /copy-context commands, and no reply of the model.
    Expected {
        file: "BeehiveInnovations__zen-mcp-server__.aider.chat.history.md",
        sessions: 4,
        input_lines: 25,
        replies: Some(0),
    },
];

/// The logs in the folder, sorted by name; a missing or empty folder is an error naming it.
fn logs() -> Result<Vec<(String, PathBuf)>, Box<dyn Error>> {
    let dir = corpus_root()?.join(FOLDER);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|err| format!("{}: {err}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            files.push((entry.file_name().to_string_lossy().into_owned(), entry.path()));
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("no aider logs in {}", dir.display()).into());
    }
    for expect in EXPECTED {
        if !files.iter().any(|(name, _)| name == expect.file) {
            return Err(format!("the corpus has no file {FOLDER}/{}", expect.file).into());
        }
    }
    Ok(files)
}

fn stem(name: &str) -> &str {
    name.strip_suffix(".md").unwrap_or(name)
}

/// Lines of user records, and assistant records.
fn inputs_and_replies(parsed: &ParsedTranscript) -> (usize, usize) {
    let records = || parsed.sessions.iter().flat_map(|session| &session.records);
    let lines = |blocks: &[Block]| match blocks {
        [Block::Text { text }] => text.split('\n').count(),
        _ => 0,
    };
    let inputs = records().filter(|r| r.role == Role::User).map(|r| lines(&r.blocks)).sum();
    (inputs, records().filter(|r| r.role == Role::Assistant).count())
}

#[test]
fn aider_logs_import_verify_and_reimport() -> TestResult {
    let mut checked = 0;
    for (name, path) in logs()? {
        let bytes = std::fs::read(&path)?;
        assert_eq!(detect_format(&bytes), Some(TranscriptFormat::Aider), "{name}: detected format");
        let parsed = parse_transcript(&bytes, TranscriptFormat::Aider, stem(&name));
        assert_eq!(parse_transcript(&bytes, TranscriptFormat::Aider, stem(&name)), parsed, "{name}");
        let torn_end = !bytes.ends_with(b"\n");
        for (index, skipped) in parsed.skipped.iter().enumerate() {
            let last = index + 1 == parsed.skipped.len();
            assert!(torn_end && last && skipped.reason == SkipReason::Truncated, "{name}: skipped {skipped}");
        }
        let text = String::from_utf8_lossy(&bytes);
        let headers = text.lines().filter(|line| line.starts_with("# aider chat started at ")).count();
        let hashes = text.lines().filter(|line| line.starts_with("####")).count();
        let (inputs, replies) = inputs_and_replies(&parsed);
        assert_eq!(parsed.sessions.len(), headers, "{name}: sessions against the headers");
        assert_eq!(inputs, hashes, "{name}: input lines against the `####` lines");
        assert_eq!(parsed.unrecognised, 0, "{name}: text outside a session");
        if let Some(expect) = EXPECTED.iter().find(|e| e.file == name) {
            checked += 1;
            assert_eq!(parsed.sessions.len(), expect.sessions, "{name}: sessions");
            assert_eq!(inputs, expect.input_lines, "{name}: input lines");
            if let Some(expected) = expect.replies {
                assert_eq!(replies, expected, "{name}: replies");
            }
        }
        let appended = import_and_verify(&path, &bytes)?;
        assert_eq!(appended, parsed.record_count() as u64, "{name}: every record is new in a fresh store");
        println!(
            "{name}: {} sessions, {} records, {inputs} input lines, {replies} replies",
            headers, appended
        );
    }
    assert_eq!(checked, EXPECTED.len(), "files counted by hand that were not checked");
    Ok(())
}

/// Imports the log at `path` (holding `bytes`) into a fresh store as a user does, checks what
/// the import says against what the parser reads under the same name, verifies the store, and
/// imports again as a no-op. Returns the records stored.
fn import_and_verify(path: &Path, bytes: &[u8]) -> Result<u64, Box<dyn Error>> {
    let name = path.display();
    let dir = tempfile::tempdir()?;
    let annal = Annal::open_with(
        dir.path().join("aider.redb"),
        &Options { index_eagerly: false, ..Options::default() },
    )?;
    let summary = annal.import_file(path, None)?;
    assert_eq!(summary.format, Some(TranscriptFormat::Aider), "{name}: imported as");
    assert!(summary.failed.is_empty(), "{name}: sessions not stored: {:?}", summary.failed);
    // The facade names the sessions of every log after its project folder or file name.
    let parsed = parse_transcript(bytes, TranscriptFormat::Aider, &transcript_stem(path));
    let sessions: Vec<&str> = parsed.sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(summary.sessions, sessions, "{name}: sessions");
    assert_eq!(summary.skipped, parsed.skipped, "{name}: skipped lines");
    let report = annal.verify(None)?;
    assert!(report.is_ok(), "verify found problems: {:?}", report.problems);
    let stored: u64 = annal.sessions()?.iter().map(|s| s.len).sum();
    assert_eq!(stored, summary.records_new, "{name}: {summary:?}");
    let again = annal.import_file(path, None)?;
    assert_eq!((again.records_new, again.records_present), (0, summary.records_new), "{name}: {again:?}");
    Ok(summary.records_new)
}

/// A log cut inside a line (aider still writing) parses to a prefix of the whole log's records,
/// its last line reported as truncated.
#[test]
fn a_cut_log_parses_to_a_prefix() -> TestResult {
    let mut compared = 0;
    for (name, path) in logs()? {
        let bytes = std::fs::read(&path)?;
        let full = parse_transcript(&bytes, TranscriptFormat::Aider, "stem");
        for mut cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() * 9 / 10] {
            while cut > 0 && cut < bytes.len() && bytes[cut - 1] == b'\n' {
                cut += 1;
            }
            let part = parse_transcript(&bytes[..cut], TranscriptFormat::Aider, "stem");
            let last = part.skipped.last().map(|s| &s.reason);
            assert_eq!(last, Some(&SkipReason::Truncated), "{name} cut at {cut}");
            assert!(part.sessions.len() <= full.sessions.len(), "{name} cut at {cut}");
            for (short, long) in part.sessions.iter().zip(&full.sessions) {
                assert_eq!(short.name, long.name, "{name} cut at {cut}");
                assert!(short.records.len() <= long.records.len(), "{name} cut at {cut}");
                assert!(short.records[..] == long.records[..short.records.len()], "{name} cut at {cut}");
                compared += short.records.len();
            }
        }
    }
    assert!(compared > 0, "no record of a cut log was compared");
    Ok(())
}
