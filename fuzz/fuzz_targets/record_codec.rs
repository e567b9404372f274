//! Fuzz target: arbitrary bytes into the record codec's validated access. Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = annal_engine::check_record_bytes(data);
});
