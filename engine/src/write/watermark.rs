//! The durable-position watermark: how far the store-wide position stream is known durable.
//!
//! The writer advances it after each commit returns; readers (the search indexer, a caller that
//! wants to wait until its appends are searchable) wait on it. Invariant: the watermark never
//! exceeds what has been committed, and never moves backwards.

use std::time::Duration;

use crate::sync::{lock, Arc, Condvar, Mutex};

/// A shared, monotonic position that threads can wait on.
#[derive(Debug, Clone)]
pub struct Watermark {
    inner: Arc<(Mutex<u64>, Condvar)>,
}

impl Watermark {
    /// A watermark starting at `position`.
    pub fn new(position: u64) -> Watermark {
        Watermark { inner: Arc::new((Mutex::new(position), Condvar::new())) }
    }

    /// The current position: every position below it is durable.
    pub fn current(&self) -> u64 {
        *lock(&self.inner.0)
    }

    /// Raises the watermark to `position` (never lowers it) and wakes the waiters.
    pub(crate) fn advance(&self, position: u64) {
        let (mutex, condvar) = &*self.inner;
        let mut current = lock(mutex);
        if position > *current {
            *current = position;
            condvar.notify_all();
        }
    }

    /// Waits until the watermark reaches `position` or `timeout` passes; returns the position
    /// it saw last.
    pub fn wait_for(&self, position: u64, timeout: Duration) -> u64 {
        let (mutex, condvar) = &*self.inner;
        let mut current = lock(mutex);
        let deadline = std::time::Instant::now() + timeout;
        while *current < position {
            let now = std::time::Instant::now();
            if now >= deadline {
                break;
            }
            current = match condvar.wait_timeout(current, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        *current
    }
}
