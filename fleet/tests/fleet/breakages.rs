//! The six ways the fleet broke under one server's loss, a bad message or a lost
//! acknowledgement, each as the test that failed before its fix: a writer behind when the
//! stream's leader dies, a follower started during the election, a bad message on one
//! session, an acknowledgement lost for longer than the timeout, a fork of a stopped
//! session, and a second follow or a wrong password that said too little.

use std::time::Duration;

use annal_engine::{record_to_json, ErrorKind};
use annal_fleet::{
    follow, publish, status, subject, FleetError, FleetOptions, FollowOptions, PublishOptions, SharedSession,
};
use annal_support::nats::Proxy;
use async_nats::HeaderMap;
use bytes::Bytes;

use crate::faults::leader;
use crate::{chain, cluster, connect, open, raw, record, stream_messages};

/// Kills the JetStream meta leader, first moving the stream's leadership off it: the stream
/// then answers reads at once, while creating a consumer waits for the meta election.
pub(crate) fn kill_the_meta_leader(cluster: &mut annal_support::nats::Cluster, options: &FleetOptions) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        assert!(std::time::Instant::now() < deadline, "no meta leader apart from the stream's");
        let Some(meta) = cluster.meta_leader() else { continue };
        if leader(cluster, options) != meta {
            cluster.kill(meta);
            return;
        }
        raw(options, |js| async move {
            let subject = format!("$JS.API.STREAM.LEADER.STEPDOWN.{}", annal_fleet::STREAM_DEFAULT);
            // The answer does not matter: the loop looks at who leads now.
            let _ = js.client().request(subject, Bytes::new()).await;
        });
    }
}

fn ids(store: &annal_engine::Store, session: &str) -> Vec<String> {
    chain(store, session).into_iter().map(|(id, _)| id).collect()
}

/// Breakage 1: the catch-up of a writer behind the fleet met the election after the stream's
/// leader was killed, read its timeout as "unreachable", and sent the append to a fork.
#[test]
fn a_writer_behind_when_the_leader_dies_appends_to_the_session_not_a_fork() {
    let (mut cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let (a_store, b_store) = (open(&dir.path().join("a.redb")), open(&dir.path().join("b.redb")));
    let (mut a_options, mut b_options) = (options.clone(), options.clone());
    (a_options.host, b_options.host) = ("a".into(), "b".into());
    let (a_fleet, b_fleet) = (connect(&a_options), connect(&b_options));
    let a = SharedSession::new(&a_fleet, &a_store, "race-s");
    for i in 0..3 {
        a.append(Some(i), vec![record(&format!("a{i}"), i as usize)]).expect("a appends");
    }
    kill_the_meta_leader(&mut cluster, &options);
    // b holds nothing of the session: appending at 3 first catches up, during the election.
    let b = SharedSession::new(&b_fleet, &b_store, "race-s");
    let receipt = b.append(Some(3), vec![record("b3", 3)]).expect("b appends once a leader is elected");
    assert_eq!(receipt.source_orders, vec![3]);
    assert_eq!(b.writing_to().expect("where"), "race-s", "the append went to the session");
    assert_eq!(ids(&b_store, "race-s"), ["a0", "a1", "a2", "b3"]);
}

/// Breakage 2: `follow` right after a server was killed gave up on the consumer it could not
/// create during the election, well inside its timeout.
#[test]
fn a_follow_started_during_the_election_waits_for_the_new_leader() {
    let (mut cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let writer = open(&dir.path().join("w.redb"));
    let records = (0..5).map(|i| record(&format!("w{i}"), i)).collect();
    writer.append("kept 日本", Some(0), records).expect("append");
    let fleet = connect(&options);
    publish(&fleet, &writer, &PublishOptions::default()).expect("publish");
    let follower_fleet = connect(&options);
    kill_the_meta_leader(&mut cluster, &options);
    let follower = open(&dir.path().join("f.redb"));
    let report = follow(&follower_fleet, &follower, &FollowOptions::default(), &|| true)
        .expect("follow waits for the election");
    assert_eq!((report.records, report.stopped.len()), (5, 0));
    assert_eq!(chain(&follower, "kept 日本"), chain(&writer, "kept 日本"));
}

/// Breakage 3: one headerless message of random bytes on one session's subject made every
/// publish pass and `status` fail, for every session of the store.
#[test]
fn a_bad_message_on_one_session_leaves_publish_and_status_of_the_others_going() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("s.redb"));
    for name in ["good", "bad"] {
        store.append(name, Some(0), vec![record(&format!("{name}0"), 0)]).expect("append");
    }
    let fleet = connect(&options);
    publish(&fleet, &store, &PublishOptions::default()).expect("first publish");
    raw(&options, |js| async move {
        let noise = Bytes::from_static(b"\x9f\x00 \xe3\x80\x80 random bytes \xf0\x9f\x9a\x80");
        js.publish(subject("annal", "bad"), noise).await.expect("publish").await.expect("ack");
    });
    for name in ["good", "bad"] {
        store.append(name, Some(1), vec![record(&format!("{name}1"), 1)]).expect("append");
    }
    let report = publish(&fleet, &store, &PublishOptions::default()).expect("publish goes on");
    assert_eq!(report.records, 1, "the good session's new record");
    assert_eq!(report.stopped.len(), 1, "{:?}", report.stopped);
    assert!(report.stopped[0].contains("session \"bad\""), "{:?}", report.stopped);

    let rows = status(&fleet, &store, None).expect("status goes on");
    let row = |name: &str| rows.iter().find(|row| row.session == name).expect("a row");
    assert_eq!((row("good").fleet, row("good").unpublished), (2, 0));
    assert!(row("bad").stopped.as_deref().is_some_and(|line| line.contains("stream message 3")), "{rows:?}");
}

