//! Fuzz target: arbitrary bytes as the JSON lines `annal append` reads from stdin; see
//! `annal_fuzz::check_append_lines`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| annal_fuzz::check_append_lines(data));
