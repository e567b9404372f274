//! Corruption: bytes flipped inside a stored record's value, and store images cut short. Reads
//! must report `ReadError::Corrupted` (never a panic, never altered content passed off as the
//! original), verify must name the session and sourceOrder, and neighbours must still read.
//!
//! The engine's tables are private, so the damage is done on the simulated disk: a record with
//! a long unique entryId and a marker text is written last, the store closed cleanly, and its
//! archived value located in the image: it starts with the entryId's bytes (rkyv writes them
//! first), its length is what the journal table grows by when the record is stored alone, and
//! it must hold the record's hash and previous hash.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::ops::Range;

use annal_engine::{Block, Hash, OpenError, ReadError, Record, Role, Store, StoreOptions};
use annal_support::disk::SimDisk;

mod flips;

const SESSION: &str = "victim";
const VICTIM_ORDER: u64 = 2;
const ENTRY: &str = "victim-entry-7d1f0c55-4b9e-4a51-93d6-2f0c8d11e0aa";
const MARKER: &str = "MARKER-kestrel-9f8e7d6c5b4a-the-quick-brown-fox-jumps-over-the-lazy-dog-END";

fn options() -> StoreOptions {
    StoreOptions { cache_size_bytes: 4 << 20, ..StoreOptions::default() }
}

/// The record to damage: every field kind the archive holds, all inline (under the blob
/// threshold), so flips land in text, ids, flags, lengths, offsets, tags and hashes.
fn victim(with_tool_call: bool) -> Record {
    let mut blocks = vec![
        Block::Text { text: MARKER.to_owned() },
        Block::Thinking { text: "thinking it over, in a few words".to_owned() },
        Block::ToolResult {
            call_id: "call-0001".to_owned(),
            tool: "Bash".to_owned(),
            is_error: true,
            output: "exit status 1: no such file".to_owned(),
        },
    ];
    if with_tool_call {
        blocks.push(Block::ToolCall {
            call_id: "call-0002".to_owned(),
            tool: "Read".to_owned(),
            input: "{\"file_path\":\"src/main.rs\"}".to_owned(),
            target: "src/main.rs".to_owned(),
        });
    }
    Record {
        entry_id: ENTRY.to_owned(),
        role: Role::Assistant,
        timestamp: Some("2026-01-02T03:04:05.250Z".to_owned()),
        blocks,
        meta: BTreeMap::from([
            ("model".to_owned(), "\"m-1\"".to_owned()),
            ("turn".to_owned(), "7".to_owned()),
        ]),
    }
}

/// A closed store image holding the victim, and where its archived value lies.
struct Fixture {
    image: Vec<u8>,
    /// The value's bytes in the first copy found.
    value: Range<usize>,
    /// Start offsets of every copy of the value in the image (stale page copies included).
    copies: Vec<usize>,
    /// The victim session's records as appended.
    records: Vec<Record>,
    other: Vec<Record>,
    /// The victim's chain hash and previous hash as written.
    hashes: (Hash, Hash),
}

fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    haystack.windows(needle.len()).enumerate().filter(|(_, w)| *w == needle).map(|(at, _)| at).collect()
}

fn fixture(with_tool_call: bool) -> Fixture {
    fixture_with(victim(with_tool_call))
}

/// The victim with a tool output long enough (a few KB, under the blob threshold) that the
/// journal keeps the record compressed.
fn compressed_victim() -> Record {
    let mut record = victim(true);
    record.blocks.push(Block::ToolResult {
        call_id: "call-0003".to_owned(),
        tool: "Bash".to_owned(),
        is_error: false,
        output: (0..120).map(|i| format!("line {i}: 東京 ☕ ok\n")).collect(),
    });
    record
}

