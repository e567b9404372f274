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

/// Where a fleet's history lives and how to reach it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FleetOptions {
    /// Server URLs (`nats://host:4222`, `tls://host:4222`); any one of them is enough.
    pub servers: Vec<String>,
    /// The stream's name: teams or tenants sharing a cluster each use their own.
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
}

/// The default stream name.
pub const STREAM_DEFAULT: &str = "ANNAL";
/// The default subject prefix.
pub const PREFIX_DEFAULT: &str = "annal";

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
        Ok(FleetOptions {
            servers,
            stream: env("ANNAL_FLEET_STREAM").unwrap_or_else(|| STREAM_DEFAULT.to_owned()),
            prefix: env("ANNAL_FLEET_PREFIX").unwrap_or_else(|| PREFIX_DEFAULT.to_owned()),
            replicas: 3,
            credentials,
            tls_ca: env("ANNAL_FLEET_TLS_CA").map(PathBuf::from),
            tls_required: false,
            timeout: Duration::from_secs(10),
            host: host_name(),
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
    }

    #[test]
    fn bad_urls_are_named() {
        let err = FleetOptions::from_urls("http://u:pw@x").expect_err("http");
        assert!(err.to_string().contains("http://***@x"), "{err}");
        assert!(FleetOptions::from_urls(" , ").is_err());
    }
}
