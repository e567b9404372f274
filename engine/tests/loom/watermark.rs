//! Model check (loom) of the durable-position watermark: a reader never observes a position
//! above what the writer has made durable, and a waiter wakes once its position is reached.
//! Run by `.ci/run` with `RUSTFLAGS="--cfg loom"`.

use std::time::Duration;

use annal_engine::loom_model::advance;
use annal_engine::Watermark;
use loom::sync::atomic::{AtomicU64, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

#[test]
fn readers_never_see_past_what_is_durable() {
    loom::model(|| {
        let watermark = Watermark::new(0);
        // What the writer's commits have made durable (the commit returns, then it advances).
        let durable = Arc::new(AtomicU64::new(0));
        let writer = {
            let (watermark, durable) = (watermark.clone(), durable.clone());
            thread::spawn(move || {
                for end in 1..=2 {
                    durable.store(end, SeqCst);
                    advance(&watermark, end);
                }
            })
        };
        let reader = {
            let (watermark, durable) = (watermark.clone(), durable.clone());
            thread::spawn(move || {
                let seen = watermark.current();
                assert!(seen <= durable.load(SeqCst), "watermark {seen} above what is durable");
                // loom's timed wait never times out: this returns only once 2 is reached.
                let reached = watermark.wait_for(2, Duration::from_secs(60));
                assert_eq!(reached, 2);
                assert!(reached <= durable.load(SeqCst));
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert_eq!(watermark.current(), 2);
    });
}

#[test]
fn the_watermark_never_moves_back() {
    loom::model(|| {
        let watermark = Watermark::new(5);
        let late = {
            let watermark = watermark.clone();
            thread::spawn(move || advance(&watermark, 3))
        };
        let ahead = {
            let watermark = watermark.clone();
            thread::spawn(move || advance(&watermark, 7))
        };
        let seen = watermark.current();
        assert!(seen == 5 || seen == 7);
        late.join().unwrap();
        ahead.join().unwrap();
        assert_eq!(watermark.current(), 7);
    });
}
