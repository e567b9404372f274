//! Bad input on the stream: a message that is not annal's, a record whose hash does not chain,
//! a reordered or duplicated message, one over the size limit. Each stops its own session with
//! a line naming it, nothing after the bad message is applied there, and the others go on.

use annal_engine::{record_to_json, Limits, Store, StoreOptions};
use annal_fleet::{follow, subject, FollowOptions};
use async_nats::HeaderMap;
use bytes::Bytes;

use crate::{chain, cluster, connect, open, raw, record};

/// A record of a scratch store as a stream message: its session, JSON and headers.
struct Wire {
    session: String,
    json: serde_json::Value,
}

impl Wire {
    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("Annal-Wire", "1");
        headers.insert("Annal-Kind", "record");
        headers.insert("Annal-Session", self.session.as_str());
        headers.insert("Annal-Order", self.json["sourceOrder"].to_string().as_str());
        headers.insert("Annal-Hash", self.json["hash"].as_str().expect("hash"));
        headers
    }
}

/// The records of `session` in a scratch store, as messages.
fn wires(store: &Store, session: &str) -> Vec<Wire> {
    let snapshot = store.snapshot().expect("snapshot");
    let mut out = Vec::new();
    for guard in snapshot.records(session, 0..u64::MAX).expect("records") {
        let guard = guard.expect("record");
        let json = record_to_json(&snapshot, &guard.view().expect("view")).expect("json");
        out.push(Wire { session: session.to_owned(), json });
    }
    out
}

#[test]
fn each_bad_message_stops_its_session_and_the_others_go_on() {
    let (_cluster, options) = cluster();
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let scratch = open(&dir.path().join("scratch.redb"));
    let sessions = ["good", "bad hash", "reordered", "duplicate", "too big 日本"];
    for name in sessions {
        let records = (0..3).map(|i| record(&format!("{name}-{i}"), i)).collect();
        scratch.append(name, Some(0), records).expect("append");
    }
    let big = annal_engine::Record::text("too big 日本-3", annal_engine::Role::Tool, "🚀".repeat(40_000));
    scratch.append("too big 日本", Some(3), vec![big]).expect("append big");
    let good = wires(&scratch, "good");
    let bad_hash = wires(&scratch, "bad hash");
    let reordered = wires(&scratch, "reordered");
    let duplicate = wires(&scratch, "duplicate");
    let too_big = wires(&scratch, "too big 日本");

    // The same position under another id: record 1 of another session, renumbered.
    let mut other = wires(&scratch, "good").remove(1);
    other.session = "duplicate".into();
    other.json["entryId"] = "duplicate-other".into();
    let mut altered = bad_hash[1].json.clone();
    altered["blocks"][0]["text"] = "altered text, same claimed hash".into();

    type Message = (String, Option<HeaderMap>, Bytes);
    let mut messages: Vec<Message> = Vec::new();
    let message = |wire: &Wire, json: &serde_json::Value| -> Message {
        (subject("annal", &wire.session), Some(wire.headers()), Bytes::from(json.to_string()))
    };
    let mut push = |wire: &Wire, json: &serde_json::Value| messages.push(message(wire, json));
    push(&good[0], &good[0].json);
    push(&bad_hash[0], &bad_hash[0].json);
    push(&bad_hash[1], &altered);
    push(&bad_hash[2], &bad_hash[2].json);
    push(&reordered[1], &reordered[1].json);
    push(&reordered[0], &reordered[0].json);
    push(&duplicate[0], &duplicate[0].json);
    push(&duplicate[1], &duplicate[1].json);
    push(&other, &other.json);
    push(&duplicate[2], &duplicate[2].json);
    for wire in &too_big {
        push(wire, &wire.json);
    }
    push(&good[1], &good[1].json);
    // Not annal's: no headers at all, and a subject that names no session.
    messages.push((subject("annal", "foreign"), None, Bytes::from_static(b"{\"hello\": \"world\"}")));
    messages.push(("annal.s.a_zz".into(), None, Bytes::from_static(b"?")));
    messages.push(message(&good[2], &good[2].json));
    raw(&options, |js| async move {
        for (subject, headers, payload) in messages {
            let ack = match headers {
                Some(headers) => js.publish_with_headers(subject, headers, payload).await,
                None => js.publish(subject, payload).await,
            };
            ack.expect("publish").await.expect("ack");
        }
    });

    let limits = Limits { record_size_bytes_max: 64 << 10, ..Limits::default() };
    let follower =
        Store::open(dir.path().join("follower.redb"), StoreOptions { limits, ..StoreOptions::default() })
            .expect("follower");
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    let stopped = report.stopped.join("\n");
    for name in ["bad hash", "reordered", "duplicate", "too big 日本", "foreign"] {
        assert!(stopped.contains(&format!("session {name:?} stopped")), "{name} in:\n{stopped}");
    }
    assert_eq!(report.stopped.len(), 5, "{stopped}");
    assert!(stopped.contains("gap"), "{stopped}");
    assert!(stopped.contains("already held by another record"), "{stopped}");
    assert!(stopped.contains("not annal's wire form"), "{stopped}");
    assert_eq!(report.foreign.len(), 1, "{:?}", report.foreign);

    let held = |session: &str| chain(&follower, session).len();
    assert_eq!(held("good"), 3, "the good session went on past every bad message");
    assert_eq!(chain(&follower, "good"), chain(&scratch, "good"));
    assert_eq!(held("bad hash"), 1, "nothing after the record that does not chain");
    assert_eq!(held("reordered"), 0);
    assert_eq!(held("duplicate"), 2);
    assert_eq!(held("too big 日本"), 3);
    assert!(follower.verify(None).expect("verify").problems.is_empty());

    // A stopped session stays stopped; following again applies nothing more there.
    let again = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("again");
    assert_eq!((again.records, again.stopped.len()), (0, 0));
    assert_eq!(held("bad hash"), 1);
}
