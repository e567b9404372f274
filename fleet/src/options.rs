//! `FleetOptions`: which servers, which stream, and how to prove who we are.
//!
//! Credentials come from the URL (`nats://user:password@host`, `nats://token@host`), from the
//! options, or from the environment; they are handed to the client and never printed, logged
//! or stored. [`FleetOptions::servers_shown`] is the one way a server list enters a message.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::FleetError;

/// Who the client says it is.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Credentials {
    /// None, or what the URLs carry.
    #[default]
    None,
    /// A user and password.
    UserPassword {
        /// The user.
        user: String,
        /// The password.
        password: String,
    },
    /// A token.
    Token(String),
    /// An NKey seed (`SU...`).
    NKey(String),
    /// A `.creds` file (JWT and seed).
    CredsFile(PathBuf),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret itself: a Debug print of options ends up in logs.
        f.write_str(match self {
            Credentials::None => "None",
            Credentials::UserPassword { .. } => "UserPassword(..)",
            Credentials::Token(_) => "Token(..)",
            Credentials::NKey(_) => "NKey(..)",
            Credentials::CredsFile(_) => "CredsFile(..)",
        })
    }
}

/// Where a fleet's history lives and how to reach it. Its `Debug` shows the servers without
/// their credentials.
#[derive(Clone)]
#[non_exhaustive]
pub struct FleetOptions {
    /// Server URLs (`nats://host:4222`, `tls://host:4222`); any one of them is enough.
    pub servers: Vec<String>,
    /// The stream's name: teams or tenants sharing a cluster each use their own (with a
    /// prefix of their own too: [`prefix_for`] gives the one `from_urls` would).
    pub stream: String,
    /// The subject prefix; a session's subject is `<prefix>.s.<escaped name>`.
    pub prefix: String,
    /// Replicas of the stream when this client creates it (1, 3 or 5).
    pub replicas: usize,
    /// Who the client is.
    pub credentials: Credentials,
    /// A CA certificate file to trust for TLS (and TLS required).
    pub tls_ca: Option<PathBuf>,
    /// Require TLS even without a CA file.
    pub tls_required: bool,
    /// How long to wait for a server, an acknowledgement or an answer.
    pub timeout: Duration,
    /// What names this host in the forks its offline records become.
    pub host: String,
    /// The largest record JSON that goes through the stream's object store, 40 MiB by
    /// default: a follower refuses a larger object from what the store's metadata or the
    /// message says before reading any of it (a hostile peer's object of garbage is never
    /// read whole), stops reading one that turns out larger, and a publisher does not publish
    /// such a record (the session's line in the report says so).
    pub object_bytes_max: usize,
}

impl std::fmt::Debug for FleetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetOptions")
            .field("servers", &self.servers_shown())
            .field("stream", &self.stream)
            .field("prefix", &self.prefix)
            .field("replicas", &self.replicas)
            .field("credentials", &self.credentials)
            .field("tls_ca", &self.tls_ca)
            .field("tls_required", &self.tls_required)
            .field("timeout", &self.timeout)
            .field("host", &self.host)
            .field("object_bytes_max", &self.object_bytes_max)
            .finish()
    }
}

/// The default stream name.
pub const STREAM_DEFAULT: &str = "ANNAL";
/// The default subject prefix.
pub const PREFIX_DEFAULT: &str = "annal";
/// The default of [`FleetOptions::object_bytes_max`]: 40 MiB.
const OBJECT_BYTES_MAX_DEFAULT: usize = 40 << 20;

impl FleetOptions {
    /// Options for a comma-separated list of server URLs, with credentials and TLS settings
    /// read from the environment: `ANNAL_FLEET_USER` and `ANNAL_FLEET_PASSWORD`,
    /// `ANNAL_FLEET_TOKEN`, `ANNAL_FLEET_NKEY` (a seed), `ANNAL_FLEET_CREDS` (a file),
    /// `ANNAL_FLEET_TLS_CA` (a file), and `ANNAL_FLEET_STREAM`, `ANNAL_FLEET_PREFIX`.
    ///
    /// # Errors
    /// [`FleetError::BadOptions`] for an empty list or a URL of another scheme.
    pub fn from_urls(urls: &str) -> Result<FleetOptions, FleetError> {
        let servers: Vec<String> =
            urls.split(',').map(str::trim).filter(|url| !url.is_empty()).map(str::to_owned).collect();
        if servers.is_empty() {
            return Err(FleetError::BadOptions("no server URL given".into()));
        }
        for url in &servers {
            let scheme = url.split_once("://").map_or("nats", |(scheme, _)| scheme);
            if !matches!(scheme, "nats" | "tls" | "ws" | "wss") {
                let shown = show_url(url);
                return Err(FleetError::BadOptions(format!(
                    "{shown}: not a nats://, tls://, ws:// or wss:// URL"
                )));
            }
        }
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let credentials =
            if let (Some(user), Some(password)) = (env("ANNAL_FLEET_USER"), env("ANNAL_FLEET_PASSWORD")) {
                Credentials::UserPassword { user, password }
            } else if let Some(token) = env("ANNAL_FLEET_TOKEN") {
                Credentials::Token(token)
            } else if let Some(seed) = env("ANNAL_FLEET_NKEY") {
                Credentials::NKey(seed)
            } else if let Some(file) = env("ANNAL_FLEET_CREDS") {
                Credentials::CredsFile(file.into())
            } else {
                Credentials::None
            };
        let stream = env("ANNAL_FLEET_STREAM").unwrap_or_else(|| STREAM_DEFAULT.to_owned());
        Ok(FleetOptions {
            servers,
            prefix: env("ANNAL_FLEET_PREFIX").unwrap_or_else(|| prefix_for(&stream)),
            stream,
            replicas: 3,
            credentials,
            tls_ca: env("ANNAL_FLEET_TLS_CA").map(PathBuf::from),
            tls_required: false,
            timeout: Duration::from_secs(10),
            host: host_name(),
            object_bytes_max: OBJECT_BYTES_MAX_DEFAULT,
        })
    }

