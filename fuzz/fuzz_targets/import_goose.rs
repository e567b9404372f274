//! Fuzz target: arbitrary rows for the goose importer (placeholder until the importer lands).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data;
});
