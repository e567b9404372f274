//! Connecting to a fleet: the client with its credentials, TLS and reconnect schedule, and the
//! stream, created if missing and waited for while the cluster elects its leaders.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, stream};
use async_nats::ConnectOptions;

use crate::client::ATTEMPT;
use crate::error::FleetError;
use crate::options::{Credentials, FleetOptions};

/// How often the client pings its server (it gives up on the connection after two pings go
/// unanswered and the third is due).
const PING_INTERVAL: Duration = Duration::from_secs(2);

pub(crate) async fn open(
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
        // A server that hangs (paused, its machine stalled) keeps the connection open and
        // answers nothing: the client learns of it only when pings go unanswered, three
        // intervals. At the client's default of 60 s a writer connected to a paused stream
        // leader waited minutes; at 2 s it moves to another server in about 6 s.
        .ping_interval(PING_INTERVAL)
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
        .map_err(|err| match err.kind() {
            async_nats::ConnectErrorKind::AuthorizationViolation
            | async_nats::ConnectErrorKind::Authentication => {
                FleetError::Refused { servers: servers.clone(), reason: err.to_string() }
            }
            _ => unreachable(err.to_string()),
        })?;
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
