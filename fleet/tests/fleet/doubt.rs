//! Records a shared append may have stored without hearing back: a lost acknowledgement, a
//! writer killed mid-append. The stream holds them or not; the writer must find out from the
//! stream before it sends them again, never publish them a second time after the first copy.

use std::path::Path;
use std::time::Duration;

use annal_engine::{ErrorKind, Store};
use annal_fleet::{follow, Fleet, FleetOptions, FollowOptions, SharedSession};
use annal_support::nats::{Cluster, Proxy};

use crate::{chain, cluster, connect, open, raw, record, stream_messages};

const SESSION: &str = "doubt 日本 🚀";

/// A cluster whose stream forgets message ids after 100 ms (a retry is then not recognised as
/// a duplicate, as by a new leader that had not yet applied the first copy), and a writer's
/// connection through a proxy the test can slow down or make deaf.
fn forgetful_cluster() -> (Cluster, FleetOptions, Proxy, Fleet) {
    let (cluster, options) = cluster();
    raw(&options, |js| {
        let config = async_nats::jetstream::stream::Config {
            name: options.stream.clone(),
            subjects: vec![format!("{}.s.>", options.prefix)],
            num_replicas: 3,
            duplicate_window: Duration::from_millis(100),
            ..Default::default()
        };
        // Asked again while the new cluster elects its JetStream leader.
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while let Err(err) = js.create_stream(config.clone()).await {
                assert!(std::time::Instant::now() < deadline, "a stream forgetting message ids: {err}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    });
    let proxy = Proxy::start(cluster.nodes[0].port);
    let mut through = FleetOptions::from_urls(&proxy.url()).expect("url");
    (through.timeout, through.host) = (Duration::from_secs(5), "w".into());
    let fleet = connect(&through);
    (cluster, options, proxy, fleet)
}

/// Appends `e1` again on a link whose answers come 600 ms late (each request is still
/// answered, but a catch-up gives up on a consumer silent for 200 ms, so the catch-up after a
/// lost race reads nothing), then on a normal one until it is acknowledged; checks it is on
/// the stream once, where its first copy is, and that a new follower applies the session.
fn retried_on_a_slow_link(shared: &SharedSession<'_>, proxy: &Proxy, options: &FleetOptions, dir: &Path) {
    proxy.delay_replies(Duration::from_millis(600));
    let slow = shared.append(None, vec![record("e1", 1)]);
    proxy.delay_replies(Duration::ZERO);
    // At worst an outcome still unknown (busy, or the stream not read back): retried below.
    if let Err(err) = &slow {
        assert!(matches!(err.kind(), ErrorKind::Busy | ErrorKind::Io), "{err}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let receipt = loop {
        match shared.append(None, vec![record("e1", 1)]) {
            Ok(receipt) => break receipt,
            Err(err) if err.kind() == ErrorKind::Busy && std::time::Instant::now() < deadline => {}
            Err(err) => panic!("the retry: {err}"),
        }
    };
    assert_eq!(receipt.source_orders, vec![1], "found where its first copy is");
    let follower = open(&dir.join("f.redb"));
    let report = follow(&connect(options), &follower, &FollowOptions::default(), &|| true).expect("follow");
    assert!(report.stopped.is_empty(), "{:?}", report.stopped);
    let ids: Vec<String> = chain(&follower, SESSION).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["e0", "e1"]);
    assert_eq!(stream_messages(options), 2, "the record is on the stream once");
}

/// Appends `e1` through the deaf proxy: the servers store it, the writer never hears back
/// (told busy after its timeout, by when the servers have forgotten its message id).
fn lost_acknowledgement(shared: &SharedSession<'_>, proxy: &Proxy) {
    proxy.swallow_replies_after_next_publish();
    let lost = shared.append(None, vec![record("e1", 1)]).expect_err("not acknowledged");
    assert_eq!(lost.kind(), ErrorKind::Busy, "{lost}");
    assert!(proxy.swallowed_publishes() > 0, "the server got the publish");
    proxy.let_replies_through();
}

/// The fault suite's "gap" (seed 727810872): a record whose first copy the stream held, unknown
/// to its writer (the acknowledgement lost), was sent again, lost its race to that very copy,
/// and the retry at the fleet's head published it after itself. The session then held its
/// entryId at two sourceOrders, and every follower stopped at the second ("claims sourceOrder
/// n+1, but it would be n").
#[test]
fn a_record_that_may_be_on_the_stream_is_never_published_after_itself() {
    let (_cluster, options, proxy, fleet) = forgetful_cluster();
    let dir = tempfile::tempdir().expect("dir");
    let store = open(&dir.path().join("w.redb"));
    let shared = SharedSession::new(&fleet, &store, SESSION);
    shared.append(None, vec![record("e0", 0)]).expect("first");
    lost_acknowledgement(&shared, &proxy);
    retried_on_a_slow_link(&shared, &proxy, &options, dir.path());
}

/// A writer killed after its publish reached the servers and before it heard back leaves no
/// doubt cursor: the next one (a new `annal append` process on the same store) does not know
/// the record may be on the stream. When it loses its race to the record's own copy, it finds
/// that copy as the session's last message, and reads it rather than sending it after itself.
#[test]
fn a_record_sent_by_a_killed_writer_is_read_not_sent_again() {
    let (_cluster, options, proxy, fleet) = forgetful_cluster();
    let dir = tempfile::tempdir().expect("dir");
    let (path, killed) = (dir.path().join("w.redb"), dir.path().join("killed.redb"));
    {
        let store = open(&path);
        let shared = SharedSession::new(&fleet, &store, SESSION);
        shared.append(None, vec![record("e0", 0)]).expect("first");
        // The store as the killed writer left it: e1 about to be sent, nothing of it here.
        std::fs::copy(&path, &killed).expect("a copy of the store");
        lost_acknowledgement(&shared, &proxy);
    }
    let store: Store = open(&killed);
    let shared = SharedSession::new(&fleet, &store, SESSION);
    retried_on_a_slow_link(&shared, &proxy, &options, dir.path());
}
