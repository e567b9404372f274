//! Fuzz target: arbitrary queries and filters against a small fixed store and its index; see
//! `annal_fuzz::search::check_search`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|search: annal_fuzz::search::Search| annal_fuzz::search::check_search(&search));
