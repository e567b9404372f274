//! Shared sessions: writers racing for positions through the servers.

use annal_engine::ErrorKind;
use annal_fleet::{follow, FleetError, FollowOptions, SharedSession};

use crate::{chain, cluster, connect, open, record};

#[test]
fn two_hosts_racing_get_one_winner_per_position() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let per_host = 40;
    let hosts: Vec<_> = (0..2)
        .map(|host| {
            let options = options.clone();
            let path = dir.path().join(format!("host{host}.redb"));
            std::thread::spawn(move || {
                let fleet = connect(&options);
                let store = open(&path);
                let shared = SharedSession::new(&fleet, &store, "shared 日本");
                let (mut won, mut conflicts) = (0, 0);
                while won < per_host {
                    shared.refresh().expect("refresh");
                    let next = store
                        .snapshot()
                        .expect("snap")
                        .session("shared 日本")
                        .expect("s")
                        .map_or(0, |s| s.len);
                    let id = format!("h{host}-{won}");
                    match shared.append(Some(next), vec![record(&id, won)]) {
                        Ok(receipt) => {
                            assert_eq!(receipt.source_orders, vec![next]);
                            won += 1;
                        }
                        Err(FleetError::Append(err)) if err.kind() == ErrorKind::Conflict => conflicts += 1,
                        Err(err) => panic!("host {host}: {err}"),
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: usize = hosts.into_iter().map(|h| h.join().expect("host thread")).sum();
    // Both hosts and a third that only follows hold the same gapless chain.
    let fleet = connect(&options);
    let follower = open(&dir.path().join("follower.redb"));
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    let expected = chain(&follower, "shared 日本");
    assert_eq!(expected.len(), 2 * per_host, "every append won exactly once ({conflicts} conflicts)");
    for host in 0..2 {
        let store = open(&dir.path().join(format!("host{host}.redb")));
        let mine = chain(&store, "shared 日本");
        assert_eq!(mine, expected[..mine.len()], "host {host} holds a prefix of the fleet's chain");
        assert!(store.verify(None).expect("verify").problems.is_empty());
    }
    assert!(follower.verify(None).expect("verify").problems.is_empty());
    let ids: std::collections::BTreeSet<_> = expected.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids.len(), expected.len(), "no entry twice");
}
