//! The log a store opened alone wrote before this build, read at open only: its groups that
//! a crash took from redb are put back (`replay.rs`) before the file becomes the log
//! `log/` writes. A store opened alone wrote its groups here and committed them to redb
//! without syncing; a durable redb commit (a checkpoint) made the logged groups obsolete.
//!
//! The log is never a second truth. redb holds every group that was ever acknowledged, either
//! durably or, after a crash, once open has replayed the groups redb lost. A group's sequence
//! number is stored in redb (`meta.log_applied`) in the transaction that applies it, so replay
//! knows exactly which groups redb already holds.
//!
//! ```text
//! header  (4096 bytes)  magic "annal log 1\0\0\0\0\0" [16] · store id [16] · zeros
//! frame                 len u32 · seq u64 · check [16] · redo [len]
//! check   = the first 16 bytes of blake3(store id · seq · len · redo)
//! ```
//! Frames follow each other from the header on; a checkpoint starts writing at the header
//! again. Scanning stops at the first frame that is cut, fails its check, or does not carry the
//! next sequence number: a torn tail (never acknowledged) or an older cycle's frames. The file
//! is filled with zeros when made, so an overwrite never extends it and `fdatasync` has no file
//! size to write.

use std::io;

use crate::error::Failure;
use crate::storage::StorageFile;

pub(crate) const MAGIC: &[u8; 16] = b"annal log 1\0\0\0\0\0";
pub(crate) const HEADER_BYTES: u64 = 4096;
const FRAME_HEAD_BYTES: usize = 4 + 8 + 16;

/// One logged group: its sequence number and redo form.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) seq: u64,
    pub(crate) redo: Vec<u8>,
}

fn check(store_id: &[u8; 16], seq: u64, redo: &[u8]) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(store_id);
    hasher.update(&seq.to_le_bytes());
    hasher.update(&(redo.len() as u64).to_le_bytes());
    hasher.update(redo);
    let mut out = [0u8; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

/// The frames of a store-alone log in `file`, to put back before the file becomes the log.
/// With `other_store`, the header is whole and must name this store; without, it is damaged
/// and read past (each frame's check covers the store id, so another store's frames are not
/// read).
///
/// # Errors
/// I/O, or `Corrupted` (with `other_store`) for the log of another store.
pub(crate) fn frames_in(
    file: &dyn StorageFile,
    store_id: &[u8; 16],
    other_store: Option<&str>,
) -> Result<Vec<Frame>, Failure> {
    let len = file.len()?;
    if let Some(other_store) = other_store {
        let mut id = [0u8; 16];
        file.read(16, &mut id)?;
        if &id != store_id {
            return Err(Failure::Corrupted(other_store.into()));
        }
    }
    Ok(scan(|at, out| file.read(at, out), len, store_id)?)
}

/// The frames of a log of `len` bytes from the header on.
fn scan(
    read: impl Fn(u64, &mut [u8]) -> io::Result<()>,
    len: u64,
    store_id: &[u8; 16],
) -> io::Result<Vec<Frame>> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut at = HEADER_BYTES;
    let mut head = [0u8; FRAME_HEAD_BYTES];
    while at + FRAME_HEAD_BYTES as u64 <= len {
        read(at, &mut head)?;
        let mut redo_len = [0u8; 4];
        redo_len.copy_from_slice(&head[..4]);
        let redo_len = u64::from(u32::from_le_bytes(redo_len));
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&head[4..12]);
        let seq = u64::from_le_bytes(seq);
        let start = at + FRAME_HEAD_BYTES as u64;
        if redo_len == 0 || start + redo_len > len {
            break;
        }
        if frames.last().is_some_and(|last| last.seq.checked_add(1) != Some(seq)) {
            break;
        }
        // Bounded by the file's length, which was read into memory's reach when written.
        let mut redo = vec![0u8; redo_len as usize];
        read(start, &mut redo)?;
        if head[12..28] != check(store_id, seq, &redo) {
            break;
        }
        frames.push(Frame { seq, redo });
        at = start + redo_len;
    }
    Ok(frames)
}

/// A log on a file of the file system.
#[derive(Debug)]
pub(crate) struct LogFile(pub(crate) std::fs::File);

impl StorageFile for LogFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    #[cfg(unix)]
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.0, out, offset)
    }

    #[cfg(windows)]
    fn read(&self, mut offset: u64, mut out: &mut [u8]) -> io::Result<()> {
        while !out.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(&self.0, out, offset)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    out = &mut out[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    #[cfg(unix)]
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.0, data, offset)
    }

    #[cfg(windows)]
    fn write(&self, mut offset: u64, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_write(&self.0, data, offset)?;
            data = &data[n..];
            offset += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(frames: &[(u64, &[u8])], id: &[u8; 16]) -> Vec<u8> {
        let mut bytes = vec![0u8; HEADER_BYTES as usize];
        bytes[..16].copy_from_slice(MAGIC);
        bytes[16..32].copy_from_slice(id);
        for (seq, redo) in frames {
            bytes.extend_from_slice(&(redo.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&seq.to_le_bytes());
            bytes.extend_from_slice(&check(id, *seq, redo));
            bytes.extend_from_slice(redo);
        }
        bytes.resize(bytes.len() + 256, 0);
        bytes
    }

    fn scan_image(bytes: &[u8], id: &[u8; 16]) -> Vec<Frame> {
        let read = |at: u64, out: &mut [u8]| {
            out.copy_from_slice(&bytes[at as usize..at as usize + out.len()]);
            Ok(())
        };
        scan(read, bytes.len() as u64, id).expect("reads")
    }

    #[test]
    fn the_scan_stops_at_a_torn_frame_an_old_cycle_or_another_store() {
        let id = [7u8; 16];
        let whole = image(&[(5, "東京 ☕".as_bytes()), (6, b"b"), (7, b"c")], &id);
        let frames = scan_image(&whole, &id);
        assert_eq!(frames.iter().map(|f| f.seq).collect::<Vec<_>>(), [5, 6, 7]);
        // Every cut inside the last frame keeps the first two.
        let last_start = whole.len() - 256 - (FRAME_HEAD_BYTES + 1);
        for cut in last_start..whole.len() - 256 {
            let mut torn = whole.clone();
            torn[cut..].iter_mut().for_each(|b| *b = 0);
            assert_eq!(scan_image(&torn, &id).len(), 2, "cut at {cut}");
        }
        // A flipped bit in the second frame keeps only the first.
        let mut flipped = whole.clone();
        flipped[HEADER_BYTES as usize + FRAME_HEAD_BYTES + "東京 ☕".len() + FRAME_HEAD_BYTES] ^= 1;
        assert_eq!(scan_image(&flipped, &id).len(), 1);
        // A new cycle over an old one: 9 then the old 6, 7 are not its continuation.
        let old = image(&[(5, b"aaaa"), (6, b"b"), (7, b"c")], &id);
        let new = image(&[(9, b"z")], &id);
        let mut mixed = old.clone();
        let new_frame = &new[HEADER_BYTES as usize..HEADER_BYTES as usize + FRAME_HEAD_BYTES + 1];
        mixed[HEADER_BYTES as usize..HEADER_BYTES as usize + new_frame.len()].copy_from_slice(new_frame);
        assert_eq!(scan_image(&mixed, &id).iter().map(|f| f.seq).collect::<Vec<_>>(), [9]);
        assert!(scan_image(&whole, &[8u8; 16]).is_empty());
    }
}
