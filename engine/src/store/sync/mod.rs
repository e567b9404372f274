//! The sync shim: std's primitives normally, loom's under `cfg(loom)`, so the small concurrent
//! protocols built on it (the durable-position watermark, the compaction claim registry, the
//! shared log's lock, tail and cycle, a write request's answer) are model-checked by loom. Code
//! that depends on crossbeam-channel must stay outside them: loom does not instrument it.

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};

/// Locks a mutex, recovering the data if a panicking thread poisoned it: the protocols built on
/// this shim keep their invariants at every unlock, so the data is still consistent.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Locks a mutex if no other thread holds it (None where one does), recovering a poisoned one as
/// [`lock`] does: for a caller that must not wait.
pub(crate) fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}
