//! `Fleet`: a connection to a fleet's servers and its stream, with the calls the publisher,
//! the follower and shared sessions make. The library's callers are synchronous; a small
//! runtime of the fleet's own drives the async NATS client underneath.

use std::future::Future;
use std::time::{Duration, Instant};

use annal_engine::Hash;
use async_nats::jetstream::{self, consumer, context::PublishErrorKind, stream};
use async_nats::HeaderMap;
use bytes::Bytes;

use crate::error::FleetError;
use crate::options::FleetOptions;
use crate::wire;

/// How long one request may take before it is sent again (within the options' timeout):
/// long enough for a majority of replicas to acknowledge, short enough to ride out an
/// election without waiting for the whole timeout.
pub(crate) const ATTEMPT: Duration = Duration::from_millis(1000);

/// The pause before retry `attempt` (0 first) of a call that met no leader: doubling from
/// 50 ms to 800 ms, each drawn at random from its upper half, so writers that failed together
/// do not retry together and none of them starves.
pub(crate) fn backoff(attempt: u32) -> Duration {
    use std::hash::BuildHasher as _;
    let ceiling_ms = 50_u64 << attempt.min(4);
    // A fresh `RandomState` is seeded from the operating system's randomness: enough to spread
    // retries, with no generator to keep.
    let draw = std::collections::hash_map::RandomState::new().hash_one(attempt);
    Duration::from_millis(ceiling_ms / 2 + draw % (ceiling_ms / 2 + 1))
}

/// The pause before another try of a shared append that lost its position to another writer
/// (`attempt` 0 first): drawn at random up to 2 ms, doubling to 64 ms. Short, because the
/// next try publishes at the fleet's head right after reading it; random, so that writers that
/// lost together do not race again together, and one that needs longer per try (a process per
/// append) still finds the head free.
pub(crate) fn race_pause(attempt: u32) -> Duration {
    use std::hash::BuildHasher as _;
    let ceiling_us = 2_000_u64 << attempt.min(5);
    let draw = std::collections::hash_map::RandomState::new().hash_one(attempt);
    Duration::from_micros(draw % (ceiling_us + 1))
}

/// A connection to a fleet: its servers and its stream, created if missing.
#[derive(Debug)]
pub struct Fleet {
    runtime: tokio::runtime::Runtime,
    options: FleetOptions,
    client: async_nats::Client,
    pub(crate) js: jetstream::Context,
    pub(crate) stream: stream::Stream,
    /// The largest message payload the servers take, less room for our headers.
    inline_bytes_max: usize,
}

/// What a publish achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Published {
    /// Stored at this stream sequence (or it already was: a de-duplicated retry).
    At(u64),
    /// Another message is the session's last: the expected sequence was stale. `handed`: an
    /// earlier attempt of this publish was sent without an answer, so that message may be
    /// this one (stored, its acknowledgement lost, and the retry not recognised as a
    /// duplicate, as after a change of the stream's leader): only reading the stream tells.
    Lost { handed: bool },
}

/// A session's last message on the stream.
#[derive(Debug)]
pub(crate) struct Last {
    pub(crate) sequence: u64,
    /// The session's next sourceOrder on the fleet.
    pub(crate) next: u64,
    /// The chain hash of the fleet's last record of the session (or the fork's head).
    pub(crate) head: Hash,
    /// The record's portable JSON, when the message carries it (not a fork, not a reference).
    json: Option<Bytes>,
}

impl Last {
    /// The entryId of the record, when the message carries its JSON.
    pub(crate) fn entry_id(&self) -> Option<String> {
        let value: serde_json::Value = serde_json::from_slice(self.json.as_ref()?).ok()?;
        value.get("entryId")?.as_str().map(str::to_owned)
    }
}

impl Fleet {
    /// Connects to the first server of `options` that answers and opens (or creates, with
    /// `options.replicas` replicas) the stream.
    ///
    /// # Errors
    /// [`FleetError::Unreachable`] naming the servers; [`FleetError::Stream`] when the stream
    /// cannot be created or exists with other subjects.
    pub fn connect(options: FleetOptions) -> Result<Fleet, FleetError> {
        options.check()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("annal-fleet")
            .enable_all()
            .build()
            .map_err(|err| FleetError::BadOptions(format!("cannot start the client's runtime: {err}")))?;
        let (client, js, stream) = runtime.block_on(crate::connect::open(&options))?;
        let inline_bytes_max = client.server_info().max_payload.saturating_sub(8 << 10).max(1 << 10);
        Ok(Fleet { runtime, options, client, js, stream, inline_bytes_max })
    }

    /// The options it was connected with.
    pub fn options(&self) -> &FleetOptions {
        &self.options
    }

    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    pub(crate) fn subject(&self, session: &str) -> String {
        wire::subject(&self.options.prefix, session)
    }

