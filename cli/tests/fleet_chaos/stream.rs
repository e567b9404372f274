//! The checker's read of the stream itself, once the faults are healed: every session's
//! messages, in stream order, must make one chain a follower can apply. Each record's
//! sourceOrder is the one after the message before it (or the fork point), its prevHash is
//! that message's hash, and no entryId comes twice. A follower stops at the first message that
//! breaks this; here the break is named with the stream sequences on both sides, the entryIds
//! and the message ids, which is what tells how it was published.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use annal::fleet::{session_of_subject, PREFIX_DEFAULT, STREAM_DEFAULT};
use async_nats::jetstream::consumer::pull::OrderedConfig;
use futures_util::StreamExt as _;

/// One session's chain as read so far.
struct Chain {
    next: u64,
    head: String,
    last: String,
    entries: HashMap<String, u64>,
    broken: bool,
}

impl Default for Chain {
    /// A session with no message yet: its first record's prevHash is the zero hash.
    fn default() -> Chain {
        Chain {
            next: 0,
            head: annal_engine::hash_to_hex(&annal_engine::ZERO_HASH),
            last: "the session's start".to_owned(),
            entries: HashMap::new(),
            broken: false,
        }
    }
}

/// Reads every message of the stream from the servers at `urls` and returns one line per
/// session whose chain on the stream breaks, at its first break.
pub(crate) fn breaks(urls: &str) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime for the stream check");
    runtime.block_on(read(urls))
}

async fn read(urls: &str) -> Vec<String> {
    let addrs: Vec<async_nats::ServerAddr> =
        urls.split(',').map(|url| url.parse().expect("a server URL")).collect();
    let client = async_nats::connect(addrs).await.expect("the healed cluster answers");
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(STREAM_DEFAULT).await.expect("the stream");
    let last = stream.info().await.expect("the stream's info").state.last_sequence;
    let config = OrderedConfig { filter_subject: format!("{PREFIX_DEFAULT}.s.>"), ..Default::default() };
    let consumer = stream.create_consumer(config).await.expect("a consumer of the stream");
    let mut messages = consumer.messages().await.expect("the stream's messages");
    let mut chains: BTreeMap<String, Chain> = BTreeMap::new();
    let mut lines = Vec::new();
    let mut sequence = 0;
    while sequence < last {
        let next = tokio::time::timeout(Duration::from_secs(30), messages.next()).await;
        let Ok(Some(Ok(message))) = next else {
            lines.push(format!("the stream could not be read past sequence {sequence} of {last}"));
            break;
        };
        sequence = message.info().map(|info| info.stream_sequence).unwrap_or(sequence + 1);
        let Some(session) = session_of_subject(PREFIX_DEFAULT, message.subject.as_str()) else { continue };
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|headers| headers.get(name))
                .map(|value| value.as_str().to_owned())
        };
        let (kind, order, hash) = (header("Annal-Kind"), header("Annal-Order"), header("Annal-Hash"));
        let msg_id = header("Nats-Msg-Id").unwrap_or_default();
        let order: u64 = order.and_then(|order| order.parse().ok()).unwrap_or(u64::MAX);
        let hash = hash.unwrap_or_default();
        let chain = chains.entry(session.clone()).or_default();
        if chain.broken {
            continue;
        }
        let here = format!("sequence {sequence} (message id {msg_id})");
        let mut broken = |line: String| {
            lines.push(format!("stream: session {session:?}: {line}"));
        };
        if kind.as_deref() == Some("fork") {
            (chain.next, chain.head, chain.last) = (order, hash, here);
            continue;
        }
        let payload: serde_json::Value = serde_json::from_slice(&message.payload).unwrap_or_default();
        let entry_id = payload["entryId"].as_str().unwrap_or_default().to_owned();
        let prev = payload["prevHash"].as_str().unwrap_or_default().to_owned();
        if order != chain.next {
            broken(format!(
                "{entry_id} at {here} claims sourceOrder {order}, the one after {} is {}",
                chain.last, chain.next
            ));
        } else if kind.as_deref() == Some("record") && prev != chain.head {
            broken(format!("{entry_id} at {here}: its prevHash is not the hash of {}", chain.last));
        } else if let Some(first) = chain.entries.get(&entry_id) {
            broken(format!("{entry_id} at {here}, sourceOrder {order}, is also at sourceOrder {first}"));
        } else {
            chain.entries.insert(entry_id, order);
            (chain.next, chain.head, chain.last) = (order + 1, hash, format!("{here}, sourceOrder {order}"));
            continue;
        }
        chain.broken = true;
    }
    lines
}
