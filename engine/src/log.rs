//! The durability log in front of redb: a group of appends is durable once its redo form
//! (`redo.rs`) is in the log and one `fdatasync` returned; redb commits the same writes without
//! syncing, and a durable redb commit (a checkpoint) later makes the logged groups obsolete.
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

/// An open log file.
#[derive(Debug)]
pub(crate) struct Log {
    file: Box<dyn StorageFile>,
    store_id: [u8; 16],
    capacity_bytes: u64,
    /// Where the next frame goes.
    end: u64,
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

impl Log {
    /// Opens the log in `file`, making it (zero-filled to `capacity_bytes`, header synced) when
    /// empty, and returns it with the frames it holds, oldest first.
    ///
    /// # Errors
    /// I/O, or `Corrupted` when the file is not an annal log or belongs to another store.
    pub(crate) fn open(
        file: Box<dyn StorageFile>,
        store_id: [u8; 16],
        capacity_bytes: u64,
    ) -> Result<(Log, Vec<Frame>), Failure> {
        let len = file.len()?;
        if len < HEADER_BYTES {
            // New, or its making was cut short by a crash before any frame could be written.
            return Log::create(file, store_id, capacity_bytes);
        }
        let mut header = [0u8; 32];
        file.read(0, &mut header)?;
        if &header[..16] == MAGIC && header[16..32] != store_id {
            return Err(Failure::Corrupted("the log file beside the store belongs to another store".into()));
        }
        // Frames check themselves against the store id, so they are found even under a header
        // a crash cut short; with none, the log is made again.
        let (frames, end) = scan(|at, out| file.read(at, out), len, &store_id)?;
        if &header[..16] != MAGIC {
            if frames.is_empty() {
                return Log::create(file, store_id, capacity_bytes);
            }
            // A damaged header over valid frames: the frames are replayed all the same, and the
            // header is written again with the next frame's sync.
            let mut fresh = [0u8; 32];
            fresh[..16].copy_from_slice(MAGIC);
            fresh[16..].copy_from_slice(&store_id);
            file.write(0, &fresh)?;
        }
        Ok((Log { file, store_id, capacity_bytes: len.max(capacity_bytes), end }, frames))
    }

    /// Writes a new, empty log over `file`: zeros to the capacity, then the header, synced.
    fn create(
        file: Box<dyn StorageFile>,
        store_id: [u8; 16],
        capacity_bytes: u64,
    ) -> Result<(Log, Vec<Frame>), Failure> {
        let mut header = vec![0u8; HEADER_BYTES as usize];
        header[..16].copy_from_slice(MAGIC);
        header[16..32].copy_from_slice(&store_id);
        let capacity_bytes = capacity_bytes.max(2 * HEADER_BYTES);
        let zeros = vec![0u8; 1 << 20];
        let mut at = HEADER_BYTES;
        while at < capacity_bytes {
            let chunk = (capacity_bytes - at).min(zeros.len() as u64) as usize;
            file.write(at, &zeros[..chunk])?;
            at += chunk as u64;
        }
        file.write(0, &header)?;
        file.sync_data()?;
        Ok((Log { file, store_id, capacity_bytes, end: HEADER_BYTES }, Vec::new()))
    }

    /// Whether a group of `redo_bytes` fits after the frames written since the last checkpoint.
    pub(crate) fn fits(&self, redo_bytes: usize) -> bool {
        self.end + (FRAME_HEAD_BYTES + redo_bytes) as u64 <= self.capacity_bytes
    }

    /// Whether frames were written since the last checkpoint.
    pub(crate) fn is_empty(&self) -> bool {
        self.end == HEADER_BYTES
    }

    /// Writes group `seq` and makes it durable: the one sync of a logged commit.
    ///
    /// # Errors
    /// I/O. The caller must stop writing: a failed sync may have lost the frame.
    pub(crate) fn append(&mut self, seq: u64, redo: &[u8]) -> io::Result<()> {
        let mut frame = Vec::with_capacity(FRAME_HEAD_BYTES + redo.len());
        // Callers check `fits`, which bounds redo by the capacity (a u64 of at most memory).
        frame.extend_from_slice(&(redo.len() as u32).to_le_bytes());
        frame.extend_from_slice(&seq.to_le_bytes());
        frame.extend_from_slice(&check(&self.store_id, seq, redo));
        frame.extend_from_slice(redo);
        self.file.write(self.end, &frame)?;
        self.file.sync_data()?;
        self.end += frame.len() as u64;
        Ok(())
    }

    /// Starts a new cycle after a durable redb commit made every frame obsolete: the next frame
    /// goes over the first old one, and the scan's sequence rule stops at whatever old frame
    /// follows the new ones. The first old frame's head is zeroed, unsynced, only to spare the
    /// next open reading obsolete frames: if that write is lost or fails, the scan still skips
    /// them (the store holds their groups), so its error is not the caller's.
    pub(crate) fn reset(&mut self) {
        if self.end > HEADER_BYTES {
            let _ = self.file.write(HEADER_BYTES, &[0u8; FRAME_HEAD_BYTES]);
        }
        self.end = HEADER_BYTES;
    }
}

impl Log {
    /// Empties the file once a closing checkpoint made every frame obsolete, so a closed store
    /// is its one file (the next open makes the log again). Best effort: a log left in place
    /// holds only groups the store has, which the next open skips.
    pub(crate) fn discard(&mut self) {
        if self.file.set_len(0).is_ok() {
            self.end = HEADER_BYTES;
        }
    }
}

/// The frames of a store-alone log in `file`, for a store opened shared to put back before it
/// makes the file its shared log.
pub(crate) fn frames_in(file: &dyn StorageFile, store_id: &[u8; 16]) -> io::Result<Vec<Frame>> {
    let len = file.len()?;
    scan(|at, out| file.read(at, out), len, store_id).map(|(frames, _)| frames)
}

/// The frames of a log of `len` bytes from the header on, and where the next one goes.
fn scan(
    read: impl Fn(u64, &mut [u8]) -> io::Result<()>,
    len: u64,
    store_id: &[u8; 16],
) -> io::Result<(Vec<Frame>, u64)> {
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
    Ok((frames, at))
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
        scan(read, bytes.len() as u64, id).expect("reads").0
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
