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

/// A hostile peer's record that references 48 MiB of garbage in the stream's object store,
/// its message claiming a small size: the follower refuses it on the object's metadata, over
/// the 40 MiB limit, without reading it; its session stops with one line naming the object,
/// and the other sessions go on.
#[test]
fn an_object_over_the_limit_is_refused_before_it_is_read() {
    let (_cluster, options) = cluster();
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let scratch = open(&dir.path().join("scratch.redb"));
    let records = (0..2).map(|i| record(&format!("good-{i}"), i)).collect();
    scratch.append("good", Some(0), records).expect("append");
    scratch.append("hostile 日本", Some(0), vec![record("hostile-0", 0)]).expect("append");
    let hostile = wires(&scratch, "hostile 日本").remove(0);
    let good = wires(&scratch, "good");
    let object =
        format!("{}/{}", subject("annal", "hostile 日本"), hostile.json["hash"].as_str().expect("hash"));
    let garbage_bytes = 48 << 20;
    let mut headers = hostile.headers();
    headers.insert("Annal-Kind", "record-ref");
    let payload = serde_json::json!({"object": object, "bytes": 100, "hash": hostile.json["hash"]});
    let (good_0, good_1) = (good[0].headers(), good[1].headers());
    let (json_0, json_1) = (good[0].json.to_string(), good[1].json.to_string());
    raw(&options, |js| async move {
        let bucket = js
            .create_object_store(async_nats::jetstream::object_store::Config {
                bucket: format!("{}-records", annal_fleet::STREAM_DEFAULT),
                num_replicas: 3,
                ..Default::default()
            })
            .await
            .expect("bucket");
        // Not UTF-8, not JSON: bytes that only a reader of the whole object would find wrong.
        let garbage: Vec<u8> =
            (0..garbage_bytes).map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        bucket.put(object.as_str(), &mut garbage.as_slice()).await.expect("put the garbage");
        let good_subject = subject("annal", "good");
        js.publish_with_headers(good_subject.clone(), good_0, json_0.into())
            .await
            .expect("p")
            .await
            .expect("a");
        let hostile_subject = subject("annal", "hostile 日本");
        let payload = Bytes::from(payload.to_string());
        js.publish_with_headers(hostile_subject, headers, payload).await.expect("p").await.expect("a");
        js.publish_with_headers(good_subject, good_1, json_1.into()).await.expect("p").await.expect("a");
    });
    let follower = open(&dir.path().join("follower.redb"));
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert_eq!(report.stopped.len(), 1, "{:?}", report.stopped);
    let line = &report.stopped[0];
    assert!(line.contains("session \"hostile 日本\" stopped"), "{line}");
    assert!(line.contains(&format!("is {garbage_bytes} bytes, over the limit of {}", 40 << 20)), "{line}");
    assert_eq!(chain(&follower, "good"), chain(&scratch, "good"), "the other session went on");
    assert!(chain(&follower, "hostile 日本").is_empty());
}

/// A record whose JSON is over the fleet's object limit is not published: followers would
/// refuse it. Its session's publishing stops before it with one line; the other sessions and
/// the records before it are published.
#[test]
fn a_record_over_the_object_limit_is_not_published() {
    let (_cluster, mut options) = cluster();
    options.object_bytes_max = 2 << 20;
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let origin = open(&dir.path().join("origin.redb"));
    let big = "出力 line of tool output 🚀\n".repeat(3 << 20 >> 5);
    let records = vec![
        record("u0", 0),
        annal_engine::Record::new(
            "t1",
            annal_engine::Role::Tool,
            vec![annal_engine::Block::tool_result("c1", "Bash", false, big)],
        ),
        record("a2", 1),
    ];
    origin.append("big 日本", Some(0), records).expect("append");
    origin.append("small", Some(0), vec![record("s0", 0)]).expect("append");
    let report =
        annal_fleet::publish(&fleet, &origin, &annal_fleet::PublishOptions::default()).expect("publish");
    assert_eq!(report.records, 2, "the small session's record and the big one's first");
    assert_eq!(report.stopped.len(), 1, "{:?}", report.stopped);
    assert!(report.stopped[0].contains("session \"big 日本\": record 1 is"), "{}", report.stopped[0]);
    assert!(report.stopped[0].contains(&format!("over the fleet's object limit of {}", 2 << 20)));
    let follower = open(&dir.path().join("follower.redb"));
    let followed = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(followed.stopped.is_empty(), "{:?}", followed.stopped);
    assert_eq!(chain(&follower, "big 日本"), chain(&origin, "big 日本")[..1]);
    assert_eq!(chain(&follower, "small"), chain(&origin, "small"));
}
