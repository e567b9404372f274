//! Fuzz target: arbitrary sessions projected under arbitrary budgets, compacted and grown; see
//! `annal_fuzz::project::check_session`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|session: annal_fuzz::project::Session| annal_fuzz::project::check_session(&session));
