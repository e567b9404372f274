//! The check that a transcript is its format and no other, shared by the fixtures (`import`)
//! and the real transcripts (`corpus`).

use annal_formats::{detect_format, parse_transcript, TranscriptFormat};

/// Whether `format`'s importer would store nothing of `bytes`.
fn refuses(format: TranscriptFormat, bytes: &[u8]) -> bool {
    let parsed = parse_transcript(bytes, format, "f");
    parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised
}

/// Each problem found with one file, as a line.
pub(crate) fn check(name: &str, format: TranscriptFormat, bytes: &[u8]) -> Vec<String> {
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