fn fixture_with(victim: Record) -> Fixture {
    let disk = SimDisk::new();
    let store = Store::open_with_storage(disk.clone(), options()).unwrap();
    let other = vec![Record::text("other-1", Role::User, "a session nobody damages")];
    store.append("other", None, other.clone()).unwrap();
    let records = vec![
        Record::text("victim-0", Role::User, "before the victim"),
        Record::text("victim-1", Role::Assistant, "still before the victim"),
        victim.clone(),
        Record::text("victim-3", Role::User, "after the victim: its prevHash is the victim's hash"),
    ];
    // The victim's batch is the store's last write, so no later commit copies its page.
    store.append(SESSION, Some(0), records.clone()).unwrap();
    let (hash, prev) = {
        let snapshot = store.snapshot().unwrap();
        let guard = snapshot.record(SESSION, VICTIM_ORDER).unwrap().unwrap();
        let view = guard.view().unwrap();
        (view.hash(), view.prev_hash())
    };
    store.close().unwrap();
    let image = disk.live_image();
    // The value is a tag byte (0: kept as it is), then the archive, which starts with the
    // entryId's bytes (rkyv writes a struct's out-of-line data first, field by field, and the
    // entryId is the first field); its length is measured through the public API, so fields
    // added to the archive later are covered too.
    let len = archived_len(&victim);
    let tail: Vec<u8> = hash.iter().chain(prev.iter()).copied().collect();
    // A compressed value (tag 1, the chain fields prevHash · hash · seal, then a zstd frame) is
    // the store's only one.
    let magic: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
    let packed: Vec<usize> = find_all(&image, &prev)
        .into_iter()
        .filter_map(|s| s.checked_sub(1))
        .filter(|s| {
            image[*s] == 1 && image[s + 33..s + 65] == hash && image.get(s + 73..s + 77) == Some(magic)
        })
        .collect();
    let start = if packed.is_empty() {
        find_all(&image, ENTRY.as_bytes())
            .into_iter()
            .filter_map(|s| s.checked_sub(1))
            .find(|s| image[*s] == 0 && image.get(*s..s + len).is_some_and(|v| find_all(v, &tail).len() == 1))
            .expect("the victim's value is not in the image")
    } else {
        packed[0]
    };
    let value = image[start..start + len].to_vec();
    if packed.is_empty() {
        assert_eq!(
            find_all(&value, MARKER.as_bytes()).len(),
            1,
            "the marker is not inside the located value"
        );
        assert_eq!(find_all(&value, &tail).len(), 1, "the victim's hashes are not inside the located value");
    } else {
        assert!(packed.iter().all(|at| image[*at..*at + len] == value[..]), "two compressed values");
        assert!(len < 1500, "the compressed victim is {len} bytes");
    }
    let copies = find_all(&image, &value);
    Fixture { image, value: start..start + len, copies, records, other, hashes: (hash, prev) }
}

/// The length of a record's stored value: what the journal table grows by when it is appended
/// alone, less its 16-byte key.
fn archived_len(record: &Record) -> usize {
    let store = Store::open_with_storage(SimDisk::new(), options()).unwrap();
    let journal = |store: &Store| {
        let sizes = store.snapshot().unwrap().table_sizes().unwrap();
        sizes.into_iter().find(|t| t.table == "journal").unwrap().stored_bytes
    };
    let before = journal(&store);
    store.append("measure", None, vec![record.clone()]).unwrap();
    let grown = journal(&store) - before;
    usize::try_from(grown).unwrap() - 16
}

/// What reading one damaged image gave for the victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// The victim read back exactly as written: the flip hit bytes that carry no meaning.
    Harmless,
    /// Reading the victim reported corruption.
    Detected,
    /// Reading the victim returned other content (or hashes) without an error.
    Altered,
}

/// The outcome of one damaged image: what the read did, and every broken promise.
#[derive(Debug)]
struct Damage {
    effect: Effect,
    violations: Vec<String>,
}

/// Flips `mask` into the byte at `offset` of every copy of the victim's value, reopens, reads
/// and verifies.
fn damage(fixture: &Fixture, offset: usize, mask: u8) -> Damage {
    damage_all(fixture, &[(offset, mask)])
}

/// Reads a record in full: its content with payloads loaded, and its two hashes.
fn read_record(
    snapshot: &annal_engine::Snapshot,
    guard: &annal_engine::RecordGuard<'_>,
) -> Result<(Record, Hash, Hash), ReadError> {
    let view = guard.view()?;
    Ok((snapshot.to_record(&view)?, view.hash(), view.prev_hash()))
}

