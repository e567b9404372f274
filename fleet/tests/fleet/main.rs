//! The fleet against real NATS servers: a 3-node JetStream cluster on loopback ports per test,
//! streams with 3 replicas. No mock stands in for the servers or the client.

mod bad_input;
mod breakages;
mod doubt;
mod faults;
mod partition;
mod publish_follow;
mod shared;
mod signing;

use std::path::Path;

use annal_engine::{Record, Role, Store, StoreOptions};
use annal_fleet::{Fleet, FleetOptions};
use annal_support::nats::{Cluster, Sync};

/// A 3-node cluster and options naming all of it.
pub(crate) fn cluster() -> (Cluster, FleetOptions) {
    let cluster = Cluster::start(3, Sync::Default, None);
    let options = FleetOptions::from_urls(&cluster.urls()).expect("urls");
    (cluster, options)
}

/// Connects, retrying while the cluster elects its JetStream leader.
pub(crate) fn connect(options: &FleetOptions) -> Fleet {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match Fleet::connect(options.clone()) {
            Ok(fleet) => return fleet,
            Err(err) if std::time::Instant::now() < deadline => {
                let _ = err;
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
            Err(err) => panic!("the cluster did not come up: {err}"),
        }
    }
}

pub(crate) fn open(path: &Path) -> Store {
    Store::open(path, StoreOptions::default()).expect("store")
}

/// Real-world text for record bodies: CJK, emoji, combining marks, an ideographic space.
pub(crate) fn text(i: usize) -> String {
    format!("turn {i}: 日本語のテキスト\u{3000}emoji 🚀 e\u{301} — {}", "x".repeat(i % 7 * 11))
}

pub(crate) fn record(id: &str, i: usize) -> Record {
    let role = if i.is_multiple_of(2) { Role::User } else { Role::Assistant };
    Record::text(id, role, text(i))
}

/// How many messages the stream holds, asked of the servers directly.
pub(crate) fn stream_messages(options: &FleetOptions) -> u64 {
    raw(options, |js| async move {
        let mut stream = js.get_stream(annal_fleet::STREAM_DEFAULT).await.expect("stream");
        stream.info().await.expect("info").state.messages
    })
}

/// Runs `f` with a plain JetStream client of the same servers: what a foreign writer, or a
/// writer annal does not control, does to the stream.
pub(crate) fn raw<T, F, Fut>(options: &FleetOptions, f: F) -> T
where
    F: FnOnce(async_nats::jetstream::Context) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let urls: Vec<async_nats::ServerAddr> =
        options.servers.iter().map(|url| url.parse().expect("url")).collect();
    runtime.block_on(async move {
        let client = async_nats::connect(urls).await.expect("connect");
        f(async_nats::jetstream::new(client)).await
    })
}

/// Every session's records of `store` as (entryId, hash), for comparing stores.
pub(crate) fn chain(store: &Store, session: &str) -> Vec<(String, [u8; 32])> {
    let snapshot = store.snapshot().expect("snapshot");
    let mut out = Vec::new();
    if snapshot.session(session).expect("session").is_none() {
        return out;
    }
    for guard in snapshot.records(session, 0..u64::MAX).expect("records") {
        let guard = guard.expect("record");
        let view = guard.view().expect("view");
        out.push((view.entry_id().to_owned(), view.hash()));
    }
    out
}
