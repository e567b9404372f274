//! Faults: an acknowledgement lost with its connection, the stream's leader and then another
//! server killed under load, a host cut off from the servers, servers that cannot be reached.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use annal_engine::ErrorKind;
use annal_fleet::{
    follow, publish, Fleet, FleetError, FleetOptions, FollowOptions, PublishOptions, SharedSession,
};
use annal_support::nats::Proxy;

use crate::{chain, cluster, connect, open, raw, record, stream_messages};

#[test]
fn a_publish_whose_acknowledgement_is_lost_is_retried_without_a_duplicate() {
    let (cluster, options) = cluster();
    let proxy = Proxy::start(cluster.nodes[0].port);
    let mut through = FleetOptions::from_urls(&proxy.url()).expect("url");
    through.timeout = Duration::from_secs(20);
    let fleet = connect(&through);
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("host.redb"));
    let shared = SharedSession::new(&fleet, &store, "s");
    shared.append(Some(0), vec![record("e0", 0)]).expect("first");
    proxy.cut_after_next_publish();
    let receipt = shared.append(Some(1), vec![record("e1", 1)]).expect("retried after the cut");
    assert_eq!(receipt.source_orders, vec![1]);
    assert_eq!(proxy.cuts(), 1, "the connection was cut after the publish was sent");
    shared.append(Some(2), vec![record("e2", 2)]).expect("after");
    assert_eq!(stream_messages(&options), 3, "the retried record is on the stream once");
    let follower = open(&dir.path().join("follower.redb"));
    let report = follow(&connect(&options), &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert_eq!((report.records, report.stopped.len()), (3, 0));
    assert_eq!(chain(&follower, "s"), chain(&store, "s"));
}

