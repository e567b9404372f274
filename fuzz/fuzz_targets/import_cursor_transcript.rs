//! Fuzz target: arbitrary bytes as a Cursor agent transcript; see `annal_fuzz::check_import`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| annal_fuzz::check_import(data, annal_formats::TranscriptFormat::CursorTranscript));
