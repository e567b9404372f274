//! Fuzz target: arbitrary rows for the crush importer (placeholder until the importer lands).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data;
});
