//! The time the indexer's commit policy reads: the system's monotonic clock, or a clock its
//! owner moves by hand, so a test drives the end of a load instead of waiting it out.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where the indexer reads the time for its commit policy: when it last committed and when a
/// load was last noted ([`crate::SearchIndex::note_load`]). Waits and polls keep real time: a
/// clock that stands still delays commits and the end of a load, never a waiter's timeout.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// The time a [`ManualClock`] shows; `None` for the system's clock.
    manual: Option<Arc<Mutex<Instant>>>,
}

impl Clock {
    /// The system's monotonic clock (the default).
    pub fn system() -> Clock {
        Clock::default()
    }

    pub(crate) fn now(&self) -> Instant {
        match &self.manual {
            Some(time) => *time.lock().unwrap_or_else(PoisonError::into_inner),
            None => Instant::now(),
        }
    }

    /// How long ago `then` was (zero for a time after now).
    pub(crate) fn since(&self, then: Instant) -> Duration {
        self.now().saturating_duration_since(then)
    }
}

/// A clock that stands still until [`ManualClock::advance`] moves it; every [`Clock`] made from
/// it by [`ManualClock::clock`] shows the same time.
#[derive(Debug)]
pub struct ManualClock {
    time: Arc<Mutex<Instant>>,
}

impl ManualClock {
    /// A clock standing at the moment it is made.
    pub fn new() -> ManualClock {
        ManualClock { time: Arc::new(Mutex::new(Instant::now())) }
    }

    /// The [`Clock`] to give an index ([`crate::IndexOptions::clock`]).
    pub fn clock(&self) -> Clock {
        Clock { manual: Some(Arc::clone(&self.time)) }
    }

    /// Moves the clock forward by `by` (as far as the platform's `Instant` reaches).
    pub fn advance(&self, by: Duration) {
        let mut time = self.time.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(later) = time.checked_add(by) {
            *time = later;
        }
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced_and_its_clones_with_it() {
        let hand = ManualClock::new();
        let (clock, copy) = (hand.clock(), hand.clock().clone());
        let start = clock.now();
        assert_eq!(clock.now(), start);
        hand.advance(Duration::from_millis(1_500));
        assert_eq!(copy.since(start), Duration::from_millis(1_500));
        // Beyond what an Instant holds: the clock stays where it was rather than panicking.
        hand.advance(Duration::MAX);
        assert_eq!(clock.since(start), Duration::from_millis(1_500));
        assert_eq!(clock.since(start + Duration::from_secs(5)), Duration::ZERO);
    }
}
