//! `annal fork`: a new session sharing a parent's first records, under a given or derived name.

use crate::failure::said;
use annal::error::ErrorKind;
use std::io::Write;

use annal::error::ForkError;
use annal::Error;
use annal::Snapshot;
use anyhow::anyhow;
use clap::Args;

use crate::output::{write_pretty, Out};
use crate::store::StoreLocation;

// Arguments of `annal fork`.
#[derive(Debug, Args)]
pub(crate) struct ForkArgs {
    /// The session to fork.
    session: String,
    /// The fork point: the new session keeps the parent's records before sourceOrder N.
    #[arg(long, value_name = "N")]
    at: u64,
    /// The new session's name [default: SESSION-fork-N, or SESSION-fork-N-2, -3, … if taken].
    #[arg(long, value_name = "NEW")]
    name: Option<String>,
    /// Print the new session as a JSON object (as in `sessions --json`) instead of its name.
    #[arg(long)]
    json: bool,
}

/// How many derived names to try when others are taken, including ones taken meanwhile.
const NAME_ATTEMPTS: u64 = 1000;

/// The first free name of the form `base`, `base-2`, `base-3`, …, from `from` on.
fn free_name(snapshot: &Snapshot, base: &str, from: u64) -> anyhow::Result<Option<(String, u64)>> {
    for n in from..NAME_ATTEMPTS {
        let candidate = if n <= 1 { base.to_owned() } else { format!("{base}-{n}") };
        if snapshot.session(&candidate)?.is_none() {
            return Ok(Some((candidate, n)));
        }
    }
    Ok(None)
}

/// Forks the session and prints the new session's name.
pub(crate) fn run(store: &StoreLocation, args: &ForkArgs, out: &mut Out) -> anyhow::Result<()> {
    let handle = store.open_existing()?;
    let fail = |err: Error| match err {
        Error::Fork(ForkError::UnknownSession(name)) => store.unknown_session(&name),
        Error::Fork(ForkError::OutOfRange { session, at, len }) => said(
            ErrorKind::BadInput,
            format!(
                "cannot fork {session:?} at {at}: it has {len} records in {store} (--at must be 0..={len})"
            ),
        ),
        taken @ Error::Fork(ForkError::NameTaken(_)) => store.failed(&taken),
        other => said(other.kind(), format!("cannot fork {:?} in {store}: {other}", args.session)),
    };
    let info = match &args.name {
        Some(name) => handle.fork(&args.session, args.at, name).map_err(fail)?,
        None => {
            let base = format!("{}-fork-{}", args.session, args.at);
            let mut from = 1;
            loop {
                let snapshot = store.snapshot(&handle)?;
                let Some((name, n)) = free_name(&snapshot, &base, from)? else {
                    return Err(anyhow!("no free name of the form {base:?}-N in {store}; pass --name"));
                };
                drop(snapshot);
                match handle.fork(&args.session, args.at, &name) {
                    // Another writer took the name between the look-up and the fork.
                    Err(Error::Fork(ForkError::NameTaken(_))) => from = n + 1,
                    other => break other.map_err(fail)?,
                }
            }
        }
    };
    if args.json {
        write_pretty(out, &annal::json::session(&info))?;
    } else {
        writeln!(out, "{}", info.name)?;
    }
    Ok(())
}
