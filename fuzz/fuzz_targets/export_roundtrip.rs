//! Fuzz target: arbitrary sessions (built with `arbitrary`) exported as annal JSONL and imported
//! into another store; see `annal_fuzz::arb::check_roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|session: annal_fuzz::arb::Session| annal_fuzz::arb::check_roundtrip(&session));
