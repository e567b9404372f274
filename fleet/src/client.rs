//! `Fleet`: a connection to a fleet's servers and its stream, with the calls the publisher,
//! the follower and shared sessions make. The library's callers are synchronous; a small
//! runtime of the fleet's own drives the async NATS client underneath.

use std::future::Future;
use std::time::{Duration, Instant};

use annal_engine::Hash;
use async_nats::jetstream::{self, context::PublishErrorKind, object_store, stream};
use async_nats::{ConnectOptions, HeaderMap};
use bytes::Bytes;
use tokio::io::AsyncReadExt as _;

use crate::error::FleetError;
use crate::options::{Credentials, FleetOptions};
use crate::wire;

/// How long one request may take before it is sent again (within the options' timeout):
/// long enough for a majority of replicas to acknowledge, short enough to ride out an
/// election without waiting for the whole timeout.
const ATTEMPT: Duration = Duration::from_millis(1000);
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// A connection to a fleet: its servers and its stream, created if missing.
#[derive(Debug)]
pub struct Fleet {
    runtime: tokio::runtime::Runtime,
    options: FleetOptions,
    client: async_nats::Client,
    js: jetstream::Context,
    stream: stream::Stream,
    /// The largest message payload the servers take, less room for our headers.
    inline_bytes_max: usize,
}

/// What a publish achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Published {
    /// Stored at this stream sequence (or it already was: a de-duplicated retry).
    At(u64),
    /// Another writer's message is the session's last: the expected sequence was stale.
    Lost,
}

/// A session's last message on the stream.
#[derive(Debug)]
pub(crate) struct Last {
    pub(crate) sequence: u64,
    /// The session's next sourceOrder on the fleet.
    pub(crate) next: u64,
    /// The chain hash of the fleet's last record of the session (or the fork's head).
    pub(crate) head: Hash,
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
        let (client, js, stream) = runtime.block_on(open(&options))?;
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

    pub(crate) fn stream_handle(&self) -> &stream::Stream {
        &self.stream
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
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    /// The session's last message, if it has one. Asked of the stream's leader, retried
    /// while the stream has none (an election after a server was lost takes seconds).
    pub(crate) async fn last(&self, session: &str) -> Result<Option<Last>, FleetError> {
        let subject = self.subject(session);
        let deadline = Instant::now() + self.options.timeout;
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
            tokio::time::sleep(RETRY_PAUSE).await;
        };
        let sequence = message.sequence;
        let incoming = wire::decode(session, Some(&message.headers), message.payload)
            .map_err(|reason| FleetError::Stopped { session: session.to_owned(), sequence, reason })?;
        let (next, head) = match incoming {
            wire::Incoming::Record { order, hash, .. } | wire::Incoming::RecordRef { order, hash, .. } => {
                (order + 1, hash)
            }
            wire::Incoming::Fork { at, head, .. } => (at, head),
        };
        Ok(Some(Last { sequence, next, head }))
    }

