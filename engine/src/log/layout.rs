//! The shared log's bytes (format version 3): a header naming the store, the cycle and the
//! cycle's first sequence number, then frames, each checked against the store and the cycle.
//!
//! ```text
//! header  4096 bytes: magic "annal log 2" [16] · store id [16] · cycle u64 · first seq u64
//!         · check [16] = the first 16 bytes of blake3(the 48 bytes before it) · zeros
//! frame   len u32 · seq u64 · check [16] · redo [len]
//! check   the first 16 bytes of blake3(store id · cycle · seq · len as u64 · redo)
//! ```
//! A frame belongs to the cycle its check names, so an earlier cycle's bytes after the tail, or
//! a frame a crash cut short, never read as this cycle's: a scan stops at the first frame whose
//! check fails or whose sequence number is not the next.

use std::io;

use crate::storage::StorageFile;

/// The magic of this layout; the durability log of a store opened alone (`log/legacy.rs`) starts with
/// "annal log 1".
pub(crate) const MAGIC: &[u8; 16] = b"annal log 2\0\0\0\0\0";
pub(crate) const HEADER_BYTES: u64 = 4096;
const HEADER_USED: usize = 64;
pub(crate) const FRAME_HEAD_BYTES: usize = 4 + 8 + 16;

/// Why a log whose header names another store is refused.
pub(crate) const OTHER_STORE: &str = "the log file beside the store belongs to another store";

/// What a log's first bytes say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeaderRead {
    /// A header of this layout for this store.
    Valid(Header),
    /// This layout, another store's.
    OtherStore,
    /// The store-alone log's layout (`log/legacy.rs`).
    Alone,
    /// Zeros, a cut-short write, or bytes of no log: no frame of it can be read.
    None,
}

/// A valid header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) cycle: u64,
    pub(crate) first_seq: u64,
}

fn check16(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(raw)
}

impl Header {
    /// The header's bytes (the first 64 of the 4096 it takes).
    pub(crate) fn encode(&self, store_id: &[u8; 16]) -> [u8; HEADER_USED] {
        let mut out = [0u8; HEADER_USED];
        out[..16].copy_from_slice(MAGIC);
        out[16..32].copy_from_slice(store_id);
        out[32..40].copy_from_slice(&self.cycle.to_le_bytes());
        out[40..48].copy_from_slice(&self.first_seq.to_le_bytes());
        let check = check16(&[&out[..48]]);
        out[48..64].copy_from_slice(&check);
        out
    }

    /// Reads a log's first bytes.
    pub(crate) fn decode(bytes: &[u8; HEADER_USED], store_id: &[u8; 16]) -> HeaderRead {
        if bytes[..16] == crate::log::legacy::MAGIC[..] {
            return HeaderRead::Alone;
        }
        if &bytes[..16] != MAGIC || bytes[48..64] != check16(&[&bytes[..48]]) {
            return HeaderRead::None;
        }
        if &bytes[16..32] != store_id {
            return HeaderRead::OtherStore;
        }
        HeaderRead::Valid(Header { cycle: u64_at(bytes, 32), first_seq: u64_at(bytes, 40) })
    }

    /// Reads the header of `file`.
    pub(crate) fn read(file: &dyn StorageFile, store_id: &[u8; 16]) -> io::Result<HeaderRead> {
        Header::read_in(file, file.len()?, store_id)
    }

    /// [`Header::read`] of a file whose length `len` the caller has just read.
    pub(crate) fn read_in(file: &dyn StorageFile, len: u64, store_id: &[u8; 16]) -> io::Result<HeaderRead> {
        if len < HEADER_BYTES {
            return Ok(HeaderRead::None);
        }
        let mut bytes = [0u8; HEADER_USED];
        file.read(0, &mut bytes)?;
        Ok(Header::decode(&bytes, store_id))
    }

