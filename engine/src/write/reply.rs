//! The answer to a write request: handed from the thread that committed the request's group
//! to the caller waiting for it.
//!
//! Not a channel, for how a caller waits: crossbeam's receive spins, then yields the processor
//! several times before it sleeps. With more appenders than cores those yields take the
//! processor from the thread committing the next group, and its sync waits on them. A caller
//! here sleeps at once and is woken by the answer.

use std::sync::PoisonError;

use crate::sync::{lock, Arc, Condvar, Mutex, MutexGuard};

/// A new request's two ends: the committer's, which may be cloned, and the caller's.
pub(crate) fn reply<T>() -> (Reply<T>, Awaited<T>) {
    let slot = Arc::new(Slot { state: Mutex::new(State { value: None, senders: 1 }), ready: Condvar::new() });
    (Reply { slot: Arc::clone(&slot) }, Awaited { slot })
}

#[derive(Debug)]
struct Slot<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

#[derive(Debug)]
struct State<T> {
    value: Option<T>,
    /// Live [`Reply`] ends: none left and no value means the request was dropped unanswered.
    senders: usize,
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // The state is whole at every unlock: a panic elsewhere cannot leave it half-set.
        lock(&self.state)
    }
}

/// The committer's end: the first value sent is the answer.
#[derive(Debug)]
pub(crate) struct Reply<T> {
    slot: Arc<Slot<T>>,
}

impl<T> Reply<T> {
    /// Answers the caller; a later value, or one sent after the caller stopped waiting, is
    /// dropped.
    pub(crate) fn send(&self, value: T) {
        let mut state = self.slot.lock();
        if state.value.is_none() {
            state.value = Some(value);
        }
        drop(state);
        self.slot.ready.notify_one();
    }
}

impl<T> Clone for Reply<T> {
    fn clone(&self) -> Self {
        self.slot.lock().senders += 1;
        Reply { slot: Arc::clone(&self.slot) }
    }
}

impl<T> Drop for Reply<T> {
    fn drop(&mut self) {
        let mut state = self.slot.lock();
        state.senders -= 1;
        let unanswered = state.senders == 0 && state.value.is_none();
        drop(state);
        if unanswered {
            self.slot.ready.notify_one();
        }
    }
}

/// The caller's end.
#[derive(Debug)]
pub(crate) struct Awaited<T> {
    slot: Arc<Slot<T>>,
}

/// Every [`Reply`] end was dropped without an answer: the store closed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unanswered;

impl<T> Awaited<T> {
    /// Sleeps until the answer comes, or until no one is left to send it.
    pub(crate) fn recv(self) -> Result<T, Unanswered> {
        let mut state = self.slot.lock();
        loop {
            if let Some(value) = state.value.take() {
                return Ok(value);
            }
            if state.senders == 0 {
                return Err(Unanswered);
            }
            state = self.slot.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The slot as loom checks it (`engine/tests/loom/reply.rs`): no answer is lost and no caller
/// sleeps forever, whatever the order of sends, clones, drops and the wait.
#[cfg(loom)]
pub mod loom_model {
    /// The committer's end of a request answered with a number.
    #[derive(Debug, Clone)]
    pub struct Sender(super::Reply<u64>);

    /// The caller's end.
    #[derive(Debug)]
    pub struct Receiver(super::Awaited<u64>);

    /// A new request's two ends.
    pub fn reply() -> (Sender, Receiver) {
        let (reply, awaited) = super::reply();
        (Sender(reply), Receiver(awaited))
    }

    impl Sender {
        /// Answers the caller.
        pub fn send(&self, value: u64) {
            self.0.send(value);
        }
    }

    impl Receiver {
        /// The answer, or `None` once every sender dropped without one.
        pub fn recv(self) -> Option<u64> {
            self.0.recv().ok()
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_first_answer_reaches_a_caller_waiting_on_another_thread() {
        let (reply, awaited) = reply::<String>();
        let second = reply.clone();
        let waiter = std::thread::spawn(move || awaited.recv());
        std::thread::sleep(std::time::Duration::from_millis(20));
        second.send("記録 ✅ e\u{301}".to_owned());
        reply.send("later".to_owned());
        drop((reply, second));
        assert_eq!(waiter.join().expect("the waiter ran"), Ok("記録 ✅ e\u{301}".to_owned()));
    }

    #[test]
    fn a_request_dropped_unanswered_wakes_its_caller() {
        let (reply, awaited) = reply::<u64>();
        let clone = reply.clone();
        let waiter = std::thread::spawn(move || awaited.recv());
        drop(reply);
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(clone);
        assert_eq!(waiter.join().expect("the waiter ran"), Err(Unanswered));
    }

    #[test]
    fn an_answer_sent_before_the_wait_is_kept() {
        let (reply, awaited) = reply::<Vec<u8>>();
        reply.send(vec![0xf0, 0x9f, 0x8c, 0x8a]);
        drop(reply);
        assert_eq!(awaited.recv(), Ok(vec![0xf0, 0x9f, 0x8c, 0x8a]));
    }
}