    /// Publishes one message of `session`, checked against the session's last stream sequence
    /// when `expected` is given (0: the session has no message yet), and waits until a
    /// majority of the stream's replicas hold it. A publish not acknowledged in time is sent
    /// again (its message id makes the server drop a second copy) until the options' timeout.
    pub(crate) async fn publish(
        &self,
        headers: HeaderMap,
        session: &str,
        payload: Bytes,
        expected: Option<u64>,
    ) -> Result<Published, FleetError> {
        let deadline = Instant::now() + self.options.timeout;
        loop {
            let mut message =
                jetstream::message::PublishMessage::build().headers(headers.clone()).payload(payload.clone());
            if let Some(sequence) = expected {
                message = message.expected_last_subject_sequence(sequence);
            }
            let reason = match self.publish_once(session, message).await {
                Ok(Ok(ack)) => return Ok(Published::At(ack.sequence)),
                Ok(Err(err)) if err.kind() == PublishErrorKind::WrongLastSequence => {
                    return Ok(Published::Lost)
                }
                Ok(Err(err)) if err.kind() == PublishErrorKind::MaxPayloadExceeded => {
                    return Err(FleetError::NotAcknowledged {
                        servers: self.options.servers_shown(),
                        what: format!("a message of session {session:?}"),
                        reason: err.to_string(),
                    });
                }
                Ok(Err(err)) => err.to_string(),
                Err(reason) => reason,
            };
            if Instant::now() >= deadline {
                return Err(FleetError::NotAcknowledged {
                    servers: self.options.servers_shown(),
                    what: format!("a message of session {session:?}"),
                    reason,
                });
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    async fn publish_once(
        &self,
        session: &str,
        message: jetstream::message::PublishMessage,
    ) -> Result<Result<jetstream::publish::PublishAck, jetstream::context::PublishError>, String> {
        let sent =
            match tokio::time::timeout(ATTEMPT, self.js.send_publish(self.subject(session), message)).await {
                Ok(Ok(sent)) => sent,
                Ok(Err(err)) => return Err(err.to_string()),
                Err(_) => return Err("the client could not send it in time".into()),
            };
        tokio::time::timeout(ATTEMPT, sent).await.map_err(|_| "no acknowledgement in time".to_owned())
    }

    fn bucket(&self) -> String {
        format!("{}-records", self.options.stream)
    }

    /// Puts a record's JSON, too large for one message, into the stream's object store.
    pub(crate) async fn put_object(&self, name: &str, json: &[u8]) -> Result<(), FleetError> {
        let bucket = self.bucket();
        let store = match self.js.get_object_store(&bucket).await {
            Ok(store) => store,
            Err(_) => self
                .js
                .create_object_store(object_store::Config {
                    bucket: bucket.clone(),
                    num_replicas: self.stream.cached_info().config.num_replicas,
                    ..Default::default()
                })
                .await
                .map_err(|err| self.stream_error(format!("object store {bucket:?}: {err}")))?,
        };
        let mut reader = json;
        store
            .put(name, &mut reader)
            .await
            .map_err(|err| self.stream_error(format!("object {name:?}: {err}")))?;
        Ok(())
    }

    /// Reads an object of the stream's object store, at most `size_bytes_max` bytes. The
    /// error says whether the object will never be readable (missing or too large).
    pub(crate) async fn get_object(
        &self,
        name: &str,
        size_bytes_max: usize,
    ) -> Result<Vec<u8>, (bool, String)> {
        let bucket = self.bucket();
        let store = self
            .js
            .get_object_store(&bucket)
            .await
            .map_err(|err| (false, format!("object store {bucket:?}: {err}")))?;
        let object = store.get(name).await.map_err(|err| {
            let gone = err.kind() == object_store::GetErrorKind::NotFound;
            (gone, format!("object {name:?}: {err}"))
        })?;
        let mut out = Vec::new();
        let read = object.take(size_bytes_max as u64 + 1).read_to_end(&mut out).await;
        read.map_err(|err| (false, format!("object {name:?}: {err}")))?;
        if out.len() > size_bytes_max {
            return Err((true, format!("object {name:?} is over {size_bytes_max} bytes")));
        }
        Ok(out)
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

async fn open(
    options: &FleetOptions,
) -> Result<(async_nats::Client, jetstream::Context, stream::Stream), FleetError> {
    let servers = options.servers_shown();
    let unreachable = |reason: String| FleetError::Unreachable { servers: servers.clone(), reason };
    let mut connect = ConnectOptions::new()
        .connection_timeout(options.timeout)
        .request_timeout(Some(options.timeout))
        // The client's own backoff grows to 4 s between attempts; a host coming back online
        // would then wait longer than one call's timeout for its connection. A small client
        // asking once a second costs a server nothing.
        .reconnect_delay_callback(|attempts| {
            let exp = u32::try_from(attempts).unwrap_or(u32::MAX).min(10);
            Duration::from_millis(2_u64.saturating_pow(exp)).min(Duration::from_secs(1))
        })
        .name("annal");
    // Credentials in a URL are read here, percent-escapes decoded, and handed to the client
    // apart from the address, as those from the options and the environment are.
    let from_url = options.servers.iter().find_map(|url| crate::options::url_credentials(url));
    let credentials = match (&options.credentials, from_url) {
        (Credentials::None, Some(credentials)) => credentials,
        (credentials, _) => credentials.clone(),
    };
    connect = match &credentials {
        Credentials::None => connect,
        Credentials::UserPassword { user, password } => {
            connect.user_and_password(user.clone(), password.clone())
        }
        Credentials::Token(token) => connect.token(token.clone()),
        Credentials::NKey(seed) => connect.nkey(seed.clone()),
        Credentials::CredsFile(path) => connect
            .credentials_file(path)
            .await
            .map_err(|err| FleetError::BadOptions(format!("credentials file {}: {err}", path.display())))?,
    };
    if let Some(ca) = &options.tls_ca {
        connect = connect.add_root_certificates(ca.clone()).require_tls(true);
    } else if options.tls_required {
        connect = connect.require_tls(true);
    }
    let mut addrs = Vec::with_capacity(options.servers.len());
    for url in &options.servers {
        let addr: async_nats::ServerAddr =
            crate::options::without_credentials(url).parse().map_err(|_| {
                FleetError::BadOptions(format!("{}: not a server URL", crate::options::show_url(url)))
            })?;
        addrs.push(addr);
    }
    let client = tokio::time::timeout(options.timeout + Duration::from_secs(1), connect.connect(addrs))
        .await
        .map_err(|_| unreachable("no server answered in time".into()))?
        .map_err(|err| unreachable(err.to_string()))?;
    let mut js = jetstream::new(client.clone());
    js.set_timeout(ATTEMPT);
    let subjects = vec![format!("{}.s.>", options.prefix)];
    let config = stream::Config {
        name: options.stream.clone(),
        subjects: subjects.clone(),
        num_replicas: options.replicas,
        storage: stream::StorageType::File,
        // Reads of a session's last message go to the leader, which answers with what it holds
        // now; a direct get may be answered by a replica that lags.
        allow_direct: false,
        ..Default::default()
    };
    let stream_error = |reason: String| FleetError::Stream {
        stream: options.stream.clone(),
        servers: servers.clone(),
        reason,
    };
    // A cluster that just started elects its JetStream leader, and a new stream its own:
    // asked too early, both stay silent. Ask again until the timeout.
    let deadline = Instant::now() + options.timeout;
    let (stream, info) = loop {
        let reason = match js.get_or_create_stream(config.clone()).await {
            Ok(mut stream) => match stream.info().await {
                Ok(info) if info.cluster.as_ref().is_none_or(|cluster| cluster.leader.is_some()) => {
                    let info = info.clone();
                    break (stream, info);
                }
                Ok(_) => "the stream has no leader yet".to_owned(),
                Err(err) => err.to_string(),
            },
            Err(err) => err.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(stream_error(reason));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    if info.config.subjects != subjects {
        return Err(stream_error(format!(
            "it holds subjects {:?}, not {:?}: another prefix's stream",
            info.config.subjects, subjects
        )));
    }
    Ok((client, js, stream))
}
