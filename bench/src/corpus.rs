//! The import benchmark's input: the transcript files of a corpus folder, read, detected and
//! parsed the way `annal import` does it, and made distinct per copy so one corpus can be
//! imported many times into one store as if it were many different transcripts.

use std::path::Path;

use annal_engine::Block;
use annal_formats::{detect_format, parse_transcript, ParsedSession, TranscriptFormat};
use anyhow::Context as _;

/// The files of a corpus folder, found by the walker the tests share.
pub use annal_support::corpus::Corpus;

/// One transcript file after the shared part of the pipeline: read, detected and parsed.
#[derive(Debug)]
pub struct ParsedFile {
    /// The detected format; `None` for a file annal cannot read (skipped, as the CLI does).
    pub format: Option<TranscriptFormat>,
    /// The file's length.
    pub bytes: u64,
    /// The sessions it parsed to.
    pub sessions: Vec<ParsedSession>,
    /// Lines the parser skipped.
    pub skipped_lines: u64,
}

/// Reads `path`, detects its format and parses it, exactly as `annal import` does.
///
/// # Errors
/// If the file cannot be read.
pub fn parse_file(path: &Path) -> anyhow::Result<ParsedFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let len = bytes.len() as u64;
    let Some(format) = detect_format(&bytes) else {
        return Ok(ParsedFile { format: None, bytes: len, sessions: Vec::new(), skipped_lines: 0 });
    };
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let parsed = parse_transcript(&bytes, format, &stem);
    Ok(ParsedFile {
        format: Some(format),
        bytes: len,
        skipped_lines: parsed.skipped.len() as u64,
        sessions: parsed.sessions,
    })
}

/// Makes the parsed sessions of one copy distinct from every other copy: the session name and
/// every entryId get the suffix `#c{copy}`, and every payload larger than `blob_threshold`
/// (which annal stores once per content hash, so identical copies would share it) gets a copy
/// marker too. Every copy, the first included, is rewritten the same way, so all copies cost
/// the same to store. Returns how many large payloads were marked.
pub fn make_copy(sessions: &mut [ParsedSession], copy: usize, blob_threshold: usize) -> u64 {
    let suffix = format!("#c{copy}");
    let mut marked = 0;
    for session in sessions {
        session.name.push_str(&suffix);
        if let Some(parent) = &mut session.parent {
            parent.push_str(&suffix);
        }
        for record in &mut session.records {
            record.entry_id.push_str(&suffix);
            for block in &mut record.blocks {
                marked += u64::from(mark_block(block, &suffix, blob_threshold));
            }
        }
    }
    marked
}

/// Marks one block's payload with the copy suffix if annal would move it to its blob table.
fn mark_block(block: &mut Block, suffix: &str, blob_threshold: usize) -> bool {
    match block {
        Block::Text { text } | Block::Thinking { text } if text.len() > blob_threshold => {
            text.push_str(suffix);
        }
        Block::ToolResult { output, .. } if output.len() > blob_threshold => output.push_str(suffix),
        Block::ToolCall { input, .. } if input.len() > blob_threshold => {
            // Keep a JSON object valid (and canonical: `~` sorts after every ASCII letter, so the
            // new key stays last); any other input is carried verbatim and can take the suffix.
            if input.trim_end().ends_with('}') && input.trim_start().starts_with('{') {
                let end = input.trim_end().len() - 1;
                input.insert_str(end, &format!(",\"~copy\":\"{suffix}\""));
            } else {
                input.push_str(suffix);
            }
        }
        Block::Blob { data, .. } => data.extend_from_slice(suffix.as_bytes()),
        _ => return false,
    }
    true
}

/// What the corpus held, counted over every copy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// `.jsonl`/`.json` files read.
    pub files: u64,
    /// Files of a format annal can read, and their bytes: the input of the benchmark.
    pub files_recognised: u64,
    /// Bytes of the recognised files.
    pub input_bytes: u64,
    /// Files detected as no format annal can read (skipped), and their bytes.
    pub files_unrecognised: u64,
    /// Bytes of the unrecognised files.
    pub unrecognised_bytes: u64,
    /// Files per format, by the format's command-line name, in the order formats are detected.
    pub by_format: Vec<(&'static str, u64)>,
    /// Sessions parsed.
    pub sessions: u64,
    /// Records parsed.
    pub records: u64,
    /// Lines the parsers skipped.
    pub skipped_lines: u64,
    /// Payloads above the blob threshold, marked per copy.
    pub large_payloads: u64,
}

impl Tally {
    /// Counts one parsed file (before its sessions are handed to a loader).
    pub fn add(&mut self, file: &ParsedFile) {
        self.files += 1;
        let Some(format) = file.format else {
            self.files_unrecognised += 1;
            self.unrecognised_bytes += file.bytes;
            return;
        };
        self.files_recognised += 1;
        self.input_bytes += file.bytes;
        match self.by_format.iter_mut().find(|(name, _)| *name == format.name()) {
            Some((_, files)) => *files += 1,
            None => {
                self.by_format.push((format.name(), 1));
                let order = |name: &str| TranscriptFormat::ALL.iter().position(|f| f.name() == name);
                self.by_format.sort_by_key(|(name, _)| order(name));
            }
        }
        self.sessions += file.sessions.len() as u64;
        self.records += file.sessions.iter().map(|s| s.records.len() as u64).sum::<u64>();
        self.skipped_lines += file.skipped_lines;
    }
}

#[cfg(test)]
mod tests {
    use annal_engine::{Record, Role};

    use super::*;

    #[test]
    fn copies_are_distinct_and_inputs_stay_json() {
        let mut record = Record::text("e1", Role::Assistant, "x".repeat(40));
        let input = format!("{{\"content\":\"{}\"}}", "y".repeat(40));
        record.blocks.push(Block::ToolCall {
            call_id: "c".into(),
            tool: "Write".into(),
            input,
            target: String::new(),
        });
        let session = ParsedSession {
            name: "s".into(),
            parent: None,
            fork_at: None,
            records: vec![record],
            claimed_hashes: vec![None],
        };
        let mut sessions = vec![session];
        assert_eq!(make_copy(&mut sessions, 3, 16), 2);
        assert_eq!(sessions[0].name, "s#c3");
        assert_eq!(sessions[0].records[0].entry_id, "e1#c3");
        let Block::ToolCall { input, .. } = &sessions[0].records[0].blocks[1] else { panic!("not a call") };
        let value: serde_json::Value = serde_json::from_str(input).unwrap_or_default();
        assert_eq!(value["~copy"], "#c3");
    }

    #[test]
    fn files_of_every_format_are_counted_by_name_in_detection_order() {
        let mut tally = Tally::default();
        let file = |format| ParsedFile { format, bytes: 10, sessions: Vec::new(), skipped_lines: 0 };
        for format in TranscriptFormat::ALL.iter().rev().chain([&TranscriptFormat::Claude]) {
            tally.add(&file(Some(*format)));
        }
        tally.add(&file(None));
        let names: Vec<_> = TranscriptFormat::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(tally.by_format.iter().map(|(name, _)| *name).collect::<Vec<_>>(), names);
        let claude = tally.by_format.iter().find(|(name, _)| *name == "claude").map(|(_, files)| *files);
        assert_eq!(claude, Some(2));
        assert_eq!((tally.files, tally.files_recognised, tally.files_unrecognised), (20, 19, 1));
    }
}