/// The node index of the stream's leader.
pub(crate) fn leader(cluster: &annal_support::nats::Cluster, options: &FleetOptions) -> usize {
    let live: Vec<String> = cluster.nodes.iter().filter(|n| n.is_running()).map(|n| n.url()).collect();
    let mut live_options = options.clone();
    live_options.servers = live;
    let name = raw(&live_options, |js| async move {
        for _ in 0..100 {
            if let Ok(mut stream) = js.get_stream(annal_fleet::STREAM_DEFAULT).await {
                if let Ok(info) = stream.info().await {
                    if let Some(leader) = info.cluster.clone().and_then(|c| c.leader) {
                        return leader;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the stream has no leader");
    });
    cluster.nodes.iter().position(|n| n.name == name).expect("a node of the cluster")
}

#[test]
fn killing_the_leader_and_then_a_follower_server_loses_no_acknowledged_append() {
    let (mut cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("writer.redb");
    let writer_options = options.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = std::sync::Arc::clone(&stop);
    // How many appends were acknowledged: each fault waits for the writer to get past the one
    // before it, never for a fixed time.
    let counted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = std::sync::Arc::clone(&counted);
    let writer = std::thread::spawn(move || {
        let fleet = connect(&writer_options);
        let store = open(&path);
        let shared = SharedSession::new(&fleet, &store, "under load");
        let (mut acked, mut longest, mut last) = (Vec::new(), Duration::ZERO, Instant::now());
        let mut i = 0;
        while !stopping.load(std::sync::atomic::Ordering::SeqCst) {
            let id = format!("w{i}");
            let next = store.snapshot().expect("snap").session("under load").expect("s").map_or(0, |s| s.len);
            match shared.append(Some(next), vec![record(&id, i)]) {
                Ok(_) => {
                    acked.push(id);
                    counting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    longest = longest.max(last.elapsed());
                    last = Instant::now();
                    i += 1;
                }
                // Not acknowledged, or taken by its own earlier attempt: read, then decide again.
                Err(FleetError::NotAcknowledged { .. } | FleetError::Stream { .. }) => {
                    let _ = shared.refresh();
                }
                Err(FleetError::Append(err)) if err.kind() == ErrorKind::Conflict => {
                    shared.refresh().expect("refresh");
                    if store.snapshot().expect("snap").entry(&id).expect("entry").is_some() {
                        i += 1;
                    }
                }
                Err(err) => panic!("append {id}: {err}"),
            }
        }
        (acked, longest)
    });
    let more = |count: usize| acknowledged_more(&counted, count, &writer);
    more(10);
    let first = leader(&cluster, &options);
    cluster.kill(first);
    more(5);
    cluster.restart(first);
    more(5);
    let now = leader(&cluster, &options);
    let other = (0..3).find(|&i| i != now).expect("a follower server");
    cluster.kill(other);
    more(5);
    cluster.restart(other);
    more(5);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (acked, longest) = writer.join().expect("writer");
    eprintln!("{} appends acknowledged; the longest wait between two was {longest:?}", acked.len());
    assert!(acked.len() > 20, "the writer kept appending ({})", acked.len());

    let follower = open(&dir.path().join("follower.redb"));
    // A server restarted a moment ago may still be catching up: a read that times out is
    // an error the follower names, and following again goes on from its cursor.
    let fleet = connect(&options);
    let started = Instant::now();
    let report = loop {
        match follow(&fleet, &follower, &FollowOptions::default(), &|| true) {
            Ok(report) => break report,
            Err(err @ FleetError::Stream { .. }) if started.elapsed() < Duration::from_secs(60) => {
                eprintln!("following again after: {err}");
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(err) => panic!("follow: {err}"),
        }
    };
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    let held = chain(&follower, "under load");
    let ids: BTreeSet<_> = held.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids.len(), held.len(), "no record twice");
    for id in &acked {
        assert!(ids.contains(id), "acknowledged {id} is on the fleet");
    }
    let writer_store = open(&dir.path().join("writer.redb"));
    let written = chain(&writer_store, "under load");
    assert_eq!(written, held[..written.len()], "the writer holds a prefix of the fleet's chain");
    assert!(follower.verify(None).expect("verify").problems.is_empty());
}

/// Waits until the writer has `count` more appends acknowledged than now: the event that
/// says the fleet got past the last fault. Fails if the writer ended or a minute passed.
fn acknowledged_more<T>(
    counted: &std::sync::atomic::AtomicUsize,
    count: usize,
    writer: &std::thread::JoinHandle<T>,
) {
    let target = counted.load(std::sync::atomic::Ordering::SeqCst) + count;
    let deadline = Instant::now() + Duration::from_secs(60);
    while counted.load(std::sync::atomic::Ordering::SeqCst) < target {
        assert!(!writer.is_finished(), "the writer ended early");
        assert!(Instant::now() < deadline, "no {count} appends acknowledged within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_host_cut_off_appends_locally_and_its_records_become_a_fork() {
    let (cluster, options) = cluster();
    let proxy = Proxy::start(cluster.nodes[1].port);
    let mut cut_options = FleetOptions::from_urls(&proxy.url()).expect("url");
    cut_options.timeout = Duration::from_secs(2);
    cut_options.host = "laptop".into();
    let dir = tempfile::tempdir().expect("dir");
    let (a_store, b_store) = (open(&dir.path().join("a.redb")), open(&dir.path().join("b.redb")));
    let (a_fleet, b_fleet) = (connect(&options), connect(&cut_options));
    let a = SharedSession::new(&a_fleet, &a_store, "pair");
    let b = SharedSession::new(&b_fleet, &b_store, "pair");
    a.append(Some(0), vec![record("a0", 0)]).expect("a0");
    b.refresh().expect("b catches up");
    b.append(Some(1), vec![record("b1", 1)]).expect("b1");
    a.refresh().expect("a catches up");

    proxy.set_down(true);
    // Never silent: each append says where its records went, in one line. One sent as the link
    // went down is not acknowledged (busy): it may be on the stream, so while cut off its retry
    // says the servers cannot be reached and never puts it in the fork, where it would be twice.
    let (mut offline, mut next) = (Vec::new(), 2);
    for i in 2..5 {
        let id = format!("b{i}");
        let err = b.append(Some(next), vec![record(&id, i as usize)]).expect_err("cut off");
        if err.kind() == ErrorKind::Busy {
            let retry = b.append(Some(next), vec![record(&id, i as usize)]).expect_err("cut off");
            assert!(matches!(retry.kind(), ErrorKind::Io | ErrorKind::Busy), "{retry}");
            continue;
        }
        assert_eq!(err.kind(), ErrorKind::Forked, "{err}");
        assert!(err.to_string().contains("went to fork \"pair~laptop-2\""), "{err}");
        offline.push(id);
        next += 1;
    }
    assert!(!offline.is_empty(), "the appends after the link went down went to the fork");
    assert_eq!(b.writing_to().expect("where"), "pair~laptop-2");
    for i in 2..6 {
        a.append(Some(i), vec![record(&format!("a{i}"), i as usize)]).expect("a goes on");
    }
    proxy.set_down(false);
    // Back online, the host publishes as `annal fleet publish` would: a connection of its own,
    // with the default timeout, while the cut one is still waiting to reconnect.
    let mut back_options = cut_options.clone();
    back_options.timeout = Duration::from_secs(10);
    let back = connect(&back_options);
    let report = publish(&back, &b_store, &PublishOptions::default()).expect("publish when back");
    assert_eq!((report.forks, report.records), (1, offline.len() as u64));

    let follower = open(&dir.path().join("c.redb"));
    let followed = follow(&a_fleet, &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(followed.stopped.is_empty(), "{:?}", followed.stopped);
    let ids = |session: &str| chain(&follower, session).into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    assert_eq!(ids("pair"), ["a0", "b1", "a2", "a3", "a4", "a5"]);
    let forked: Vec<String> = ["a0", "b1"].into_iter().map(str::to_owned).chain(offline).collect();
    assert_eq!(ids("pair~laptop-2"), forked, "the offline records, forked where they left");
    assert_eq!(chain(&follower, "pair~laptop-2"), chain(&b_store, "pair~laptop-2"));
    assert!(follower.verify(None).expect("verify").problems.is_empty());
}

#[test]
fn a_server_that_cannot_be_reached_is_named_and_local_appends_go_on() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let mut options =
        FleetOptions::from_urls(&format!("nats://someone:s3cret@127.0.0.1:{port}")).expect("url");
    options.timeout = Duration::from_secs(2);
    let err = Fleet::connect(options).expect_err("nothing listens there");
    let line = err.to_string();
    assert!(line.contains(&format!("nats://***@127.0.0.1:{port}")), "{line}");
    assert!(!line.contains("s3cret"), "{line}");
    assert_eq!(err.kind(), ErrorKind::Io);
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("local.redb"));
    store.append("local", Some(0), vec![record("l0", 0)]).expect("a local append");
}

#[test]
fn credentials_from_the_url_or_the_options_are_used_and_never_shown() {
    let authorization = "authorization {\n  user: \"agent\"\n  password: \"c0rrect horse\"\n}";
    let cluster =
        annal_support::nats::Cluster::start_with(1, annal_support::nats::Sync::Default, None, authorization);
    let port = cluster.nodes[0].port;
    let mut options =
        FleetOptions::from_urls(&format!("nats://agent:c0rrect%20horse@127.0.0.1:{port}")).expect("url");
    options.replicas = 1;
    let fleet = connect(&options);
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("s.redb"));
    store.append("s", Some(0), vec![record("e0", 0)]).expect("append");
    assert_eq!(publish(&fleet, &store, &PublishOptions::default()).expect("publish").records, 1);

    let mut options = FleetOptions::from_urls(&format!("nats://127.0.0.1:{port}")).expect("url");
    options.replicas = 1;
    options.credentials =
        annal_fleet::Credentials::UserPassword { user: "agent".into(), password: "c0rrect horse".into() };
    assert!(format!("{options:?}").contains("UserPassword(..)") && !format!("{options:?}").contains("horse"));
    let follower = open(&dir.path().join("f.redb"));
    assert_eq!(
        follow(&connect(&options), &follower, &FollowOptions::default(), &|| true).expect("follow").records,
        1
    );

    let mut wrong =
        FleetOptions::from_urls(&format!("nats://agent:wr0ng-secret@127.0.0.1:{port}")).expect("url");
    wrong.timeout = Duration::from_secs(2);
    let err = Fleet::connect(wrong).expect_err("a wrong password is refused");
    let line = err.to_string();
    assert!(
        line.contains(&format!("nats://***@127.0.0.1:{port}")) && !line.contains("wr0ng-secret"),
        "{line}"
    );
}

/// A writer connected to the stream's leader when that server hangs (SIGSTOP: the connection
/// stays open, nothing answers) moves to another server and appends there, in seconds.
#[test]
fn a_writer_connected_to_a_paused_leader_moves_to_another_server() {
    let (mut cluster, options) = cluster();
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("host.redb"));
    connect(&options).close();
    let paused = leader(&cluster, &options);
    // Through proxies, the other server's refusing at first: the client connects to the leader.
    let to_leader = Proxy::start(cluster.nodes[paused].port);
    let to_other = Proxy::start(cluster.nodes[(paused + 1) % 3].port);
    to_other.set_down(true);
    let mut first =
        FleetOptions::from_urls(&format!("{},{}", to_leader.url(), to_other.url())).expect("urls");
    first.timeout = Duration::from_secs(10);
    let fleet = connect(&first);
    to_other.set_down(false);
    let shared = SharedSession::new(&fleet, &store, "paused 日本");
    shared.append(Some(0), vec![record("p0", 0)]).expect("before the pause");
    cluster.pause(paused, true);
    let started = Instant::now();
    let mut outcome = shared.append(Some(1), vec![record("p1", 1)]);
    // Not acknowledged in one timeout is allowed (the first try went to the hung server); the
    // retry with the same entryId must land, long before the client's default of minutes.
    while outcome.as_ref().is_err_and(|err| err.kind() == ErrorKind::Busy)
        && started.elapsed() < Duration::from_secs(30)
    {
        outcome = shared.append(Some(1), vec![record("p1", 1)]);
    }
    cluster.pause(paused, false);
    let receipt = outcome.expect("appended through another server");
    assert_eq!(receipt.source_orders, vec![1]);
    assert_eq!(chain(&store, "paused 日本").len(), 2);
}
