//! The facade used as an application uses it, one test binary: one `Annal` shared by many
//! threads (`threads.rs`), agents' databases imported by their path (`import_databases.rs`), and
//! every file beside a store protected as the store is (`permissions.rs`, Unix only).

mod import_databases;
#[cfg(unix)]
mod permissions;
mod threads;
