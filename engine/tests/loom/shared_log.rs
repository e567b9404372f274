//! Model check (loom) of the shared log's lock, tail and cycle protocol: processes appending,
//! folding the log into the store (a full log, a checkpoint, or behind the tail while appends go
//! on) and pairing reads, in every interleaving. Every append takes a position no other took, a read sees a gapless run that
//! holds everything acknowledged before it began and never loses what an earlier read saw, and
//! the end holds every value once. Run by `.ci/run` with `RUSTFLAGS="--cfg loom"`.

use annal_engine::shared_loom_model::{Machine, FRAME_BYTES};
use loom::thread;

fn check_run(values: &[u64], context: &str) {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), values.len(), "{context}: a value twice in {values:?}");
}

#[test]
fn appends_folds_and_reads_lose_nothing_in_any_order() {
    loom::model(|| {
        // The header and two frames: the third append finds the log full and folds it.
        let machine = Machine::new(4096 + 2 * FRAME_BYTES);
        let (a, b) = (machine.process(), machine.process());
        let writer = thread::spawn(move || {
            let first = a.append(10);
            let second = a.append(11);
            let seen = a.read();
            assert!(seen.contains(&10) && seen.contains(&11), "a's own appends missing from {seen:?}");
            a.checkpoint();
            vec![first, second]
        });
        let other = thread::spawn(move || {
            let before = b.read();
            let taken = b.append(20);
            let after = b.read();
            check_run(&after, "b");
            assert!(after.len() > before.len() && after.starts_with(&before), "{before:?} then {after:?}");
            assert_eq!(after.get(taken as usize), Some(&20), "20 not where it was acknowledged: {after:?}");
            taken
        });
        let mut taken = writer.join().unwrap();
        taken.push(other.join().unwrap());
        taken.sort_unstable();
        assert_eq!(taken, [0, 1, 2], "two appends took one position");
        let last = machine.process().read();
        let mut values = last.clone();
        values.sort_unstable();
        assert_eq!(values, [10, 11, 20], "the end holds {last:?}");
    });
}

#[test]
fn a_fold_behind_the_tail_while_appends_go_on_loses_nothing() {
    loom::model(|| {
        // The header and two frames: the third append finds the log full and folds the rest.
        let machine = Machine::new(4096 + 2 * FRAME_BYTES);
        // The fold behind runs on another thread of the appender's own process, as the store's
        // checkpoint thread does.
        let a = std::sync::Arc::new(machine.process());
        let folder = std::sync::Arc::clone(&a);
        let writer = thread::spawn(move || [a.append(10), a.append(11), a.append(12)]);
        let behind = thread::spawn(move || {
            folder.fold_behind();
            let seen = folder.read();
            check_run(&seen, "after a fold behind");
            seen
        });
        let taken = writer.join().unwrap();
        assert_eq!(taken, [0, 1, 2], "appends took {taken:?}");
        let seen = behind.join().unwrap();
        assert!([10, 11, 12].starts_with(&seen), "a read after the fold saw {seen:?}");
        let other = machine.process();
        assert_eq!(other.read(), [10, 11, 12], "another process reads");
        other.append(20);
        assert_eq!(other.read(), [10, 11, 12, 20]);
    });
}