    pub(crate) fn stream_filter(&self) -> String {
        format!("{}.s.>", self.options.prefix)
    }

    pub(crate) fn inline_bytes_max(&self) -> usize {
        self.inline_bytes_max
    }

    pub(crate) fn stream_error(&self, reason: impl std::fmt::Display) -> FleetError {
        FleetError::Stream {
            stream: self.options.stream.clone(),
            servers: self.options.servers_shown(),
            reason: reason.to_string(),
        }
    }

    /// The stream's last sequence now.
    pub(crate) async fn last_sequence(&self) -> Result<u64, FleetError> {
        let deadline = Instant::now() + self.options.timeout;
        let mut attempt = 0;
        loop {
            let mut stream = self.stream.clone();
            let reason = match tokio::time::timeout(ATTEMPT, stream.info()).await {
                Ok(Ok(info)) => return Ok(info.state.last_sequence),
                Ok(Err(err)) => err.to_string(),
                Err(_) => "no answer in time".to_owned(),
            };
            if Instant::now() >= deadline {
                return Err(self.stream_error(reason));
            }
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// The session's last message, if it has one. Asked of the stream's leader, retried
    /// while the stream has none (an election after a server was lost takes seconds).
    pub(crate) async fn last(&self, session: &str) -> Result<Option<Last>, FleetError> {
        let subject = self.subject(session);
        let deadline = Instant::now() + self.options.timeout;
        let mut attempt = 0;
        let message = loop {
            let reason =
                match tokio::time::timeout(ATTEMPT, self.stream.get_last_raw_message_by_subject(&subject))
                    .await
                {
                    Ok(Ok(message)) => break message,
                    Ok(Err(err)) if matches!(err.kind(), stream::LastRawMessageErrorKind::NoMessageFound) => {
                        return Ok(None)
                    }
                    Ok(Err(err)) => err.to_string(),
                    Err(_) => "no answer in time".to_owned(),
                };
            if Instant::now() >= deadline {
                return Err(self.stream_error(reason));
            }
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        };
        let sequence = message.sequence;
        let incoming = wire::decode(session, Some(&message.headers), message.payload)
            .map_err(|reason| FleetError::Stopped { session: session.to_owned(), sequence, reason })?;
        let (next, head, json) = match incoming {
            wire::Incoming::Record { order, hash, json } => (order + 1, hash, Some(json)),
            wire::Incoming::RecordRef { order, hash, .. } => (order + 1, hash, None),
            wire::Incoming::Fork { at, head, .. } => (at, head, None),
        };
        Ok(Some(Last { sequence, next, head, json }))
    }

    /// The first message on `subject` at stream sequence `from` or after, if there is one.
    /// Asked of the stream's leader (a read no stale replica answers), without a consumer:
    /// writers that race catch up by a few messages each time, and a consumer per catch-up
    /// would fill the server's consumer limit faster than idle ones expire. Retried while the
    /// stream has no leader, until the options' timeout.
    pub(crate) async fn next_on(
        &self,
        subject: &str,
        from: u64,
    ) -> Result<Option<jetstream::message::StreamMessage>, FleetError> {
        let deadline = Instant::now() + self.options.timeout;
        let mut attempt = 0;
        loop {
            let request =
                self.stream.raw_message_builder().sequence(from.max(1)).next_by_subject(subject).send();
            let reason = match tokio::time::timeout(ATTEMPT, request).await {
                Ok(Ok(message)) => return Ok(Some(message)),
                Ok(Err(err)) if matches!(err.kind(), stream::RawMessageErrorKind::NoMessageFound) => {
                    return Ok(None)
                }
                Ok(Err(err)) => err.to_string(),
                Err(_) => "no answer in time".to_owned(),
            };
            if Instant::now() >= deadline {
                return Err(
                    self.stream_error(format!("cannot read {subject:?} from sequence {from}: {reason}"))
                );
            }
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// Publishes one message of `session`, checked against the session's last stream sequence
    /// when `expected` is given (0: the session has no message yet), and waits until a
    /// majority of the stream's replicas hold it. A publish not acknowledged in time is sent
    /// again, after a jittered pause (its message id makes the server drop a second copy),
    /// until the options' timeout.
    ///
    /// # Errors
    /// [`FleetError::Unreachable`] when the message certainly never reached a server that
    /// could store it: the client had no connection the whole time, or every server that got
    /// it answered that nothing holds the stream. [`FleetError::NotAcknowledged`] when it may
    /// have been stored (sent, then no answer): only reading the stream can tell, and a retry
    /// with the same message id does.
    pub(crate) async fn publish(
        &self,
        headers: HeaderMap,
        session: &str,
        payload: Bytes,
        expected: Option<u64>,
    ) -> Result<Published, FleetError> {
        let deadline = Instant::now() + self.options.timeout;
        let what = || format!("a message of session {session:?}");
        let (mut attempt, mut handed) = (0, false);
        loop {
            let reason = if self.connected_by(deadline).await {
                let mut message = jetstream::message::PublishMessage::build()
                    .headers(headers.clone())
                    .payload(payload.clone());
                if let Some(sequence) = expected {
                    message = message.expected_last_subject_sequence(sequence);
                }
                match self.publish_once(session, message).await {
                    Ok(Ok(ack)) => return Ok(Published::At(ack.sequence)),
                    Ok(Err(err)) if wrong_last_sequence(&err) => return Ok(Published::Lost { handed }),
                    Ok(Err(err)) if err.kind() == PublishErrorKind::MaxPayloadExceeded => {
                        let servers = self.options.servers_shown();
                        return Err(FleetError::NotAcknowledged {
                            servers,
                            what: what(),
                            reason: err.to_string(),
                        });
                    }
                    // No responders: no server holds the stream's leader, nothing was stored.
                    Ok(Err(err)) if err.kind() == PublishErrorKind::StreamNotFound => err.to_string(),
                    Ok(Err(err)) => {
                        handed = true;
                        err.to_string()
                    }
                    Err((sent, reason)) => {
                        handed |= sent;
                        reason
                    }
                }
            } else {
                "no connection to any server".to_owned()
            };
            if Instant::now() >= deadline {
                let servers = self.options.servers_shown();
                return Err(if handed {
                    FleetError::NotAcknowledged { servers, what: what(), reason }
                } else {
                    FleetError::Unreachable { servers, reason }
                });
            }
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// Whether the client is connected, waiting for it (it reconnects on its own) until
    /// `deadline`. A message handed to a client without a connection would be sent whenever it
    /// reconnects, even after its caller gave up: nothing is handed over until then.
    async fn connected_by(&self, deadline: Instant) -> bool {
        loop {
            if self.client.connection_state() == async_nats::connection::State::Connected {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn publish_once(
        &self,
        session: &str,
        message: jetstream::message::PublishMessage,
    ) -> Result<Result<jetstream::publish::PublishAck, jetstream::context::PublishError>, (bool, String)>
    {
        // Whether the message may have left: once handed to the client, it may reach a server.
        let sent =
            match tokio::time::timeout(ATTEMPT, self.js.send_publish(self.subject(session), message)).await {
                Ok(Ok(sent)) => sent,
                Ok(Err(err)) => return Err((true, err.to_string())),
                Err(_) => return Err((true, "the client could not send it in time".into())),
            };
        tokio::time::timeout(ATTEMPT, sent).await.map_err(|_| (true, "no acknowledgement in time".to_owned()))
    }

    /// An ordered consumer of the messages on `filter` from stream sequence `start` on, and its
    /// messages. Creating a consumer needs the stream's leader: while an election runs it is
    /// asked again, after a jittered pause, until the options' timeout.
    pub(crate) async fn read_from(
        &self,
        filter: &str,
        start: u64,
    ) -> Result<consumer::pull::Ordered, FleetError> {
        let config = consumer::pull::OrderedConfig {
            filter_subject: filter.to_owned(),
            deliver_policy: if start <= 1 {
                consumer::DeliverPolicy::All
            } else {
                consumer::DeliverPolicy::ByStartSequence { start_sequence: start }
            },
            ..Default::default()
        };
        let deadline = Instant::now() + self.options.timeout;
        let mut attempt = 0;
        loop {
            let reason = match self.stream.create_consumer(config.clone()).await {
                Ok(consumer) => match consumer.messages().await {
                    Ok(messages) => return Ok(messages),
                    Err(err) => err.to_string(),
                },
                Err(err) => err.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(self.stream_error(format!("cannot read from sequence {start}: {reason}")));
            }
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// Closes the connection, flushing what was sent.
    pub fn close(self) {
        let Fleet { runtime, client, .. } = self;
        runtime.block_on(async {
            // Nothing is lost if the flush fails: every publish awaited its acknowledgement.
            let _ = tokio::time::timeout(Duration::from_secs(2), client.flush()).await;
        });
    }
}

/// A conditional publish refused because the session's last message is another: the client's
/// kind for error code 10071, or the server's constant form of it (10164, "wrong last
/// sequence" without the number, which newer servers send and the client files as `Other`).
/// Taken for anything else, a lost race would read as a message sent without an answer.
fn wrong_last_sequence(err: &jetstream::context::PublishError) -> bool {
    err.kind() == PublishErrorKind::WrongLastSequence
        || (err.kind() == PublishErrorKind::Other && err.to_string().contains("wrong last sequence"))
}
