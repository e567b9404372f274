//! Publishing a store and following it elsewhere: the follower's sessions, forks, receipts and
//! projections equal the origin's, each record is on the stream once, and publishing resumes.

use annal_engine::{Budget, CompactOptions, ProjectOptions, Store};
use annal_fleet::{follow, publish, FollowOptions, PublishOptions};
use annal_support::sessions::{Profile, SessionSpec};

use crate::{chain, cluster, connect, open, stream_messages};

fn generated(store: &Store, session: &str, profile: Profile, seed: u64, count: usize) {
    let records: Vec<_> = SessionSpec { profile, seed }
        .records()
        .take(count)
        .map(|mut r| {
            r.entry_id = format!("{session}/{}", r.entry_id);
            r
        })
        .collect();
    store.append(session, Some(0), records).expect("append");
}

fn projection_bytes(store: &Store, session: &str) -> Vec<u8> {
    let view = store.project(session, &ProjectOptions::new(Budget::new(8_000, 1_000))).expect("project");
    let mut out = Vec::new();
    annal_engine::write_messages_json(&mut out, &view.messages).expect("json");
    out
}

#[test]
fn a_follower_holds_what_the_origin_holds_and_projects_the_same_bytes() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let origin = open(&dir.path().join("origin.redb"));
    generated(&origin, "coding 日本", Profile::Coding, 7, 300);
    generated(&origin, "chat 🚀", Profile::Chat, 8, 120);
    origin.fork("coding 日本", 150, "coding 日本 / retry").expect("fork");
    let more: Vec<_> = SessionSpec { profile: Profile::Coding, seed: 9 }.records().take(40).collect();
    let more: Vec<_> = more
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.entry_id = format!("retry-{i}");
            r
        })
        .collect();
    origin.append("coding 日本 / retry", Some(150), more).expect("append to fork");
    // A compaction receipt travels as a record; the checkpoint is derived from it there.
    let compact = CompactOptions::new(ProjectOptions::new(Budget::new(8_000, 1_000)));
    origin.compact("coding 日本", &compact).expect("compact");

    let fleet = connect(&options);
    let report = publish(&fleet, &origin, &PublishOptions::default()).expect("publish");
    assert_eq!(report.forks, 1);
    let total: u64 =
        ["coding 日本", "chat 🚀"].iter().map(|s| chain(&origin, s).len() as u64).sum::<u64>() + 40;
    assert_eq!(report.records, total);

    let follower = open(&dir.path().join("follower.redb"));
    let followed = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(followed.stopped.is_empty(), "{:?}", followed.stopped);
    assert_eq!((followed.records, followed.forks), (total, 1));
    for session in ["coding 日本", "chat 🚀", "coding 日本 / retry"] {
        assert_eq!(chain(&follower, session), chain(&origin, session), "{session}");
        assert_eq!(projection_bytes(&follower, session), projection_bytes(&origin, session), "{session}");
    }
    let info =
        follower.snapshot().expect("snap").session("coding 日本 / retry").expect("read").expect("fork");
    assert_eq!((info.parent.as_deref(), info.fork_at), (Some("coding 日本"), Some(150)));
    assert!(follower.verify(None).expect("verify").problems.is_empty());

    // Nothing new: a second publish sends nothing, and a second follow applies nothing.
    assert_eq!(publish(&fleet, &origin, &PublishOptions::default()).expect("again").records, 0);
    assert_eq!(follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("again").records, 0);
    assert_eq!(stream_messages(&options), total + 1, "each record and the fork once on the stream");

    // Appends after a publish are published from where it left off.
    let later: Vec<_> = SessionSpec { profile: Profile::Chat, seed: 10 }.records().take(5).collect();
    let next = chain(&origin, "chat 🚀").len() as u64;
    let later: Vec<_> = later
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.entry_id = format!("later-{i}");
            r
        })
        .collect();
    origin.append("chat 🚀", Some(next), later).expect("append later");
    assert_eq!(publish(&fleet, &origin, &PublishOptions::default()).expect("later").records, 5);
    assert_eq!(follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("later").records, 5);
    assert_eq!(chain(&follower, "chat 🚀"), chain(&origin, "chat 🚀"));
    assert_eq!(stream_messages(&options), total + 6);
}

#[test]
fn a_record_over_the_message_limit_travels_through_the_object_store() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let origin = open(&dir.path().join("origin.redb"));
    // 3 MB of tool output: three times the servers' default payload limit.
    let big = "出力 line of tool output 🚀\n".repeat(3 << 20 >> 5);
    let records = vec![
        crate::record("u0", 0),
        annal_engine::Record::new(
            "t1",
            annal_engine::Role::Tool,
            vec![annal_engine::Block::tool_result("c1", "Bash", false, big)],
        ),
        crate::record("a2", 1),
    ];
    origin.append("big", Some(0), records).expect("append");
    let fleet = connect(&options);
    assert_eq!(publish(&fleet, &origin, &PublishOptions::default()).expect("publish").records, 3);
    let follower = open(&dir.path().join("follower.redb"));
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    assert_eq!(chain(&follower, "big"), chain(&origin, "big"));
}

#[test]
fn a_pattern_follows_only_the_sessions_it_names() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let origin = open(&dir.path().join("origin.redb"));
    generated(&origin, "claude:one", Profile::Chat, 1, 10);
    generated(&origin, "codex:two", Profile::Chat, 2, 10);
    let fleet = connect(&options);
    publish(&fleet, &origin, &PublishOptions::default()).expect("publish");
    let follower = open(&dir.path().join("follower.redb"));
    let mut only = FollowOptions::default();
    only.sessions = Some("claude:*".into());
    let report = follow(&fleet, &follower, &only, &|| true).expect("follow");
    assert_eq!(report.records, 10);
    let names: Vec<_> =
        follower.snapshot().expect("snap").sessions().expect("list").into_iter().map(|s| s.name).collect();
    assert_eq!(names, vec!["claude:one".to_owned()]);
}