/// Breakage 4: an acknowledgement lost for longer than the timeout sent the record to a
/// fork, and the writer's own follow then stopped the shared session for good when the
/// record turned up in it. A publish that may have been stored is "not acknowledged": the
/// retry with the same entryIds finds it on the stream.
#[test]
fn a_lost_acknowledgement_is_resolved_from_the_stream_not_by_stopping_the_session() {
    let (cluster, options) = cluster();
    let proxy = Proxy::start(cluster.nodes[0].port);
    let mut through = FleetOptions::from_urls(&proxy.url()).expect("url");
    (through.timeout, through.host) = (Duration::from_secs(2), "w".into());
    let fleet = connect(&through);
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("w.redb"));
    let shared = SharedSession::new(&fleet, &store, "acked once");
    shared.append(Some(0), vec![record("e0", 0)]).expect("first");
    proxy.swallow_replies_after_next_publish();
    let lost = shared.append(Some(1), vec![record("e1", 1)]);
    assert!(proxy.swallowed_publishes() > 0, "the server got the publish");
    let err = lost.expect_err("an append whose acknowledgement was lost is not acknowledged");
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    proxy.let_replies_through();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let receipt = loop {
        match shared.append(Some(1), vec![record("e1", 1)]) {
            Ok(receipt) => break receipt,
            Err(err) if err.kind() == ErrorKind::Busy && std::time::Instant::now() < deadline => {}
            Err(err) => panic!("the retry: {err}"),
        }
    };
    assert_eq!(receipt.source_orders, vec![1]);
    assert_eq!(shared.writing_to().expect("where"), "acked once");
    let report = follow(&connect(&options), &store, &FollowOptions::default(), &|| true).expect("follow");
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    assert_eq!(stream_messages(&options), 2, "the record is on the stream once");
    let follower = open(&dir.path().join("f.redb"));
    follow(&connect(&options), &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert_eq!(ids(&follower, "acked once"), ["e0", "e1"]);
}

