//! A minority partition: a writer that reaches only one server, and that server cut off from
//! the other two. Its append is never acknowledged: it fails as *busy* (the record may still
//! be on its way) or goes to a fork it is told of (no server could have taken it); the majority
//! side goes on; once healed, the fork is published and followed as a fork of the session.

use std::time::Duration;

use annal_engine::ErrorKind;
use annal_fleet::{follow, publish, FleetError, FleetOptions, FollowOptions, PublishOptions, SharedSession};
use annal_support::nats::{Cluster, Sync};

use crate::faults::leader;
use crate::{chain, connect, open, record};

#[test]
fn a_writer_with_only_the_cut_off_stream_leader_is_never_acknowledged() {
    cut_off_with_one_server(true);
}

#[test]
fn a_writer_with_only_a_cut_off_follower_server_is_never_acknowledged() {
    cut_off_with_one_server(false);
}

fn cut_off_with_one_server(the_leader: bool) {
    let cluster = Cluster::start_partitionable(3, Sync::Default);
    let options = FleetOptions::from_urls(&cluster.urls()).expect("urls");
    let majority_fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let session = "shared 日本";
    let majority_store = open(&dir.path().join("majority.redb"));
    let majority = SharedSession::new(&majority_fleet, &majority_store, session);
    majority.append(Some(0), vec![record("m-0", 0)]).expect("before the partition");

    let stream_leader = leader(&cluster, &options);
    let cut = if the_leader { stream_leader } else { (stream_leader + 1) % 3 };
    let mut alone = FleetOptions::from_urls(&cluster.nodes[cut].url()).expect("url");
    (alone.timeout, alone.host) = (Duration::from_secs(4), "minority".into());
    let minority_fleet = connect(&alone);
    let minority_store = open(&dir.path().join("minority.redb"));
    let minority = SharedSession::new(&minority_fleet, &minority_store, session);
    minority.append(None, vec![record("w-0", 1)]).expect("before the partition");

    cluster.isolate(cut, true);
    // The majority elects what it lacks and goes on; its writer knows only its two servers.
    let mut two = options.clone();
    two.servers = (0..3).filter(|&i| i != cut).map(|i| cluster.nodes[i].url()).collect();
    two.timeout = Duration::from_secs(20);
    let majority_fleet = connect(&two);
    let majority = SharedSession::new(&majority_fleet, &majority_store, session);
    for turn in 1..4 {
        majority.append(None, vec![record(&format!("m-{turn}"), turn)]).expect("the majority appends");
    }
    // The writer cut off with one server: never acknowledged, and told which.
    let mut told_fork = None;
    for turn in 1..4 {
        let id = format!("w-{turn}");
        match minority.append(None, vec![record(&id, turn)]) {
            Ok(receipt) => panic!("{id} acknowledged at {:?} by a minority", receipt.source_orders),
            Err(FleetError::Forked { fork, session: parent, records }) => {
                assert_eq!((parent.as_str(), records), (session, 1));
                assert!(fork.starts_with("shared 日本~minority-"), "{fork}");
                told_fork = Some(fork);
            }
            Err(err) => assert_eq!(err.kind(), ErrorKind::Busy, "{id}: {err}"),
        }
    }
    cluster.isolate(cut, false);

    // Healed: the minority's store publishes its fork (if it made one), every store follows,
    // and a new store holds the session as the majority wrote it, the fork beside it.
    let healed = connect(&options);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while let Err(err) = publish(&healed, &minority_store, &PublishOptions::default()) {
        assert!(std::time::Instant::now() < deadline, "publish after healing: {err}");
        std::thread::sleep(Duration::from_millis(250));
    }
    let fresh = open(&dir.path().join("fresh.redb"));
    // A pass right after the heal can end at the deposed leader's view of the stream (it
    // answers until it learns of the new term): passes go on until the majority's last record
    // is here, as a follower that keeps following does.
    loop {
        let report = follow(&healed, &fresh, &FollowOptions::default(), &|| true).expect("follow");
        assert!(report.stopped.is_empty(), "{:?}", report.stopped);
        if chain(&fresh, session).iter().any(|(id, _)| id == "m-3") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the majority's records never reached a follower");
        std::thread::sleep(Duration::from_millis(250));
    }
    let fleet_chain = chain(&fresh, session);
    let ids: Vec<&str> = fleet_chain.iter().map(|(id, _)| id.as_str()).collect();
    // Busy appends may have landed once each after the heal (the leader's uncommitted
    // entries are dropped by Raft or committed): none twice, the majority's all there.
    for id in ["m-0", "w-0", "m-1", "m-2", "m-3"] {
        assert_eq!(ids.iter().filter(|&&held| held == id).count(), 1, "{id} in {ids:?}");
    }
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "no entryId twice: {ids:?}");
    if let Some(fork) = told_fork {
        let forked = chain(&fresh, &fork);
        let at: usize = fork.rsplit('-').next().and_then(|at| at.parse().ok()).expect("the fork's position");
        assert_eq!(forked[..at], fleet_chain[..at], "the fork shares the session's records before it");
        assert!(forked[at..].iter().all(|(id, _)| id.starts_with("w-")), "{forked:?}");
        for (id, _) in &forked[at..] {
            assert!(!ids.contains(&id.as_str()), "{id} is in the fork and in the session");
        }
    }
    // The minority's store follows the same way: a pass can still be answered from a server
    // that has not caught up since the heal, so passes go on until it holds the session.
    loop {
        let follower = follow(&healed, &minority_store, &FollowOptions::default(), &|| true).expect("follow");
        assert!(follower.stopped.is_empty(), "{:?}", follower.stopped);
        let held = chain(&minority_store, session);
        assert_eq!(
            held[..],
            fleet_chain[..held.len().min(fleet_chain.len())],
            "the minority's copy is a prefix"
        );
        if held.len() == fleet_chain.len() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the minority's copy never converged: {held:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(fresh.verify(None).expect("verify").problems.is_empty());
}
