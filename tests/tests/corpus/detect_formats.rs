//! Every real transcript of the corpus named by `ANNAL_CORPUS` is detected as exactly its format
//! and refused by every other importer (the check `import`'s fixtures pass too); transcripts of
//! agents annal does not read are detected as no format. A missing corpus or folder fails.

use annal_formats::{detect_format, TranscriptFormat};

use crate::detection::check;

#[test]
fn each_corpus_transcript_is_its_format_and_no_other() -> Result<(), Box<dyn std::error::Error>> {
    let root = annal_support::corpus::corpus_root()?;
    let folders = [
        ("claude-code-jsonl", TranscriptFormat::Claude),
        ("codex-rollout-jsonl", TranscriptFormat::Codex),
        ("opencode-export-json", TranscriptFormat::OpenCode),
        ("gemini-cli-json", TranscriptFormat::Gemini),
        ("aider-chat-history-md", TranscriptFormat::Aider),
        ("pi-jsonl", TranscriptFormat::Pi),
        ("openhands-trajectory-json", TranscriptFormat::OpenHands),
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
    for folder in ["swe-agent-traj"] {
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
