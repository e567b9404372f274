//! How blobs and journal records are kept on disk: zstd-compressed when that saves space, as
//! they are otherwise.
//!
//! A blob value is told apart by its hash: it is the original when its own blake3 is the
//! blob's key, and a zstd frame of the original otherwise (format version 1 stored only
//! originals, which read unchanged). A journal value starts with a tag byte: 0, the archived
//! record, read in place; 1, a zstd frame of it, read through a copy. Records are compressed
//! only from [`RECORD_PACK_MIN_BYTES`]: what they hold beyond short conversation text (tool
//! output, the source's metadata) is what makes them large, and a projection reads few of them.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};

use crate::codec::{put_chain_fields, take_chain_fields, CHAIN_FIELDS_BYTES};
use crate::hash::{hash_to_hex, Hash};

/// zstd's default level: several hundred MB/s on one core, and most of the gain on text.
const LEVEL: i32 = 1;
/// Below this, a frame header and a weak dictionary rarely save anything.
const PACK_MIN_BYTES: usize = 128;
/// The largest original a frame may declare: the largest batch an append accepts.
const UNPACKED_BYTES_MAX: u64 = 1 << 30;
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

thread_local! {
    /// One compression context per thread: making one costs more than compressing a record.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// `data` compressed at [`LEVEL`] with this thread's context.
fn compress(data: &[u8]) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let compressor = match cell.as_mut() {
            Some(compressor) => compressor,
            None => cell.insert(zstd::bulk::Compressor::new(LEVEL)?),
        };
        compressor.compress(data)
    })
}

/// The value to store for a blob's original bytes: compressed when that saves an eighth.
pub(crate) fn pack(data: Vec<u8>) -> Vec<u8> {
    if data.len() < PACK_MIN_BYTES {
        return data;
    }
    match compress(&data) {
        Ok(packed) if packed.len() + packed.len() / 8 < data.len() => packed,
        _ => data,
    }
}

/// The original bytes of the value stored under `key`, or why they cannot be had.
pub(crate) fn unpack<'a>(key: &Hash, stored: &'a [u8]) -> Result<Cow<'a, [u8]>, String> {
    if stored.starts_with(&ZSTD_MAGIC) {
        if let Some(original) = decompress(stored) {
            if blake3::hash(&original).as_bytes() == key {
                return Ok(Cow::Owned(original));
            }
        }
    }
    if blake3::hash(stored).as_bytes() == key {
        return Ok(Cow::Borrowed(stored));
    }
    Err(format!("blob {} does not match its hash", hash_to_hex(key)))
}

fn decompress(stored: &[u8]) -> Option<Vec<u8>> {
    let size = zstd::zstd_safe::get_frame_content_size(stored).ok()??;
    if size > UNPACKED_BYTES_MAX {
        return None;
    }
    let capacity = usize::try_from(size).ok()?;
    let original = DECOMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let decompressor = match cell.as_mut() {
            Some(decompressor) => decompressor,
            None => cell.insert(zstd::bulk::Decompressor::new().ok()?),
        };
        decompressor.decompress(stored, capacity).ok()
    })?;
    (original.len() as u64 == size).then_some(original)
}

/// The journal value tag of an archived record kept as it is.
const RECORD_RAW: u8 = 0;
/// The journal value tag of a zstd frame of an archived record.
const RECORD_PACKED: u8 = 1;
/// Records smaller than this are kept as they are, so they are read in place.
pub(crate) const RECORD_PACK_MIN_BYTES: usize = 1024;

/// The journal value of an archived record. A compressed value keeps the record's chain
/// fields outside its frame (tag · fields · frame), so they can be set after compression.
pub(crate) fn pack_record(archive: &[u8]) -> Vec<u8> {
    if archive.len() >= RECORD_PACK_MIN_BYTES {
        let mut body = archive.to_vec();
        if let Some(fields) = take_chain_fields(&mut body) {
            if let Ok(packed) = compress(&body) {
                if packed.len() + CHAIN_FIELDS_BYTES + packed.len() / 8 < archive.len() {
                    let mut value = Vec::with_capacity(1 + CHAIN_FIELDS_BYTES + packed.len());
                    value.push(RECORD_PACKED);
                    value.extend_from_slice(&fields);
                    value.extend_from_slice(&packed);
                    return value;
                }
            }
        }
    }
    let mut value = Vec::with_capacity(archive.len() + 1);
    value.push(RECORD_RAW);
    value.extend_from_slice(archive);
    value
}

/// Sets the chain fields of a journal value made by [`pack_record`].
pub(crate) fn patch_record(value: &mut [u8], fields: &[u8; CHAIN_FIELDS_BYTES]) -> Result<(), String> {
    match value.split_first_mut() {
        Some((&mut RECORD_RAW, archive)) => {
            put_chain_fields(archive, fields).ok_or_else(|| "a journal value too short for a record".into())
        }
        Some((&mut RECORD_PACKED, rest)) if rest.len() >= CHAIN_FIELDS_BYTES => {
            rest[..CHAIN_FIELDS_BYTES].copy_from_slice(fields);
            Ok(())
        }
        _ => Err("not a journal value".into()),
    }
}

