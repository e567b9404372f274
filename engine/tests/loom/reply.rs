//! Model check (loom) of a write request's answer slot: the caller gets the first answer
//! sent, hears "unanswered" only when every sender dropped without one, and never sleeps
//! forever (loom fails a model in which a thread blocks for good). Run by `.ci/run` with
//! `RUSTFLAGS="--cfg loom"`.

use annal_engine::reply_loom_model::reply;
use loom::thread;

#[test]
fn an_answer_sent_from_another_thread_reaches_the_waiting_caller() {
    loom::model(|| {
        let (sender, receiver) = reply();
        let committer = thread::spawn(move || sender.send(7));
        assert_eq!(receiver.recv(), Some(7));
        committer.join().unwrap();
    });
}

#[test]
fn a_clone_answering_while_the_other_end_drops_is_never_lost() {
    loom::model(|| {
        let (sender, receiver) = reply();
        let clone = sender.clone();
        let answering = thread::spawn(move || clone.send(3));
        let dropping = thread::spawn(move || drop(sender));
        assert_eq!(receiver.recv(), Some(3));
        answering.join().unwrap();
        dropping.join().unwrap();
    });
}

#[test]
fn a_request_dropped_unanswered_wakes_its_caller() {
    loom::model(|| {
        let (sender, receiver) = reply();
        let clone = sender.clone();
        let first = thread::spawn(move || drop(sender));
        let second = thread::spawn(move || drop(clone));
        assert_eq!(receiver.recv(), None);
        first.join().unwrap();
        second.join().unwrap();
    });
}

#[test]
fn two_answers_at_once_give_the_caller_one_of_them() {
    loom::model(|| {
        let (sender, receiver) = reply();
        let clone = sender.clone();
        let one = thread::spawn(move || sender.send(1));
        let two = thread::spawn(move || clone.send(2));
        let answer = receiver.recv();
        assert!(matches!(answer, Some(1 | 2)), "{answer:?}");
        one.join().unwrap();
        two.join().unwrap();
    });
}