    /// Whether `file` still starts with `known`'s header, read without asking the file's length;
    /// false too when the read fails (a file emptied since), for the caller to look again.
    pub(crate) fn is_still(known: Header, file: &dyn StorageFile, store_id: &[u8; 16]) -> bool {
        let mut bytes = [0u8; HEADER_USED];
        file.read(0, &mut bytes).is_ok() && Header::decode(&bytes, store_id) == HeaderRead::Valid(known)
    }
}

fn frame_check(store_id: &[u8; 16], cycle: u64, seq: u64, redo: &[u8]) -> [u8; 16] {
    check16(&[store_id, &cycle.to_le_bytes(), &seq.to_le_bytes(), &(redo.len() as u64).to_le_bytes(), redo])
}

/// Frame `seq` of `cycle` holding `redo`, as written.
pub(crate) fn frame(store_id: &[u8; 16], cycle: u64, seq: u64, redo: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_HEAD_BYTES + redo.len());
    // Callers bound a frame by the log's capacity, far below u32::MAX.
    out.extend_from_slice(&(redo.len() as u32).to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&frame_check(store_id, cycle, seq, redo));
    out.extend_from_slice(redo);
    out
}

/// What the bytes at a frame's place hold.
enum Parsed {
    /// Frame `seq` of the cycle, whole, with a redo of this many bytes.
    Frame(usize),
    /// Not whole in the bytes given: this many bytes would hold it.
    Short(u64),
    /// Where the cycle's frames end.
    End,
}

fn parse(bytes: &[u8], store_id: &[u8; 16], cycle: u64, seq: u64) -> Parsed {
    let Some(head) = bytes.get(..FRAME_HEAD_BYTES) else { return Parsed::Short(FRAME_HEAD_BYTES as u64) };
    let mut redo_len = [0u8; 4];
    redo_len.copy_from_slice(&head[..4]);
    let redo_len = u32::from_le_bytes(redo_len) as usize;
    if redo_len == 0 || u64_at(head, 4) != seq {
        return Parsed::End;
    }
    let Some(redo) = bytes.get(FRAME_HEAD_BYTES..FRAME_HEAD_BYTES + redo_len) else {
        return Parsed::Short((FRAME_HEAD_BYTES + redo_len) as u64);
    };
    if head[12..28] != frame_check(store_id, cycle, seq, redo) {
        return Parsed::End;
    }
    Parsed::Frame(redo_len)
}

/// Frames read: each one's sequence number and redo form.
pub(crate) type Frames = Vec<(u64, Vec<u8>)>;

/// The most a read of frames asks for at once, unless one frame is larger.
const READ_CHUNK_MAX_BYTES: u64 = 64 << 10;

