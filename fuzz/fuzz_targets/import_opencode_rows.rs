//! Fuzz target: arbitrary rows for the opencode_rows importer (placeholder until the importer lands).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data;
});
