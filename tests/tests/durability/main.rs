//! The journal's durability and correctness. Through the facade (`annal::Annal`), as a user
//! meets them: read-only opens, several threads on one handle, a store of a newer format and
//! numbers kept through export and import. Through the engine's `Store`, for what only it
//! reaches: crashes and I/O faults on a simulated disk, corrupted and truncated images, the
//! durability log, stores of format versions 1 and 2, several processes on one store, the file's
//! length after a load, and the reference model under random workloads.

mod alone_log;
mod bad_input;
mod concurrency;
mod corruption;
mod crash;
mod file_size;
mod format_v1;
mod format_v2;
mod log;
mod model;
mod multiprocess;
mod read_only;
mod shared_kills;
