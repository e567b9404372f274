//! Fuzz target: arbitrary lines as OpenAI Responses items; see
//! `annal_fuzz::check_responses_items`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| annal_fuzz::check_responses_items(data));
