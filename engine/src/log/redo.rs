//! The redo form of a group's writes: every insert the writer makes into the journal's tables,
//! as bytes a log frame keeps (`log/`, and an earlier build's store-alone log, `log/legacy.rs`,
//! whose groups `replay.rs` puts back on open).
//!
//! Replay is physical: it puts the same values under the same keys, so it never re-runs the
//! append logic and cannot decide differently from the commit it repeats. Applying a group
//! twice leaves the tables as applying it once.
//!
//! ```text
//! op     = table u8 · key_len u32 · key · value_len u32 · value     (integers little endian)
//! keys   = (u64, u64) as 16 bytes, u64 as 8 bytes, strings as UTF-8, hashes as 32 bytes
//! ```

use crate::digest::DIGEST_LEN;
use crate::error::Failure;
use crate::tables::SESSION_ROW_LEN;

/// The tables a group writes, by their tag in the redo form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Meta = 1,
    Sessions = 2,
    Names = 3,
    Journal = 4,
    Digests = 5,
    Entries = 6,
    Positions = 7,
    Blobs = 8,
    Receipts = 9,
}

impl Target {
    pub(crate) fn from_tag(tag: u8) -> Option<Target> {
        Some(match tag {
            1 => Target::Meta,
            2 => Target::Sessions,
            3 => Target::Names,
            4 => Target::Journal,
            5 => Target::Digests,
            6 => Target::Entries,
            7 => Target::Positions,
            8 => Target::Blobs,
            9 => Target::Receipts,
            _ => return None,
        })
    }
}

/// A group's inserts, in the order they were made: what a frame of the log keeps.
#[derive(Debug, Default)]
pub(crate) struct Redo {
    bytes: Vec<u8>,
}

impl Redo {
    pub(crate) fn put(&mut self, target: Target, key: &[u8], value: &[u8]) {
        self.bytes.push(target as u8);
        for part in [key, value] {
            // Keys and values are bounded by the batch limit (1 GiB), well under u32::MAX.
            self.bytes.extend_from_slice(&(part.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(part);
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// A (session key, sourceOrder) pair as a redo key.
pub(crate) fn pair(key: (u64, u64)) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&key.0.to_le_bytes());
    out[8..].copy_from_slice(&key.1.to_le_bytes());
    out
}

pub(crate) fn unpair(bytes: &[u8]) -> Result<(u64, u64), Failure> {
    let raw: [u8; 16] = fixed(bytes)?;
    let (a, b) = raw.split_at(8);
    Ok((u64_of(a)?, u64_of(b)?))
}

pub(crate) fn u64_of(bytes: &[u8]) -> Result<u64, Failure> {
    fixed::<8>(bytes).map(u64::from_le_bytes)
}

pub(crate) fn fixed<const N: usize>(bytes: &[u8]) -> Result<[u8; N], Failure> {
    bytes
        .try_into()
        .map_err(|_| Failure::Corrupted(format!("log: a field of {} bytes where {N} belong", bytes.len())))
}

pub(crate) fn text(bytes: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(bytes).map_err(|_| Failure::Corrupted("log: a key that is not UTF-8".into()))
}

/// Checks that one op's key and value have their table's encoding, as redb's typed insert would.
pub(crate) fn check_op(target: Target, key: &[u8], value: &[u8]) -> Result<(), Failure> {
    match target {
        Target::Meta => drop(text(key)?),
        Target::Sessions => drop((text(key)?, fixed::<SESSION_ROW_LEN>(value)?)),
        Target::Names => drop((u64_of(key)?, text(value)?)),
        Target::Journal => drop(unpair(key)?),
        Target::Digests => drop((unpair(key)?, fixed::<DIGEST_LEN>(value)?)),
        Target::Entries => drop((text(key)?, unpair(value)?)),
        Target::Positions => drop((u64_of(key)?, unpair(value)?)),
        Target::Blobs => drop(fixed::<32>(key)?),
        Target::Receipts => drop((unpair(key)?, fixed::<32>(value)?)),
    }
    Ok(())
}

/// Splits a redo form into its ops.
pub(crate) fn ops(mut bytes: &[u8]) -> impl Iterator<Item = Result<(Target, &[u8], &[u8]), Failure>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let op = (|| {
            let (&tag, rest) = bytes.split_first().ok_or_else(cut)?;
            let target = Target::from_tag(tag)
                .ok_or_else(|| Failure::Corrupted(format!("log: unknown table tag {tag}")))?;
            let (key, rest) = part(rest)?;
            let (value, rest) = part(rest)?;
            bytes = rest;
            Ok((target, key, value))
        })();
        if op.is_err() {
            bytes = &[];
        }
        Some(op)
    })
}

fn cut() -> Failure {
    Failure::Corrupted("log: a group's writes end inside an op".into())
}

fn part(bytes: &[u8]) -> Result<(&[u8], &[u8]), Failure> {
    let len = bytes.get(..4).ok_or_else(cut)?;
    let len = u32::from_le_bytes(fixed(len)?) as usize;
    let rest = &bytes[4..];
    Ok((rest.get(..len).ok_or_else(cut)?, &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_round_trip_and_a_cut_form_is_corrupted() {
        let mut redo = Redo::default();
        redo.put(Target::Entries, "ид-東京 🦀".as_bytes(), &pair((3, 9)));
        redo.put(Target::Journal, &pair((3, 9)), b"");
        let bytes = redo.into_bytes();
        let parsed: Vec<_> = ops(&bytes).collect::<Result<_, _>>().expect("parses");
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].0, Target::Entries);
        assert_eq!(text(parsed[0].1).expect("utf-8"), "ид-東京 🦀");
        assert_eq!(unpair(parsed[0].2).expect("pair"), (3, 9));
        // Only whole ops parse: the one prefix that does ends right after the first op.
        let first_end = 1 + 4 + "ид-東京 🦀".len() + 4 + 16;
        for cut_at in 1..bytes.len() {
            let parsed: Result<Vec<_>, _> = ops(&bytes[..cut_at]).collect();
            assert_eq!(parsed.is_ok(), cut_at == first_end, "cut at {cut_at}");
        }
    }
}