/// Every whole frame of `cycle` from `at` on, starting with `seq` (they end where their lengths
/// add up to): read in growing chunks, so catching up with many small frames takes a few reads,
/// and finding none one small read. Also whether the frames ended before `len`: false when the
/// reading stopped at `len`, where a longer file may hold more.
pub(crate) fn read_frames(
    file: &dyn StorageFile,
    len: u64,
    mut at: u64,
    store_id: &[u8; 16],
    cycle: u64,
    mut seq: u64,
) -> io::Result<(Frames, bool)> {
    let mut frames = Vec::new();
    // Reads grow from a page to READ_CHUNK_MAX_BYTES while frames keep coming; a larger frame
    // is read whole, without making the reads after it larger (zeros follow the last frame).
    let mut chunk: u64 = 4096;
    let mut needed: u64 = 0;
    while at + FRAME_HEAD_BYTES as u64 <= len {
        // Bounded by the file's length, which a writer filled from memory.
        let mut bytes = vec![0u8; chunk.max(needed).min(len - at) as usize];
        file.read(at, &mut bytes)?;
        let mut used = 0;
        loop {
            match parse(&bytes[used..], store_id, cycle, seq) {
                Parsed::Frame(redo_len) => {
                    let redo = &bytes[used + FRAME_HEAD_BYTES..used + FRAME_HEAD_BYTES + redo_len];
                    frames.push((seq, redo.to_vec()));
                    used += FRAME_HEAD_BYTES + redo_len;
                    seq += 1;
                }
                Parsed::End => return Ok((frames, true)),
                Parsed::Short(short) => {
                    if at + used as u64 + short > len {
                        return Ok((frames, false));
                    }
                    chunk = (chunk * 2).min(READ_CHUNK_MAX_BYTES);
                    needed = short;
                    break;
                }
            }
        }
        at += used as u64;
    }
    Ok((frames, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::catch_up_tests::Counted;

    #[test]
    fn frames_read_back_only_in_their_cycle_and_whole() {
        let id = [3u8; 16];
        let file = Counted::default();
        file.set_len(HEADER_BYTES + 4096).expect("sized");
        let header = Header { cycle: 7, first_seq: 12 };
        file.write(0, &header.encode(&id)).expect("written");
        assert_eq!(Header::read(&file, &id).expect("reads"), HeaderRead::Valid(header));
        assert_eq!(Header::read(&file, &[4u8; 16]).expect("reads"), HeaderRead::OtherStore);
        let redo = "東京 ☕ e\u{301}\u{3000}🦀".as_bytes();
        let written = frame(&id, 7, 12, redo);
        file.write(HEADER_BYTES, &written).expect("written");
        let len = file.len().expect("len");
        let read = |cycle, seq| {
            let (frames, _) = read_frames(&file, len, HEADER_BYTES, &id, cycle, seq).expect("reads");
            frames.into_iter().next().map(|(_, redo)| redo)
        };
        assert_eq!(read(7, 12).as_deref(), Some(redo));
        assert_eq!(read(8, 12), None, "another cycle's frame");
        assert_eq!(read(7, 13), None, "not the next sequence number");
        // A frame cut anywhere, or with any byte flipped, is not read.
        for at in 0..written.len() {
            let mut damaged = written.clone();
            damaged[at] ^= 0x40;
            file.write(HEADER_BYTES, &damaged).expect("written");
            assert_eq!(read(7, 12), None, "byte {at} flipped");
        }
        // Many frames read back in one pass, and stop at the first that is not the next.
        file.set_len(HEADER_BYTES + (1 << 20)).expect("sized");
        let mut at = HEADER_BYTES;
        for seq in 12..400u64 {
            let redo = format!("frame {seq}: 東京 ☕ {}", "e\u{301}".repeat(seq as usize % 90)).into_bytes();
            let bytes = frame(&id, 7, seq, &redo);
            file.write(at, &bytes).expect("written");
            at += bytes.len() as u64;
        }
        let len = file.len().expect("len");
        let (frames, ended) = read_frames(&file, len, HEADER_BYTES, &id, 7, 12).expect("reads");
        assert_eq!(frames.len(), 388);
        assert!(ended, "zeros follow the last frame");
        let read_len: u64 = frames.iter().map(|(_, redo)| (FRAME_HEAD_BYTES + redo.len()) as u64).sum();
        assert_eq!(HEADER_BYTES + read_len, at);
        assert!(
            frames
                .iter()
                .zip(12u64..)
                .all(|((seq, redo), want)| *seq == want
                    && redo.starts_with(format!("frame {want}:").as_bytes()))
        );
        let (none, _) = read_frames(&file, len, HEADER_BYTES, &id, 8, 12).expect("reads");
        assert!(none.is_empty(), "another cycle's frames");
        // Read with a length inside the frames, the reading stops at it and says so.
        let (some, ended) = read_frames(&file, at - 10, HEADER_BYTES, &id, 7, 12).expect("reads");
        assert_eq!((some.len(), ended), (387, false));
        // A header cut short or flipped reads as none.
        let mut bytes = header.encode(&id);
        bytes[40] ^= 1;
        assert_eq!(Header::decode(&bytes, &id), HeaderRead::None);
    }
}
