//! `annal verify`: recompute hashes and chains, check kept signatures, print what was checked and
//! every problem found.

use crate::failure::said;
use annal::error::ErrorKind;
use std::io::Write;

use annal::error::ReadError;
use annal::VerifyReport;
use clap::Args;

use crate::output::{plural, write_pretty, Out};
use crate::store::StoreLocation;

// Arguments of `annal verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Check only this session's own records (a fork's inherited ones are its parent's);
    /// default: every session and blob.
    session: Option<String>,
    /// A JSON object: sessions, records, blobs, ok, problems.
    #[arg(long)]
    json: bool,
}

/// What a report says was checked, in one line.
pub(crate) fn summary(report: &VerifyReport, whole_store: bool) -> String {
    let mut checked = format!("{}, {}", plural(report.sessions, "session"), plural(report.records, "record"));
    if whole_store {
        checked.push_str(&format!(", {}", plural(report.blobs, "blob")));
    }
    checked
}

/// Verifies and prints the report; damage makes the command fail after the problems are printed.
pub(crate) fn run(store: &StoreLocation, args: &VerifyArgs, out: &mut Out) -> anyhow::Result<()> {
    let handle = store.open_reading()?;
    let report = handle.verify(args.session.as_deref()).map_err(|err| match err {
        annal::Error::Read(ReadError::UnknownSession(name)) => store.unknown_session(&name),
        other => said(other.kind(), format!("cannot verify {store}: {other}")),
    })?;
    if args.json {
        write_pretty(out, &annal::json::verify_report(&report))?;
    } else {
        let whole = args.session.is_none();
        writeln!(out, "checked {} in {store}", summary(&report, whole))?;
        if report.is_ok() {
            writeln!(
                out,
                "ok: every content hash, hash chain, digest, entry index and kept signature matches"
            )?;
        }
        for problem in &report.problems {
            writeln!(out, "problem: {problem}")?;
        }
    }
    if !report.is_ok() {
        let problems = plural(report.problems.len() as u64, "problem");
        let sessions = plural(report.sessions, "session");
        return Err(said(
            ErrorKind::Corrupted,
            format!("{store} is damaged: {problems} found in {sessions} checked (listed above)"),
        ));
    }
    Ok(())
}