    /// The server list as messages show it: credentials in a URL replaced by `***`.
    pub fn servers_shown(&self) -> String {
        self.servers.iter().map(|url| show_url(url)).collect::<Vec<_>>().join(",")
    }

    /// Checks the stream name and prefix the server will accept.
    pub(crate) fn check(&self) -> Result<(), FleetError> {
        let bad_name = |name: &str| {
            name.is_empty()
                || name.chars().any(|c| c.is_whitespace() || matches!(c, '.' | '*' | '>' | '/' | '\\'))
        };
        if bad_name(&self.stream) {
            return Err(FleetError::BadOptions(format!(
                "stream name {:?}: letters, digits, - and _ only",
                self.stream
            )));
        }
        let bad_prefix = self.prefix.is_empty()
            || self.prefix.split('.').any(|token| {
                token.is_empty() || token.chars().any(|c| c.is_whitespace() || c == '*' || c == '>')
            });
        if bad_prefix {
            return Err(FleetError::BadOptions(format!(
                "subject prefix {:?}: dot-separated tokens, no wildcards",
                self.prefix
            )));
        }
        if !matches!(self.replicas, 1..=5) {
            return Err(FleetError::BadOptions(format!("{} replicas: a stream has 1 to 5", self.replicas)));
        }
        Ok(())
    }
}

/// The subject prefix of a stream when none is given: `annal` for the default stream, and
/// `annal.<stream>` (lowercase) for another, so streams of one cluster never claim the same
/// subjects (the servers refuse two streams whose subjects overlap).
pub fn prefix_for(stream: &str) -> String {
    if stream == STREAM_DEFAULT {
        PREFIX_DEFAULT.to_owned()
    } else {
        format!("{PREFIX_DEFAULT}.{}", stream.to_lowercase())
    }
}

/// A URL with its user information replaced by `***`.
pub(crate) fn show_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(scheme, rest)| (scheme, rest));
    let rest = match rest.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => rest.to_owned(),
    };
    if scheme.is_empty() {
        rest
    } else {
        format!("{scheme}://{rest}")
    }
}

/// The URL's user information as credentials: `user:password` or a token, percent-escapes
/// decoded.
pub(crate) fn url_credentials(url: &str) -> Option<Credentials> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let (userinfo, _) = authority.rsplit_once('@')?;
    Some(match userinfo.split_once(':') {
        Some((user, password)) => {
            Credentials::UserPassword { user: decode(user), password: decode(password) }
        }
        None => Credentials::Token(decode(userinfo)),
    })
}

/// The URL with its user information left out.
pub(crate) fn without_credentials(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(scheme, rest)| (scheme, rest));
    let rest = match rest.split('/').next().unwrap_or(rest).rsplit_once('@') {
        Some((userinfo, _)) => &rest[userinfo.len() + 1..],
        None => rest,
    };
    if scheme.is_empty() {
        rest.to_owned()
    } else {
        format!("{scheme}://{rest}")
    }
}

/// `%XX` escapes decoded (as bytes, then as UTF-8, lossily).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This machine's name, for naming forks; `host` when the system does not say.
fn host_name() -> String {
    let name = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_default();
    let name: String =
        name.trim().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_')).collect();
    if name.is_empty() {
        "host".to_owned()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_shown() {
        assert_eq!(show_url("nats://alice:s3cret@h:4222"), "nats://***@h:4222");
        assert_eq!(show_url("tok@h"), "***@h");
        assert_eq!(show_url("nats://h:4222"), "nats://h:4222");
        let options = FleetOptions::from_urls("nats://a:b@x:1, nats://y:2").expect("urls");
        assert_eq!(options.servers_shown(), "nats://***@x:1,nats://y:2");
        let debug = format!("{:?}", Credentials::Token("s3cret".into()));
        assert!(!debug.contains("s3cret"));
        let debug = format!("{:?}", FleetOptions::from_urls("nats://alice:s3cret@x:1").expect("url"));
        assert!(!debug.contains("s3cret"), "{debug}");
    }

    #[test]
    fn credentials_in_urls_are_decoded_and_left_out_of_the_address() {
        let url = "nats://agent:c0rrect%20horse%F0%9F%94%91@h:4222";
        match url_credentials(url) {
            Some(Credentials::UserPassword { user, password }) => {
                assert_eq!((user.as_str(), password.as_str()), ("agent", "c0rrect horse🔑"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(url_credentials("tls://s3cret@h"), Some(Credentials::Token(t)) if t == "s3cret"));
        assert!(url_credentials("nats://h:4222").is_none());
        assert_eq!(without_credentials(url), "nats://h:4222");
        assert_eq!(without_credentials("h:4222"), "h:4222");
    }

    #[test]
    fn bad_urls_are_named() {
        let err = FleetOptions::from_urls("http://u:pw@x").expect_err("http");
        assert!(err.to_string().contains("http://***@x"), "{err}");
        assert!(FleetOptions::from_urls(" , ").is_err());
    }
}
