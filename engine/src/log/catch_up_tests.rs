//! Tests of how a process catches up with the log: the file's length is asked for only when the
//! header changed, the file was cut short, or its frames reach the length last read.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::layout::{frame, Header, HeaderRead, HEADER_BYTES};
use super::SharedLog;
use crate::redo::{Redo, Target};
use crate::storage::StorageFile;

/// A log file in memory that counts how often its length is asked for (also what the layout's
/// tests read and write).
#[derive(Clone, Debug, Default)]
pub(super) struct Counted {
    bytes: Arc<Mutex<Vec<u8>>>,
    lens: Arc<AtomicUsize>,
}

impl StorageFile for Counted {
    fn len(&self) -> io::Result<u64> {
        self.lens.fetch_add(1, Ordering::SeqCst);
        Ok(self.bytes.lock().expect("lock").len() as u64)
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let bytes = self.bytes.lock().expect("lock");
        let at = offset as usize;
        let part =
            bytes.get(at..at + out.len()).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(part);
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.bytes.lock().expect("lock").resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.bytes.lock().expect("lock");
        let end = offset as usize + data.len();
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[offset as usize..end].copy_from_slice(data);
        Ok(())
    }
}

const ID: [u8; 16] = [9u8; 16];

fn redo(seq: u64) -> Vec<u8> {
    let mut redo = Redo::default();
    let value = format!("group {seq}: 東京 ☕ e\u{301}\u{3000}🦀 {}", "ж".repeat(seq as usize * 40));
    redo.put(Target::Meta, format!("key {seq}").as_bytes(), value.as_bytes());
    redo.into_bytes()
}

/// Writes frames `seqs` of the file's current cycle from `at`, as another process would;
/// returns where the next one goes.
fn write_frames(file: &Counted, mut at: u64, seqs: std::ops::Range<u64>) -> u64 {
    let lens = file.lens.load(Ordering::SeqCst);
    let HeaderRead::Valid(header) = Header::read(file, &ID).expect("reads") else { panic!("no header") };
    // Not the log's own asking.
    file.lens.store(lens, Ordering::SeqCst);
    for seq in seqs {
        let bytes = frame(&ID, header.cycle, seq, &redo(seq));
        file.write(at, &bytes).expect("written");
        at += bytes.len() as u64;
    }
    at
}

fn made(file: &Counted, capacity_bytes: u64) -> SharedLog {
    let mut make = |_: &dyn StorageFile, _: HeaderRead| Ok(0);
    SharedLog::open(Box::new(file.clone()), None, ID, capacity_bytes, Some(&mut make)).expect("opens")
}

#[test]
fn a_cycle_is_caught_up_with_without_asking_the_files_length_again() {
    let file = Counted::default();
    let log = made(&file, HEADER_BYTES + (256 << 10));
    let mut held = log.hold(true).expect("held");
    log.catch_up(&mut held.state).expect("caught up");
    let lens = file.lens.load(Ordering::SeqCst);
    let mut at = HEADER_BYTES;
    for round in 0..5u64 {
        at = write_frames(&file, at, 1 + round * 3..4 + round * 3);
        log.catch_up(&mut held.state).expect("caught up");
        assert_eq!(held.state.last_seq, 3 + round * 3);
        assert_eq!(held.state.end, at);
    }
    assert_eq!(file.lens.load(Ordering::SeqCst), lens, "the length was asked for within one cycle");
}

#[test]
fn a_log_cut_short_emptied_or_made_again_is_read_at_its_new_length() {
    let file = Counted::default();
    let log = made(&file, HEADER_BYTES + (256 << 10));
    let mut held = log.hold(true).expect("held");
    let at = write_frames(&file, HEADER_BYTES, 1..6);
    log.catch_up(&mut held.state).expect("caught up");
    assert_eq!(held.state.last_seq, 5);

    // Cut by hand inside the frames, the header kept: the frames left are read again.
    let cut = at - 10;
    file.set_len(cut).expect("cut");
    log.catch_up(&mut held.state).expect("caught up");
    assert_eq!((held.state.len, held.state.last_seq), (cut, 4));

    // Emptied: no header, no frames.
    file.set_len(0).expect("emptied");
    log.catch_up(&mut held.state).expect("caught up");
    assert_eq!((held.state.header, held.state.len), (None, 0));

    // Made again by another process, larger, twice: each new cycle is read to its new end.
    for capacity_bytes in [512 << 10, 1 << 20] {
        file.set_len(0).expect("emptied");
        drop(made(&file, HEADER_BYTES + capacity_bytes));
        let end = write_frames(&file, HEADER_BYTES, 1..3);
        log.catch_up(&mut held.state).expect("caught up");
        assert_eq!(
            (held.state.len, held.state.last_seq, held.state.end),
            (HEADER_BYTES + capacity_bytes, 2, end)
        );
    }
}

#[test]
fn frames_past_the_length_last_read_are_read_once_the_file_was_made_longer() {
    // Made longer by hand, its header kept: a process that opened it since wrote past the length
    // this one read, and this one must not stop there (it would write over those frames).
    let file = Counted::default();
    let log = made(&file, HEADER_BYTES + (16 << 10));
    let mut held = log.hold(true).expect("held");
    let at = write_frames(&file, HEADER_BYTES, 1..3);
    log.catch_up(&mut held.state).expect("caught up");
    assert_eq!((held.state.len, held.state.last_seq), (HEADER_BYTES + (16 << 10), 2));
    file.set_len(HEADER_BYTES + (64 << 10)).expect("made longer");
    let end = write_frames(&file, at, 3..25);
    assert!(end > HEADER_BYTES + (16 << 10), "the frames do not pass the old length");
    log.catch_up(&mut held.state).expect("caught up");
    assert_eq!((held.state.len, held.state.last_seq, held.state.end), (HEADER_BYTES + (64 << 10), 24, end));
}

#[test]
fn the_frames_of_an_ended_cycle_are_let_go_of_only_when_asked() {
    let file = Counted::default();
    let log = made(&file, HEADER_BYTES + (64 << 10));
    let mut held = log.hold(true).expect("held");
    write_frames(&file, HEADER_BYTES, 1..4);
    log.catch_up(&mut held.state).expect("caught up");
    let ended = Arc::downgrade(&held.state.overlay);
    log.next_cycle(&mut held.state, 3).expect("next cycle");
    assert_eq!((held.state.last_seq, held.state.end), (3, HEADER_BYTES));
    drop(held);
    // Still held after the lock was let go: the caller frees them, off the appenders' path.
    assert!(ended.upgrade().is_some(), "the ended cycle's frames were freed under the lock");
    drop(log.take_retired());
    assert!(ended.upgrade().is_none(), "the ended cycle's frames are still held");
}