/// The archived record of a journal value, or why it cannot be had.
pub(crate) fn unpack_record(value: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    match value.split_first() {
        Some((&RECORD_RAW, archive)) => Ok(Cow::Borrowed(archive)),
        Some((&RECORD_PACKED, rest)) if rest.len() >= CHAIN_FIELDS_BYTES => {
            let (fields, packed) = rest.split_at(CHAIN_FIELDS_BYTES);
            let mut archive = decompress(packed).ok_or("its compressed bytes do not decompress")?;
            let fields: &[u8; CHAIN_FIELDS_BYTES] = fields.try_into().map_err(|_| "a cut journal value")?;
            put_chain_fields(&mut archive, fields)
                .ok_or("its decompressed bytes are too short for a record")?;
            Ok(Cow::Owned(archive))
        }
        Some((&RECORD_PACKED, _)) => Err("a compressed journal value cut short".into()),
        Some((tag, _)) => Err(format!("unknown journal value tag {tag}")),
        None => Err("an empty journal value".into()),
    }
}

/// A journal value held inside a snapshot, and its archived record: borrowed in place, or
/// decompressed once on first use.
pub(crate) struct HeldRecord<'s> {
    held: Held<'s>,
    unpacked: OnceCell<Vec<u8>>,
}

/// A stored value: in redb's pages, or in a frame of the shared log not yet folded into them.
pub(crate) enum Held<'s> {
    Page(redb::AccessGuard<'s, &'static [u8]>),
    Frame(bytes::Bytes),
}

impl Held<'_> {
    pub(crate) fn value(&self) -> &[u8] {
        match self {
            Held::Page(guard) => guard.value(),
            Held::Frame(bytes) => bytes,
        }
    }
}

impl<'s> HeldRecord<'s> {
    pub(crate) fn new(held: Held<'s>) -> HeldRecord<'s> {
        HeldRecord { held, unpacked: OnceCell::new() }
    }

    /// The value as stored: a tag byte, then the archive as it is or compressed.
    pub(crate) fn stored(&self) -> &[u8] {
        self.held.value()
    }

    /// The archived record's bytes.
    pub(crate) fn archive(&self) -> Result<&[u8], String> {
        if let Some(unpacked) = self.unpacked.get() {
            return Ok(unpacked);
        }
        match unpack_record(self.held.value())? {
            Cow::Borrowed(archive) => Ok(archive),
            Cow::Owned(unpacked) => Ok(self.unpacked.get_or_init(|| unpacked)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_blobs_read_back_and_damage_is_refused() {
        let text = "línea 東京 ☕ e\u{301}\u{3000}🦀 ".repeat(400).into_bytes();
        let key = *blake3::hash(&text).as_bytes();
        let packed = pack(text.clone());
        assert!(packed.len() * 4 < text.len(), "{} of {}", packed.len(), text.len());
        assert_eq!(unpack(&key, &packed).expect("reads back").as_ref(), text.as_slice());
        // An original (format version 1, or incompressible) reads as it is.
        assert_eq!(unpack(&key, &text).expect("reads as is").as_ref(), text.as_slice());
        // An original that happens to start like a zstd frame is still itself.
        let mut magic = ZSTD_MAGIC.to_vec();
        magic.extend_from_slice(b"not a frame");
        let magic_key = *blake3::hash(&magic).as_bytes();
        assert_eq!(pack(magic.clone()), magic);
        assert_eq!(unpack(&magic_key, &magic).expect("as is").as_ref(), magic.as_slice());
        for at in [0, 5, packed.len() / 2, packed.len() - 1] {
            let mut damaged = packed.clone();
            damaged[at] ^= 0x40;
            assert!(unpack(&key, &damaged).is_err(), "flip at {at}");
        }
        assert!(unpack(&key, &packed[..packed.len() - 3]).is_err());
    }

    #[test]
    fn records_pack_from_the_threshold_and_damage_is_refused() {
        use crate::codec::{chain_fields, encode, StoredBlock, StoredPayload, StoredRecord};
        let record = |text: String| StoredRecord {
            entry_id: "e-東京".into(),
            role: 2,
            timestamp: None,
            blocks: vec![StoredBlock::Text(StoredPayload::Inline(text))],
            meta: Vec::new(),
            hash: [5; 32],
            prev_hash: [6; 32],
            seal: 7,
        };
        let small = encode(&record("short ☕".into())).expect("encodes");
        assert!(matches!(unpack_record(&pack_record(&small)), Ok(Cow::Borrowed(a)) if a == small.as_slice()));
        let large = encode(&record("東京 tool output ☕ e\u{301} ".repeat(200))).expect("encodes");
        let mut value = pack_record(&large);
        assert_eq!(value[0], RECORD_PACKED);
        assert!(value.len() * 4 < large.len());
        assert_eq!(unpack_record(&value).expect("packed").as_ref(), large.as_slice());
        // Fields set after packing are what a read finds.
        patch_record(&mut value, &chain_fields(&[9; 32], &[8; 32], 1)).expect("patches");
        let mut expected = large.clone();
        crate::codec::put_chain_fields(&mut expected, &chain_fields(&[9; 32], &[8; 32], 1)).expect("puts");
        assert_eq!(unpack_record(&value).expect("packed").as_ref(), expected.as_slice());
        assert!(unpack_record(&[]).is_err());
        assert!(unpack_record(&[9, 1, 2]).is_err());
        assert!(unpack_record(&[RECORD_PACKED, 1, 2]).is_err());
        assert!(unpack_record(&value[..value.len() / 2]).is_err());
    }
}