/// Flips each `(offset, mask)` into every copy of the victim's value, reopens, reads and
/// verifies. The promises: no panic; a read of the victim returns either the original or
/// `Corrupted`; its neighbours and the other session read unchanged; verify names the victim's
/// session and sourceOrder whenever the victim's content changed, and is clean when it did not.
fn damage_all(fixture: &Fixture, flips: &[(usize, u8)]) -> Damage {
    let mut image = fixture.image.clone();
    for (offset, mask) in flips {
        for copy in &fixture.copies {
            image[copy + offset] ^= mask;
        }
    }
    let mut violations = Vec::new();
    let store = match Store::open_with_storage(SimDisk::from_image(image), options()) {
        Ok(store) => store,
        Err(OpenError::Corrupted { .. }) => return Damage { effect: Effect::Detected, violations },
        Err(e) => {
            violations.push(format!("open failed with {e:?}, not as corruption"));
            return Damage { effect: Effect::Detected, violations };
        }
    };
    let snapshot = store.snapshot().unwrap();
    let mut effect = None;
    let mut order = 0;
    for item in snapshot.records(SESSION, 0..u64::MAX).unwrap() {
        let guard = match item {
            Ok(guard) => guard,
            Err(e) => {
                violations.push(format!("iterating past the damaged value failed: {e}"));
                break;
            }
        };
        let read = read_record(&snapshot, &guard);
        if guard.source_order() == VICTIM_ORDER {
            effect = Some(match read {
                Err(ReadError::Corrupted { .. }) => Effect::Detected,
                Err(e) => {
                    violations.push(format!("the victim read as {e:?}, not as corruption"));
                    Effect::Detected
                }
                Ok((record, hash, prev)) => {
                    if record != fixture.records[VICTIM_ORDER as usize] {
                        violations
                            .push(format!("the victim read without error as different content: {record:?}"));
                        Effect::Altered
                    } else if (hash, prev) != fixture.hashes {
                        violations
                            .push("the victim read without error with a different hash or prevHash".into());
                        Effect::Altered
                    } else {
                        Effect::Harmless
                    }
                }
            });
        } else {
            // Damage to one record leaves its neighbours readable.
            match read {
                Ok((record, _, _)) if record == fixture.records[guard.source_order() as usize] => {}
                other => violations.push(format!("neighbour {} read as {other:?}", guard.source_order())),
            }
        }
        order += 1;
    }
    if order != fixture.records.len() {
        violations.push(format!("read {order} records of {}", fixture.records.len()));
    }
    let effect = effect.unwrap_or(Effect::Detected);
    // Reading the victim by entryId tells the same story (or cannot find it, if the id itself
    // was damaged and the index now points at a record with another id).
    let by_entry = snapshot.record_by_entry(ENTRY).and_then(|(_, guard)| read_record(&snapshot, &guard));
    match by_entry {
        Ok((record, ..)) if record == fixture.records[VICTIM_ORDER as usize] => {}
        Err(ReadError::Corrupted { .. }) => {}
        Ok((record, ..)) => {
            violations.push(format!("record_by_entry returned different content: {record:?}"))
        }
        Err(e) => violations.push(format!("record_by_entry: {e:?}")),
    }
    match store.verify(None) {
        Err(e) => violations.push(format!("verify failed instead of reporting: {e}")),
        Ok(report) => {
            let named = report
                .problems
                .iter()
                .any(|p| p.session.as_deref() == Some(SESSION) && p.source_order == Some(VICTIM_ORDER));
            match effect {
                Effect::Harmless if !report.is_ok() => {
                    violations.push(format!(
                        "a flip that changed nothing made verify report {:?}",
                        report.problems
                    ));
                }
                Effect::Detected | Effect::Altered if !named => violations.push(format!(
                    "verify did not name session {SESSION:?} sourceOrder {VICTIM_ORDER}: {:?}",
                    report.problems
                )),
                _ => {}
            }
            if report.problems.iter().any(|p| p.session.as_deref() == Some("other")) {
                violations.push(format!("verify blamed the undamaged session: {:?}", report.problems));
            }
        }
    }
    let other: Result<Vec<Record>, ReadError> = snapshot
        .records("other", 0..u64::MAX)
        .unwrap()
        .map(|item| item.and_then(|guard| read_record(&snapshot, &guard)).map(|(record, ..)| record))
        .collect();
    if other.as_ref().ok() != Some(&fixture.other) {
        violations.push(format!("the undamaged session read as {other:?}"));
    }
    Damage { effect, violations }
}

/// Runs flips and fails with every broken promise, grouped, if there is any.
fn assert_all_handled(what: &str, runs: impl IntoIterator<Item = (String, Damage)>) -> Vec<Effect> {
    let mut effects = Vec::new();
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut total = 0;
    for (label, damage) in runs {
        total += 1;
        effects.push(damage.effect);
        for violation in damage.violations {
            // Group by the kind of violation (its text up to the first colon or brace).
            let kind = violation.split([':', '{', '[']).next().unwrap_or("").trim().to_owned();
            failures.entry(kind).or_default().push(format!("{label}: {violation}"));
        }
    }
    if !failures.is_empty() {
        let mut message = format!("{what}: of {total} flips:\n");
        for (kind, list) in &failures {
            message.push_str(&format!("  {} x {kind}, first: {}\n", list.len(), list[0]));
        }
        panic!("{message}");
    }
    effects
}
