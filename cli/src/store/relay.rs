//! Reaching a fleet from any command that takes a server list (`fleet`, `append`, `sync`, the
//! MCP server), and the relay that keeps a store in step with one between a command's passes.

use std::path::PathBuf;
use std::time::Duration;

use annal::error::ErrorKind;
use annal::fleet::{Credentials, Fleet, FleetOptions, FollowOptions, PublishOptions};
use annal::Annal;
use clap::Args;

use crate::failure::said;

// How to reach a fleet: shared by every command that takes a server list.
#[derive(Debug, Args, Clone)]
pub(crate) struct Connection {
    /// The stream's name (teams or tenants sharing a cluster use their own)
    #[arg(long, value_name = "NAME", env = "ANNAL_FLEET_STREAM", default_value = annal::fleet::STREAM_DEFAULT)]
    stream: String,
    /// The subject prefix of the stream's sessions [default: annal for the default stream,
    /// annal.<stream> for another]
    #[arg(long, value_name = "PREFIX", env = "ANNAL_FLEET_PREFIX")]
    prefix: Option<String>,
    /// Replicas of the stream, when this command creates it
    #[arg(long, value_name = "N", default_value_t = 3)]
    replicas: usize,
    /// A NATS credentials file (JWT and NKey seed) [env: ANNAL_FLEET_CREDS]
    #[arg(long, value_name = "FILE")]
    creds: Option<PathBuf>,
    /// A file holding an NKey seed [env: ANNAL_FLEET_NKEY holds the seed itself]
    #[arg(long, value_name = "FILE")]
    nkey: Option<PathBuf>,
    /// A CA certificate to trust; TLS is then required [env: ANNAL_FLEET_TLS_CA]
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
    /// Seconds to wait for a server or an acknowledgement
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    timeout: u64,
}

impl Connection {
    /// Connects to `urls` (comma-separated), credentials from the URLs, flags or environment.
    pub(crate) fn connect(&self, urls: &str) -> anyhow::Result<Fleet> {
        let mut options = FleetOptions::from_urls(urls).map_err(fleet_error)?;
        options.stream.clone_from(&self.stream);
        options.prefix = self.prefix.clone().unwrap_or_else(|| annal::fleet::prefix_for(&self.stream));
        options.replicas = self.replicas;
        options.timeout = Duration::from_secs(self.timeout.max(1));
        if let Some(file) = &self.creds {
            options.credentials = Credentials::CredsFile(file.clone());
        } else if let Some(file) = &self.nkey {
            let seed = std::fs::read_to_string(file).map_err(|err| {
                said(ErrorKind::NotFound, format!("cannot read the NKey seed file {}: {err}", file.display()))
            })?;
            options.credentials = Credentials::NKey(seed.trim().to_owned());
        }
        if let Some(ca) = &self.tls_ca {
            options.tls_ca = Some(ca.clone());
        }
        Fleet::connect(options).map_err(fleet_error)
    }
}

fn fleet_error(err: annal::fleet::FleetError) -> anyhow::Error {
    said(err.kind(), annal::error::message(&err))
}

/// A fleet that `sync` and `mcp` keep in step with the store between their own passes: what
/// this host captured is published, and (for `mcp`) what the other hosts published is
/// followed. A fleet that is away is tried again at the next pass; its failures are lines on
/// stderr, never the end of the command.
#[derive(Debug)]
pub(crate) struct Relay {
    urls: String,
    connection: Connection,
    fleet: Option<Fleet>,
}

impl Relay {
    pub(crate) fn new(urls: &str, connection: &Connection) -> Relay {
        Relay { urls: urls.to_owned(), connection: connection.clone(), fleet: None }
    }

    /// Publishes what the fleet lacks of `annal`'s sessions and, with `follow`, applies what
    /// the fleet has that `annal` lacks. Runs on a thread of its own: the fleet's client has
    /// a runtime of its own, which cannot start inside another (the MCP server's).
    pub(crate) fn step(&mut self, annal: &Annal, follow: bool) -> Result<(), String> {
        std::thread::scope(|scope| scope.spawn(|| self.step_here(annal, follow)).join())
            .unwrap_or_else(|_| Err("the fleet's client failed".to_owned()))
    }

    fn step_here(&mut self, annal: &Annal, follow: bool) -> Result<(), String> {
        if self.fleet.is_none() {
            self.fleet = Some(self.connection.connect(&self.urls).map_err(|err| format!("{err:#}"))?);
        }
        let Some(fleet) = &self.fleet else { return Ok(()) };
        let published = annal.publish(fleet, &PublishOptions::default());
        let report = published.map_err(|err| annal::error::message(&err))?;
        for line in report.diverged.iter().chain(&report.deferred).chain(&report.stopped) {
            eprintln!("annal: {line}");
        }
        if follow {
            let followed = annal.follow(fleet, &FollowOptions::default(), &|| true);
            for line in followed.map_err(|err| annal::error::message(&err))?.stopped {
                eprintln!("annal: {line}");
            }
        }
        Ok(())
    }
}
