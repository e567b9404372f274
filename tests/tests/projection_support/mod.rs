//! Shared by the projection and checkpoint tests: the shaped sessions (annal-support's session
//! family), a fresh store, and checks of the properties every projection must have.
#![allow(dead_code)]

pub(crate) mod compaction;

pub(crate) use annal_support::projection_checks::*;
pub(crate) use annal_support::sessions::{shaped, Shape};

use annal_engine::{Store, StoreOptions};

/// A store in a fresh temporary folder.
pub(crate) fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path().join("annal.redb"), StoreOptions::default()).expect("open store");
    (dir, store)
}
