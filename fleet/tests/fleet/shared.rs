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

/// A writer that connects anew for every append (as `annal append --fleet` does, one process
/// per append) and gives no expected position, against two writers that append as fast as
/// the servers take it: each of its appends lands in the session, none comes back as a
/// conflict after losing race after race for the whole timeout.
#[test]
fn a_slow_writer_is_not_starved_by_fast_ones() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let session = "shared 日本";
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A fast writer says when it first wins: the slow one starts against the race, not before it.
    let (started, first_win) = std::sync::mpsc::channel();
    let fast: Vec<_> = (0..2)
        .map(|host| {
            let (options, stop, started) = (options.clone(), std::sync::Arc::clone(&stop), started.clone());
            let path = dir.path().join(format!("fast{host}.redb"));
            std::thread::spawn(move || {
                let fleet = connect(&options);
                let store = open(&path);
                let shared = SharedSession::new(&fleet, &store, session);
                let mut won = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let next =
                        store.snapshot().expect("snap").session(session).expect("s").map_or(0, |s| s.len);
                    match shared.append(Some(next), vec![record(&format!("fast{host}-{won}"), won)]) {
                        Ok(_) => {
                            if won == 0 {
                                let _ = started.send(host);
                            }
                            won += 1;
                        }
                        Err(FleetError::Append(err)) if err.kind() == ErrorKind::Conflict => {}
                        Err(err) => panic!("fast writer {host}: {err}"),
                    }
                }
                won
            })
        })
        .collect();
    first_win
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a fast writer appends within a minute");
    let store = open(&dir.path().join("slow.redb"));
    let mut slow_options = options.clone();
    slow_options.timeout = std::time::Duration::from_secs(5);
    let appends = 12;
    for turn in 0..appends {
        let fleet = connect(&slow_options);
        let shared = SharedSession::new(&fleet, &store, session);
        let id = format!("slow-{turn}");
        let receipt = shared.append(None, vec![record(&id, turn)]);
        fleet.close();
        let receipt = receipt.unwrap_or_else(|err| panic!("slow append {turn}: {err}"));
        let at = receipt.source_orders[0];
        let snapshot = store.snapshot().expect("snap");
        let location = snapshot.entry(&id).expect("entry").expect("the slow record is held");
        assert_eq!((location.session.as_str(), location.source_order), (session, at));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let won: Vec<usize> = fast.into_iter().map(|h| h.join().expect("fast writer")).collect();
    // Writers with an expected position may lose every race to each other (a conflict is their
    // answer): together they appended while the slow one did.
    assert!(won.iter().sum::<usize>() > 0, "the fast writers appended too: {won:?}");
    // Every record once, in one gapless chain that a new follower reads the same.
    let fleet = connect(&options);
    let follower = open(&dir.path().join("follower.redb"));
    let report = follow(&fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    let fleet_chain = chain(&follower, session);
    assert_eq!(fleet_chain.len(), appends + won.iter().sum::<usize>());
    let slow: Vec<_> = fleet_chain.iter().filter(|(id, _)| id.starts_with("slow-")).collect();
    assert_eq!(slow.len(), appends);
    let mine = chain(&store, session);
    assert_eq!(mine, fleet_chain[..mine.len()], "the slow writer holds a prefix of the fleet's chain");
}

/// A writer behind the fleet catches up by asking the stream's leader for each message, not
/// through a consumer: writers racing hard once filled the servers' consumer limit with the
/// consumers of their catch-ups, and a refused catch-up sent an append to a fork.
#[test]
fn catching_up_leaves_no_consumer_on_the_servers() {
    let (_cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let session = "caught up 日本 ✍️";
    let (a_fleet, b_fleet) = (connect(&options), connect(&options));
    let (a_store, b_store) = (open(&dir.path().join("a.redb")), open(&dir.path().join("b.redb")));
    let a = SharedSession::new(&a_fleet, &a_store, session);
    let b = SharedSession::new(&b_fleet, &b_store, session);
    for i in 0..5 {
        a.append(Some(i as u64), vec![record(&format!("a{i}"), i)]).expect("a appends");
    }
    assert_eq!(b.refresh().expect("b catches up"), 5);
    for turn in 0..20 {
        // Each writer in turn is one record behind: its append catches up first.
        let (writer, name) = if turn % 2 == 0 { (&b, "b") } else { (&a, "a") };
        let next = 5 + turn as u64;
        writer.append(Some(next), vec![record(&format!("{name}{next}"), turn)]).expect("in step");
    }
    let consumers = crate::raw(&options, |js| async move {
        let mut stream = js.get_stream(annal_fleet::STREAM_DEFAULT).await.expect("stream");
        stream.info().await.expect("info").state.consumer_count
    });
    assert_eq!(consumers, 0, "no catch-up left a consumer behind");
    // a wrote last: b holds all but that record.
    let (a_chain, b_chain) = (chain(&a_store, session), chain(&b_store, session));
    assert_eq!((a_chain.len(), b_chain.len()), (25, 24));
    assert_eq!(a_chain[..24], b_chain[..]);
}