/// Breakage 5: a hostile record on a legitimate session stopped it (right), and every
/// follower stopped its writer's fork too, because the fork's parent was stopped.
#[test]
fn a_fork_of_a_stopped_session_is_followed() {
    let (_cluster, mut options) = cluster();
    options.host = "w".into();
    let dir = tempfile::tempdir().expect("dir");
    let writer = open(&dir.path().join("w.redb"));
    let records = (0..3).map(|i| record(&format!("s{i}"), i)).collect();
    writer.append("s", Some(0), records).expect("append");
    let fleet = connect(&options);
    publish(&fleet, &writer, &PublishOptions::default()).expect("publish");
    // Someone who may publish writes a record at 3 that does not chain after record 2.
    let snapshot = writer.snapshot().expect("snapshot");
    let guard = snapshot.record("s", 2).expect("read").expect("record 2");
    let mut json = record_to_json(&snapshot, &guard.view().expect("view")).expect("json");
    (json["entryId"], json["sourceOrder"]) = ("hostile".into(), 3.into());
    let mut headers = HeaderMap::new();
    for (name, value) in
        [("Annal-Wire", "1"), ("Annal-Kind", "record"), ("Annal-Session", "s"), ("Annal-Order", "3")]
    {
        headers.insert(name, value);
    }
    headers.insert("Annal-Hash", json["hash"].as_str().expect("hash"));
    raw(&options, |js| async move {
        let payload = Bytes::from(json.to_string());
        js.publish_with_headers(subject("annal", "s"), headers, payload)
            .await
            .expect("publish")
            .await
            .expect("ack");
    });
    let more = (3..5).map(|i| record(&format!("s{i}"), i)).collect();
    writer.append("s", Some(3), more).expect("append");
    let report = publish(&fleet, &writer, &PublishOptions::default()).expect("publish");
    assert_eq!((report.forks, report.records), (1, 2), "{:?}", report.diverged);

    let follower = open(&dir.path().join("f.redb"));
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert_eq!(report.stopped.len(), 1, "only the session with the hostile record: {:?}", report.stopped);
    assert!(report.stopped[0].contains("session \"s\""), "{:?}", report.stopped);
    assert_eq!(ids(&follower, "s~w-3"), ["s0", "s1", "s2", "s3", "s4"]);
    assert_eq!(chain(&follower, "s~w-3"), chain(&writer, "s"));
    assert!(follower.verify(None).expect("verify").problems.is_empty());
}

/// Breakage 6, a second follow: it said nothing of the sessions that stayed stopped.
#[test]
fn a_second_follow_names_the_sessions_still_stopped() {
    let (_cluster, options) = cluster();
    let fleet = connect(&options);
    raw(&options, |js| async move {
        js.publish(subject("annal", "noise 日本"), Bytes::from_static(b"?"))
            .await
            .expect("pub")
            .await
            .expect("ack");
    });
    let dir = tempfile::tempdir().expect("dir");
    let follower = open(&dir.path().join("f.redb"));
    let first = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert_eq!((first.stopped.len(), first.still_stopped.len()), (1, 0), "{first:?}");
    let again = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("again");
    assert!(again.stopped.is_empty(), "{again:?}");
    assert_eq!(again.still_stopped.len(), 1, "{again:?}");
    assert!(again.still_stopped[0].contains("noise 日本"), "{again:?}");
}

/// Breakage 6, credentials: a wrong password was reported as servers that cannot be reached.
#[test]
fn a_wrong_password_is_reported_as_refused_not_unreachable() {
    let authorization = "authorization {\n  user: \"agent\"\n  password: \"c0rrect horse\"\n}";
    let cluster =
        annal_support::nats::Cluster::start_with(1, annal_support::nats::Sync::Default, None, authorization);
    let port = cluster.nodes[0].port;
    let mut wrong = FleetOptions::from_urls(&format!("nats://agent:wr0ng@127.0.0.1:{port}")).expect("url");
    wrong.timeout = Duration::from_secs(2);
    let err = annal_fleet::Fleet::connect(wrong).expect_err("refused");
    let line = err.to_string();
    assert!(matches!(err, FleetError::Refused { .. }), "{line}");
    assert!(line.contains("refused the credentials") && !line.contains("cannot reach"), "{line}");
    assert!(!line.contains("wr0ng"), "{line}");
    assert_eq!(err.kind(), ErrorKind::BadInput);
}
