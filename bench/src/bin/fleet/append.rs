//! (1) of the fleet benchmark: the latency of a checked append to a shared session, beside a
//! bare JetStream publish of the same record and a local checked append.

use std::path::Path;
use std::time::{Duration, Instant};

use annal_bench::records::to_json;
use annal_bench::{quantile, scratch_dir};
use annal_engine::Record;
use annal_fleet::SharedSession;
use anyhow::{anyhow, ensure};

use crate::{connect, open_store};

/// The latencies of one configuration of (1).
#[derive(Debug)]
pub(crate) struct Latencies {
    pub(crate) label: String,
    pub(crate) sorted: Vec<Duration>,
    pub(crate) elapsed: Duration,
    /// Publishes the server refused as out of place though no one else wrote (raw rows).
    pub(crate) conflicts: usize,
}

impl Latencies {
    pub(crate) fn new(label: &str, mut samples: Vec<Duration>, elapsed: Duration) -> Latencies {
        samples.sort_unstable();
        Latencies { label: label.to_owned(), sorted: samples, elapsed, conflicts: 0 }
    }

    pub(crate) fn p50(&self) -> Duration {
        quantile(&self.sorted, 0.5)
    }

    pub(crate) fn p99(&self) -> Duration {
        quantile(&self.sorted, 0.99)
    }

    pub(crate) fn max(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }

    pub(crate) fn rate(&self) -> f64 {
        self.sorted.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// (1) on a fleet: `warmup` then `records.len()` checked appends of one record each to one
/// shared session, each timed from the call to its return.
pub(crate) fn shared_appends(
    dir: &Path,
    urls: &str,
    stream: &str,
    replicas: usize,
    label: &str,
    warmup: &[Record],
    records: &[Record],
) -> anyhow::Result<Latencies> {
    let scratch = scratch_dir(Some(dir), "fleet-append")?;
    let store = open_store(&scratch.path().join("annal.redb"))?;
    let fleet = connect(urls, stream, replicas)?;
    let shared = SharedSession::new(&fleet, &store, "shared");
    let mut next = 0;
    for record in warmup {
        next = shared.append(Some(next), vec![record.clone()])?.next;
    }
    let mut samples = Vec::with_capacity(records.len());
    let started = Instant::now();
    for record in records {
        let at = Instant::now();
        let receipt = shared.append(Some(next), vec![record.clone()])?;
        samples.push(at.elapsed());
        next = receipt.next;
    }
    let elapsed = started.elapsed();
    let writing_to = shared.writing_to()?;
    ensure!(writing_to == "shared", "{label}: appends went to the offline fork {writing_to:?}");
    fleet.close();
    store.close().map_err(|err| anyhow!("closing the store: {err}"))?;
    eprintln!("(1) {label}: {} appends in {:.2} s", records.len(), elapsed.as_secs_f64());
    Ok(Latencies::new(label, samples, elapsed))
}

/// (1) without annal: the same records' JSON published straight to a stream of the same
/// cluster with async-nats, each checked against the subject's last sequence and awaited.
/// What the servers and the round trip cost, so the rest of a shared append is annal's.
pub(crate) fn raw_publishes(
    urls: &str,
    stream: &str,
    replicas: usize,
    label: &str,
    warmup: &[Record],
    records: &[Record],
) -> anyhow::Result<Latencies> {
    use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage, stream::Config};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let servers: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let payloads: Vec<Vec<u8>> =
        warmup.iter().chain(records).map(|record| to_json(record).into_bytes()).collect();
    let subject = format!("raw-{}.s.one", stream.to_lowercase());
    let mut conflicts = 0;
    let samples = runtime.block_on(async {
        let client = async_nats::connect(servers).await?;
        let js = jetstream::new(client);
        let config = Config {
            name: stream.to_owned(),
            subjects: vec![subject.clone()],
            num_replicas: replicas,
            ..Default::default()
        };
        // A new stream elects its leader first; until then publishes are not answered.
        let deadline = Instant::now() + Duration::from_secs(20);
        let handle = loop {
            if let Ok(mut handle) = js.get_or_create_stream(config.clone()).await {
                if handle
                    .info()
                    .await
                    .is_ok_and(|info| info.cluster.as_ref().is_none_or(|c| c.leader.is_some()))
                {
                    break handle;
                }
            }
            ensure!(Instant::now() < deadline, "stream {stream} has no leader after 20 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let mut last = 0;
        let mut samples = Vec::with_capacity(records.len());
        for (i, payload) in payloads.into_iter().enumerate() {
            let at = Instant::now();
            let message =
                PublishMessage::build().payload(payload.into()).expected_last_subject_sequence(last);
            match js.send_publish(subject.clone(), message).await?.await {
                Ok(ack) => last = ack.sequence,
                Err(err) if err.kind() == PublishErrorKind::WrongLastSequence => {
                    // No other writer: the server's answer disagrees with its own last ack.
                    // Say so, take its last sequence, and go on to the next record.
                    let held = handle.get_last_raw_message_by_subject(&subject).await?.sequence;
                    eprintln!(
                        "{label}: publish {i} expected last {last}, the stream's last is {held}: {err}"
                    );
                    conflicts += 1;
                    last = held;
                }
                Err(err) => return Err(err.into()),
            }
            if i >= warmup.len() {
                samples.push(at.elapsed());
            }
        }
        Ok::<_, anyhow::Error>(samples)
    })?;
    let elapsed = samples.iter().sum();
    eprintln!("(1) {label}: {} publishes in {:.2} s", samples.len(), Duration::as_secs_f64(&elapsed));
    let mut latencies = Latencies::new(label, samples, elapsed);
    latencies.conflicts = conflicts;
    Ok(latencies)
}

/// (1) on one host: the same checked appends to a local store, no fleet. With `cursor`, each
/// append is followed by a durable cursor write, as a shared append saves the fleet's cursors
/// beside the record: the local part of a shared append's cost.
pub(crate) fn local_appends(
    dir: &Path,
    warmup: &[Record],
    records: &[Record],
    cursor: bool,
) -> anyhow::Result<Latencies> {
    let scratch = scratch_dir(Some(dir), "fleet-local")?;
    let store = open_store(&scratch.path().join("annal.redb"))?;
    let append = |next: u64, record: &Record| -> anyhow::Result<u64> {
        let receipt = store.append("local", Some(next), vec![record.clone()])?;
        if cursor {
            store.put_cursors(vec![("bench:seq".to_owned(), Some(receipt.next.to_le_bytes().to_vec()))])?;
        }
        Ok(receipt.next)
    };
    let mut next = 0;
    for record in warmup {
        next = append(next, record)?;
    }
    let mut samples = Vec::with_capacity(records.len());
    let started = Instant::now();
    for record in records {
        let at = Instant::now();
        next = append(next, record)?;
        samples.push(at.elapsed());
    }
    let elapsed = started.elapsed();
    store.close().map_err(|err| anyhow!("closing the store: {err}"))?;
    let label = if cursor {
        "local `Store::append`, then `put_cursors` (both durable), no fleet"
    } else {
        "local `Store::append`, no fleet"
    };
    eprintln!("(1) {label}: {} appends in {:.2} s", records.len(), elapsed.as_secs_f64());
    Ok(Latencies::new(label, samples, elapsed))
}
