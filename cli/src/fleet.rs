//! `annal fleet`: publish this store's sessions to a NATS JetStream fleet, follow the fleet's
//! sessions into it, show where each session stands, and keep the keys whose records it
//! applies (docs/replication.md).

use std::io::Write;
use std::time::Duration;

use annal::error::ErrorKind;
use annal::fleet::{Fleet, FollowOptions, FollowReport, PublishOptions, SessionStatus};
use annal::Annal;
use clap::{Args, Subcommand};

use crate::failure::said;
use crate::output::Out;
use crate::store::{Connection, StoreLocation};

// Arguments of `annal fleet`.
#[derive(Debug, Args)]
pub(crate) struct FleetArgs {
    #[command(subcommand)]
    command: FleetCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum FleetCommand {
    /// Send every committed record the fleet lacks, in order, exactly once.
    Publish(PublishArgs),
    /// Apply the fleet's sessions to this store, verifying each record's chain.
    Follow(FollowArgs),
    /// Per session: records here, on the fleet, waiting to be published, lag, and signers.
    Status(StatusArgs),
    /// Print this host's public key (made on first use beside the store), for others to trust.
    Key,
    /// The keys whose records `follow` applies: once any is trusted, only theirs (and this
    /// host's own).
    Trust(TrustArgs),
}

#[derive(Debug, Args)]
struct TrustArgs {
    #[command(subcommand)]
    command: TrustCommand,
}

#[derive(Debug, Subcommand)]
enum TrustCommand {
    /// Trust a host's public key (as `annal fleet key` prints it) under a name.
    Add {
        /// The name status lines show for the key's records
        name: String,
        /// 64 hex digits
        key: String,
    },
    /// List the trusted keys.
    List {
        /// One JSON object per key
        #[arg(long)]
        json: bool,
    },
    /// Stop trusting the key of this name.
    Remove {
        /// The name it was added under
        name: String,
    },
}

#[derive(Debug, Args)]
struct PublishArgs {
    /// The fleet's servers, comma-separated (nats://host:4222,...)
    #[arg(long, value_name = "URLS", env = "ANNAL_FLEET")]
    to: String,
    /// Only sessions whose names match (`*` any text, `?` one character)
    #[arg(long, value_name = "PATTERN")]
    sessions: Option<String>,
    /// Keep publishing as records are appended, until interrupted
    #[arg(long)]
    watch: bool,
    /// One JSON object per pass
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connection: Connection,
}

#[derive(Debug, Args)]
struct FollowArgs {
    /// The fleet's servers, comma-separated (nats://host:4222,...)
    #[arg(value_name = "URLS", env = "ANNAL_FLEET")]
    from: String,
    /// Only sessions whose names match (`*` any text, `?` one character)
    #[arg(long, value_name = "PATTERN")]
    sessions: Option<String>,
    /// Keep following as the fleet grows, until interrupted
    #[arg(long)]
    watch: bool,
    /// One JSON object per pass
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connection: Connection,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// The fleet's servers, comma-separated (nats://host:4222,...)
    #[arg(value_name = "URLS", env = "ANNAL_FLEET")]
    of: String,
    /// Only sessions whose names match (`*` any text, `?` one character)
    #[arg(long, value_name = "PATTERN")]
    sessions: Option<String>,
    /// One JSON object per session
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connection: Connection,
}

pub(crate) fn run(store: &StoreLocation, args: &FleetArgs, out: &mut Out) -> anyhow::Result<()> {
    match &args.command {
        FleetCommand::Publish(args) => publish(store, args, out),
        FleetCommand::Follow(args) => follow(store, args, out),
        FleetCommand::Key => key(store, out),
        FleetCommand::Trust(args) => trust(store, &args.command, out),
        FleetCommand::Status(args) => status(store, args, out),
    }
}

fn publish(store: &StoreLocation, args: &PublishArgs, out: &mut Out) -> anyhow::Result<()> {
    let annal = store.open_or_create()?;
    let fleet = args.connection.connect(&args.to)?;
    let mut options = PublishOptions::default();
    options.sessions.clone_from(&args.sessions);
    loop {
        publish_pass(store, &annal, &fleet, &options, args.json, args.watch, out)?;
        if !args.watch {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn follow(store: &StoreLocation, args: &FollowArgs, out: &mut Out) -> anyhow::Result<()> {
    let annal = store.open_or_create()?;
    let fleet = args.connection.connect(&args.from)?;
    let mut options = FollowOptions::default();
    options.sessions.clone_from(&args.sessions);
    options.watch = args.watch;
    // Opened first, the index follows the journal on its own thread while records
    // arrive, so the fleet's sessions are searchable when this returns.
    let _ = annal.index_status();
    let report = annal.follow(&fleet, &options, &|| true).map_err(|err| store.failed(&err))?;
    for line in report.stopped.iter().chain(&report.foreign) {
        eprintln!("annal: {line}");
    }
    for line in &report.still_stopped {
        eprintln!("annal: still stopped: {line}");
    }
    if report.records > 0 {
        if let Err(err) = crate::store::catch_up(&annal, store, None) {
            eprintln!("annal: {err:#}; the records are stored, searches index them");
        }
    }
    write_follow_report(&report, args.json, out)?;
    fail_if_stopped(&report)
}

fn write_follow_report(report: &FollowReport, json: bool, out: &mut Out) -> anyhow::Result<()> {
    if json {
        let value = serde_json::json!({
            "records": report.records, "bytes": report.bytes, "forks": report.forks,
            "passedOver": report.passed_over, "stopped": report.stopped, "foreign": report.foreign,
            "stillStopped": report.still_stopped,
            "sequence": report.sequence,
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(
            out,
            "followed to stream sequence {}: {} records ({} bytes), {} forks; {} sessions stopped",
            report.sequence,
            report.records,
            report.bytes,
            report.forks,
            report.stopped.len()
        )?;
    }
    Ok(())
}

// Sessions that stay stopped from an earlier pass fail the command too: a follower that exits 0
// holds every session it follows up to the stream's end.
fn fail_if_stopped(report: &FollowReport) -> anyhow::Result<()> {
    let stopped = report.stopped.len() + report.still_stopped.len();
    if stopped == 0 {
        Ok(())
    } else {
        Err(said(
            ErrorKind::Corrupted,
            format!(
                "{stopped} sessions stopped ({} in this pass): messages that do not chain or are not signed as this store requires; `annal fleet status` lists why",
                report.stopped.len()
            ),
        ))
    }
}

fn key(store: &StoreLocation, out: &mut Out) -> anyhow::Result<()> {
    let annal = store.open_or_create()?;
    let key = annal.fleet_key().map_err(|err| store.failed(&err))?;
    writeln!(out, "{key}")?;
    Ok(())
}

fn status(store: &StoreLocation, args: &StatusArgs, out: &mut Out) -> anyhow::Result<()> {
    let annal = store.open_reading()?;
    let fleet = args.connection.connect(&args.of)?;
    let rows = annal.fleet_status(&fleet, args.sessions.as_deref()).map_err(|err| store.failed(&err))?;
    for row in rows {
        if args.json {
            writeln!(out, "{}", status_json(&row))?;
        } else {
            writeln!(out, "{}", status_line(&row))?;
        }
    }
    Ok(())
}

fn status_json(row: &SessionStatus) -> serde_json::Value {
    serde_json::json!({
        "session": row.session, "local": row.local, "fleet": row.fleet,
        "unpublished": row.unpublished, "lag": row.lag, "stopped": row.stopped,
        "forkedTo": row.forked_to, "unsigned": row.unsigned,
        "signers": row.signers.iter()
            .map(|(signer, records)| serde_json::json!({"signer": signer, "records": records}))
            .collect::<Vec<_>>(),
    })
}

fn status_line(row: &SessionStatus) -> String {
    let mut line = format!(
        "{:?}: {} here, {} on the fleet, {} to publish, {} behind",
        row.session, row.local, row.fleet, row.unpublished, row.lag
    );
    if let Some(fork) = &row.forked_to {
        line.push_str(&format!("; records here went to fork {fork:?}"));
    }
    if !row.signers.is_empty() {
        let signers: Vec<String> =
            row.signers.iter().map(|(signer, records)| format!("{signer} ({records})")).collect();
        line.push_str(&format!("; signed by {}", signers.join(", ")));
    }
    if row.unsigned > 0 {
        line.push_str(&format!("; {} unsigned", row.unsigned));
    }
    if let Some(stopped) = &row.stopped {
        line.push_str(&format!("; stopped: {stopped}"));
    }
    line
}

fn trust(store: &StoreLocation, command: &TrustCommand, out: &mut Out) -> anyhow::Result<()> {
    match command {
        TrustCommand::Add { name, key } => {
            let annal = store.open_or_create()?;
            annal.trust_add(name, key).map_err(|err| store.failed(&err))?;
            writeln!(
                out,
                "trusted {name:?}: follow applies only records signed by a trusted key or this host"
            )?;
        }
        TrustCommand::List { json } => {
            let annal = store.open_reading()?;
            for (name, key) in annal.trusted().map_err(|err| store.failed(&err))? {
                if *json {
                    writeln!(out, "{}", serde_json::json!({"name": name, "key": key}))?;
                } else {
                    writeln!(out, "{name}\t{key}")?;
                }
            }
        }
        TrustCommand::Remove { name } => {
            let annal = store.open_existing()?;
            annal.trust_remove(name).map_err(|err| store.failed(&err))?;
            writeln!(out, "no longer trusted: {name:?}")?;
            if annal.trusted().map_err(|err| store.failed(&err))?.is_empty() {
                writeln!(
                    out,
                    "no key is trusted now: follow applies records of any signer, and unsigned ones"
                )?;
            }
        }
    }
    Ok(())
}

fn publish_pass(
    store: &StoreLocation,
    annal: &Annal,
    fleet: &Fleet,
    options: &PublishOptions,
    json: bool,
    watch: bool,
    out: &mut Out,
) -> anyhow::Result<()> {
    let report = match annal.publish(fleet, options) {
        Ok(report) => report,
        // Watching, a fleet that is away is waited for: appends go on locally meanwhile.
        Err(err) if watch && matches!(err.kind(), ErrorKind::Io | ErrorKind::Busy) => {
            eprintln!("annal: {}; trying again", annal::error::message(&err));
            std::thread::sleep(Duration::from_secs(1));
            return Ok(());
        }
        Err(err) => return Err(store.failed(&err)),
    };
    for line in report.diverged.iter().chain(&report.deferred).chain(&report.stopped) {
        eprintln!("annal: {line}");
    }
    if watch && report.records == 0 && report.forks == 0 {
        return Ok(());
    }
    if json {
        let value = serde_json::json!({
            "records": report.records, "bytes": report.bytes, "forks": report.forks,
            "sessions": report.sessions, "diverged": report.diverged, "deferred": report.deferred,
            "stopped": report.stopped,
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(
            out,
            "published {} records ({} bytes) and {} forks of {} sessions",
            report.records, report.bytes, report.forks, report.sessions
        )?;
    }
    out.flush()?;
    // The other sessions were published; a session the fleet's bad message holds back fails
    // a single pass once (a watching one says so each pass and goes on).
    if !watch && !report.stopped.is_empty() {
        return Err(said(
            ErrorKind::Corrupted,
            format!(
                "{} sessions not published: the fleet's last message of each is not annal's, or a record is over the fleet's object limit",
                report.stopped.len()
            ),
        ));
    }
    Ok(())
}
