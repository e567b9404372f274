//! Authorship: every host signs what it publishes, a follower keeps each record's signer and
//! signature, and a follower that trusts keys refuses records that no trusted key signed. The
//! forged, foreign-signed and tampered messages are written by a plain client, signed here
//! with ed25519 as docs/replication.md ("Signatures") describes, independently of the crate.

use std::path::Path;

use annal_engine::{hash_from_hex, record_to_json, Store};
use annal_fleet::{
    check_signatures, follow, host_key, publish, status, subject, trust_add, FollowOptions, PublishOptions,
    SharedSession,
};
use async_nats::HeaderMap;
use bytes::Bytes;
use ed25519_dalek::{Signer as _, SigningKey};

use crate::{chain, cluster, connect, open, raw, record};

/// The bytes a signature of a record covers.
fn signed_message(session: &str, order: u64, hash: &[u8; 32]) -> Vec<u8> {
    let mut out = b"annal.sig.v1\0record\0".to_vec();
    out.extend_from_slice(&(session.len() as u64).to_le_bytes());
    out.extend_from_slice(session.as_bytes());
    out.extend_from_slice(&order.to_le_bytes());
    out.extend_from_slice(hash);
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The secret seed of a store's host key, as a peer that stole it (or the test) reads it.
fn seed_of(store: &Path) -> [u8; 32] {
    let mut name = store.file_name().expect("name").to_os_string();
    name.push("-fleet-key");
    let text = std::fs::read_to_string(store.with_file_name(name)).expect("key file");
    let bytes: Vec<u8> =
        (0..32).map(|i| u8::from_str_radix(&text.trim()[i * 2..i * 2 + 2], 16).expect("hex")).collect();
    bytes.try_into().expect("32 bytes")
}

/// Record `order` of `session` in `scratch` as a message: headers, signed by `key` if given
/// (with its signature bytes passed through `tamper`), and JSON.
fn message(
    scratch: &Store,
    session: &str,
    order: u64,
    key: Option<&SigningKey>,
    tamper: fn(&mut [u8; 64]),
) -> (String, HeaderMap, Bytes) {
    let snapshot = scratch.snapshot().expect("snapshot");
    let guard = snapshot.record(session, order).expect("read").expect("record");
    let view = guard.view().expect("view");
    let json = record_to_json(&snapshot, &view).expect("json");
    let mut headers = HeaderMap::new();
    headers.insert("Annal-Wire", "1");
    headers.insert("Annal-Kind", "record");
    headers.insert("Annal-Session", session);
    headers.insert("Annal-Order", order.to_string().as_str());
    headers.insert("Annal-Hash", json["hash"].as_str().expect("hash"));
    if let Some(key) = key {
        let hash = hash_from_hex(json["hash"].as_str().expect("hash")).expect("hash");
        let mut signature = key.sign(&signed_message(session, order, &hash)).to_bytes();
        tamper(&mut signature);
        headers.insert("Annal-Signer", hex(key.verifying_key().as_bytes()).as_str());
        headers.insert("Annal-Signature", hex(&signature).as_str());
    }
    (subject("annal", session), headers, Bytes::from(json.to_string()))
}

fn as_is(_: &mut [u8; 64]) {}

fn flip(signature: &mut [u8; 64]) {
    signature[17] ^= 0x40;
}

#[test]
fn signed_records_round_trip_with_their_signers_kept_and_verified() {
    let (_cluster, options) = cluster();
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let origin_path = dir.path().join("origin.redb");
    let origin = open(&origin_path);
    let records = (0..6).map(|i| record(&format!("o-{i}"), i)).collect();
    origin.append("会話 🚀 e\u{301}", Some(0), records).expect("append");
    // Appended here and not yet published: unsigned, which is not damage.
    let before = status(&fleet, &origin, None).expect("status");
    assert_eq!((before[0].signers.len(), before[0].unsigned), (0, 6));
    assert!(check_signatures(&origin, None).expect("signatures").is_empty());
    let report = publish(&fleet, &origin, &PublishOptions::default()).expect("publish");
    assert_eq!(report.records, 6);

    // The key was made on first use, beside the store, readable by its owner only.
    let key_file = dir.path().join("origin.redb-fleet-key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file).expect("key file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let origin_key = host_key(&origin).expect("key");
    assert_eq!(origin_key.len(), 64);
    assert!(
        !std::fs::read_to_string(&key_file).expect("read").contains(&origin_key),
        "the file holds the secret"
    );

    // A second host appends to a shared session: its appends are signed by its own key.
    let writer = open(&dir.path().join("writer.redb"));
    let shared = SharedSession::new(&fleet, &writer, "shared 日本");
    for i in 0..3 {
        shared.append(None, vec![record(&format!("w-{i}"), i)]).expect("shared append");
    }
    let writer_key = host_key(&writer).expect("key");
    assert_ne!(writer_key, origin_key);

    let follower = open(&dir.path().join("follower.redb"));
    trust_add(&follower, "origin 東京", &origin_key).expect("trust");
    trust_add(&follower, "writer", &writer_key.to_uppercase()).expect("trust, either case");
    let followed = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(followed.stopped.is_empty(), "{:?}", followed.stopped);
    assert_eq!(chain(&follower, "会話 🚀 e\u{301}"), chain(&origin, "会話 🚀 e\u{301}"));
    assert_eq!(chain(&follower, "shared 日本"), chain(&writer, "shared 日本"));
    assert!(follower.verify(None).expect("verify").problems.is_empty());
    assert!(check_signatures(&follower, None).expect("signatures").is_empty());

    let rows = status(&fleet, &follower, None).expect("status");
    let row = |name: &str| rows.iter().find(|row| row.session == name).expect("row").clone();
    assert_eq!(row("会話 🚀 e\u{301}").signers, vec![("origin 東京".to_owned(), 6)]);
    assert_eq!(row("会話 🚀 e\u{301}").unsigned, 0);
    assert_eq!(row("shared 日本").signers, vec![("writer".to_owned(), 3)]);
    // The publisher and the shared writer keep their own signatures too.
    let origin_rows = status(&fleet, &origin, None).expect("status");
    assert_eq!(origin_rows[0].signers, vec![("this host".to_owned(), 6)]);
    let writer_rows = status(&fleet, &writer, None).expect("status");
    assert_eq!(writer_rows[0].signers, vec![("this host".to_owned(), 3)]);

    // The same session rewritten with other text and its chain recomputed, under the kept
    // signatures: the journal's own checks pass, the signatures do not.
    let rewritten = open(&dir.path().join("rewritten.redb"));
    let other = (0..6).map(|i| record(&format!("o-{i}"), i + 1)).collect();
    rewritten.append("会話 🚀 e\u{301}", Some(0), other).expect("append");
    let kept: Vec<_> = follower
        .cursors("fleet-sig:")
        .expect("rows")
        .into_iter()
        .map(|(name, value)| (name, Some(value)))
        .collect();
    assert_eq!(kept.len(), 9, "one signature kept per record");
    rewritten.put_cursors(kept).expect("copy the signatures");
    assert!(rewritten.verify(None).expect("verify").problems.is_empty(), "the chain itself is whole");
    let problems = check_signatures(&rewritten, None).expect("signatures");
    assert_eq!(problems.len(), 1, "{problems:?}");
    let line = problems[0].to_string();
    assert!(line.contains("sourceOrder 0: the record does not match the signature kept for it"), "{line}");
}

#[test]
fn forged_foreign_and_tampered_records_are_refused_once_keys_are_trusted() {
    let (_cluster, options) = cluster();
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let origin_path = dir.path().join("origin.redb");
    let origin = open(&origin_path);
    let first: Vec<_> = (0..3).map(|i| record(&format!("s-{i}"), i)).collect();
    origin.append("forged 日本", Some(0), first.clone()).expect("append");
    publish(&fleet, &origin, &PublishOptions::default()).expect("publish");

    // A peer allowed to publish forges record 3 with a correct chain, unsigned; another signs
    // a session with a key nobody trusts; a third sends a signature with one bit flipped, and
    // one claiming the origin's key.
    let scratch = open(&dir.path().join("scratch.redb"));
    scratch.append("forged 日本", Some(0), first).expect("same first records");
    scratch.append("forged 日本", Some(3), vec![record("s-3 forged", 3)]).expect("forged");
    for name in ["foreign 🚀", "tampered e\u{301}", "claimed"] {
        let records = (0..2).map(|i| record(&format!("{name}-{i}"), i)).collect();
        scratch.append(name, Some(0), records).expect("append");
    }
    let stranger = SigningKey::from_bytes(&[0x5a; 32]);
    let origin_seed = SigningKey::from_bytes(&seed_of(&origin_path));
    let mut messages = vec![message(&scratch, "forged 日本", 3, None, as_is)];
    for order in 0..2 {
        messages.push(message(&scratch, "foreign 🚀", order, Some(&stranger), as_is));
        let tamper = if order == 1 { flip } else { as_is };
        messages.push(message(&scratch, "tampered e\u{301}", order, Some(&origin_seed), tamper));
        let mut claimed = message(&scratch, "claimed", order, Some(&stranger), as_is);
        claimed.1.insert("Annal-Signer", hex(origin_seed.verifying_key().as_bytes()).as_str());
        messages.push(claimed);
    }
    raw(&options, |js| async move {
        for (subject, headers, payload) in messages {
            js.publish_with_headers(subject, headers, payload).await.expect("publish").await.expect("ack");
        }
    });

    // Trusting nothing: the forged record is applied and reported unsigned, the stranger's
    // records are kept with their signer; a signature that does not match stops its session.
    let open_door = open(&dir.path().join("open.redb"));
    let report = follow(&fleet, &open_door, &FollowOptions::default(), &|| true).expect("follow");
    let stopped = report.stopped.join("\n");
    assert_eq!(report.stopped.len(), 2, "{stopped}");
    for name in ["tampered e\u{301}", "claimed"] {
        assert!(stopped.contains(&format!("session {name:?} stopped")), "{name} in:\n{stopped}");
    }
    assert!(stopped.contains("its signature does not match"), "{stopped}");
    assert_eq!(chain(&open_door, "forged 日本"), chain(&scratch, "forged 日本"));
    assert_eq!(chain(&open_door, "tampered e\u{301}").len(), 1, "up to the flipped signature");
    assert!(chain(&open_door, "claimed").is_empty());
    let rows = status(&fleet, &open_door, None).expect("status");
    let row = |name: &str| rows.iter().find(|row| row.session == name).expect("row").clone();
    let origin_short = format!("{}…", &host_key(&origin).expect("key")[..16]);
    assert_eq!(row("forged 日本").signers, vec![(origin_short, 3)]);
    assert_eq!(row("forged 日本").unsigned, 1, "the forged record is reported unsigned");
    let stranger_short = format!("{}…", &hex(stranger.verifying_key().as_bytes())[..16]);
    assert_eq!(row("foreign 🚀").signers, vec![(stranger_short.clone(), 2)]);
    assert!(open_door.verify(None).expect("verify").problems.is_empty());
    assert!(check_signatures(&open_door, None).expect("signatures").is_empty());

    // Trusting the origin: only its records are applied.
    let guarded = open(&dir.path().join("guarded.redb"));
    trust_add(&guarded, "origin", &host_key(&origin).expect("key")).expect("trust");
    let report = follow(&fleet, &guarded, &FollowOptions::default(), &|| true).expect("follow");
    let stopped = report.stopped.join("\n");
    assert_eq!(report.stopped.len(), 4, "{stopped}");
    for (name, reason) in [
        ("forged 日本", "unsigned, and this store applies only records signed by a trusted key"),
        ("foreign 🚀", &format!("signed by {stranger_short}, a key this store does not trust")),
        ("tampered e\u{301}", "its signature does not match"),
        ("claimed", "its signature does not match"),
    ] {
        let line = report.stopped.iter().find(|line| line.contains(&format!("session {name:?} stopped")));
        let line = line.unwrap_or_else(|| panic!("{name} in:\n{stopped}"));
        assert!(line.contains(reason), "{line}");
    }
    assert_eq!(chain(&guarded, "forged 日本"), chain(&origin, "forged 日本"), "up to the forged record");
    assert!(chain(&guarded, "foreign 🚀").is_empty());
    assert_eq!(chain(&guarded, "tampered e\u{301}").len(), 1);
    let again = follow(&fleet, &guarded, &FollowOptions::default(), &|| true).expect("again");
    assert_eq!((again.records, again.still_stopped.len()), (0, 4));
}
