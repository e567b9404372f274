//! Every format is told from every other, both ways: each fixture (built from the shapes each
//! agent writes) and, with the `corpus` feature, each real transcript is detected as exactly its
//! format, and every other importer refuses it (reads no record from it, or finds most of it of
//! no kind it knows, which `annal import` and `annal sync` report instead of storing).

use annal_formats::{detect_format, parse_transcript, TranscriptFormat};

/// One small transcript per format, as its agent writes it.
fn fixtures() -> Vec<(TranscriptFormat, String)> {
    use TranscriptFormat::*;
    let claude = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"fix the 解析器 🦀"}}"#,
        r#"{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s1","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}"#,
    ]
    .join("\n");
    let codex = [
        r#"{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/src"}}"#,
        r#"{"timestamp":"2026-11-30T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
    ]
    .join("\n");
    let opencode = r#"{"info":{"id":"ses_1","title":"t"},"messages":[{"info":{"id":"msg_1","role":"user","sessionID":"ses_1","time":{"created":1}},"parts":[{"id":"prt_1","type":"text","text":"hi"}]}]}"#;
    let annal = [
        r#"{"format":"annal-jsonl","version":1,"session":"s"}"#,
        r#"{"entryId":"e1","role":"user","blocks":[{"type":"text","text":"hi"}]}"#,
    ]
    .join("\n");
    let gemini_log = [
        r#"{"sessionId":"g1","projectHash":"p","startTime":"2026-11-30T10:00:00Z","lastUpdated":"2026-11-30T10:00:00Z"}"#,
        r#"{"id":"m1","timestamp":"2026-11-30T10:00:01Z","type":"user","content":"hi"}"#,
        r#"{"id":"m2","timestamp":"2026-11-30T10:00:02Z","type":"gemini","content":"hello"}"#,
    ]
    .join("\n");
    let gemini_json = "{\n  \"sessionId\": \"g2\",\n  \"projectHash\": \"p\",\n  \"startTime\": \"2026-11-30T10:00:00Z\",\n  \"lastUpdated\": \"2026-11-30T10:00:00Z\",\n  \"messages\": [\n    {\"id\": \"m1\", \"timestamp\": \"2026-11-30T10:00:01Z\", \"type\": \"user\", \"content\": \"hi\"}\n  ]\n}\n";
    let aider = "\n# aider chat started at 2026-11-30 10:00:00\n\n> Add .gitignore to git? (Y)es/(N)o [Yes]: y  \n\n#### fix the parser  \n\nDone: `src/parse.rs` now handles it.\n\n";
    let cline = r#"[{"role":"user","content":[{"type":"text","text":"<task>fix it</task>"}]},{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.rs"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"fn main() {}"}]}]"#;
    vec![
        (Claude, claude),
        (Codex, codex),
        (OpenCode, opencode.to_owned()),
        (Annal, annal),
        (Gemini, gemini_log),
        (Gemini, gemini_json.to_owned()),
        (Aider, aider.to_owned()),
        (Cline, cline.to_owned()),
    ]
}

/// Whether `format`'s importer would store nothing of `bytes`.
fn refuses(format: TranscriptFormat, bytes: &[u8]) -> bool {
    let parsed = parse_transcript(bytes, format, "f");
    parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised
}

/// Each problem found with one file, as a line.
fn check(name: &str, format: TranscriptFormat, bytes: &[u8]) -> Vec<String> {
    let mut problems = Vec::new();
    if detect_format(bytes) != Some(format) {
        problems.push(format!("{name}: detected as {:?}, not {format}", detect_format(bytes)));
    }
    if refuses(format, bytes) {
        problems.push(format!("{name}: its own importer ({format}) refuses it"));
    }
    for other in TranscriptFormat::ALL.into_iter().filter(|&other| other != format) {
        if !refuses(other, bytes) {
            problems.push(format!("{name} ({format}): the {other} importer would store it"));
        }
    }
    problems
}

#[test]
fn each_fixture_is_its_format_and_no_other() {
    let problems: Vec<String> = fixtures()
        .iter()
        .enumerate()
        .flat_map(|(i, (format, text))| check(&format!("fixture {i}"), *format, text.as_bytes()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[cfg(feature = "corpus")]
#[test]
fn each_corpus_transcript_is_its_format_and_no_other() -> Result<(), Box<dyn std::error::Error>> {
    let root = annal_support::corpus::corpus_root()?;
    let folders = [
        ("claude-code-jsonl", TranscriptFormat::Claude),
        ("codex-rollout-jsonl", TranscriptFormat::Codex),
        ("opencode-export-json", TranscriptFormat::OpenCode),
        ("gemini-cli-json", TranscriptFormat::Gemini),
        ("aider-chat-history-md", TranscriptFormat::Aider),
    ];
    let mut problems = Vec::new();
    let mut checked = 0;
    for (folder, format) in folders {
        let dir = root.join(folder);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|e| format!("the corpus has no {folder} folder: {e}"))?
            .collect::<Result<Vec<_>, _>>()?;
        files.sort_by_key(std::fs::DirEntry::file_name);
        assert!(!files.is_empty(), "no transcripts in {}", dir.display());
        for entry in files {
            let bytes = std::fs::read(entry.path())?;
            problems.extend(check(
                &format!("{folder}/{}", entry.file_name().to_string_lossy()),
                format,
                &bytes,
            ));
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} corpus files");
    // Agents annal does not read: found in a folder, such a file is reported and skipped.
    for folder in ["openhands-trajectory-json", "swe-agent-traj"] {
        let dir = root.join(folder);
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("the corpus has no {folder} folder: {e}"))? {
            let path = entry?.path();
            let detected = detect_format(&std::fs::read(&path)?);
            if detected.is_some() {
                problems.push(format!("{}: detected as {detected:?}, a format it is not", path.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}
