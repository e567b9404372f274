//! `annal show`: a session's records in order, readable or as portable JSON lines.

use std::io::Write;

use annal::error::ReadError;
use anyhow::bail;
use clap::Args;

use crate::output::{write_line, Out};
use crate::render::{write_record, Style};
use crate::store::StoreLocation;

// Arguments of `annal show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The session's name.
    session: String,
    /// The first sourceOrder to print.
    #[arg(long, value_name = "N", default_value_t = 0)]
    from: u64,
    /// Stop before this sourceOrder (default: the end of the session).
    #[arg(long, value_name = "M")]
    to: Option<u64>,
    /// One record per line in the portable JSON format (what `annal append` reads).
    #[arg(long)]
    json: bool,
}

/// `show` with its range checked.
#[derive(Debug)]
pub(crate) struct ShowPlan {
    session: String,
    orders: std::ops::Range<u64>,
    json: bool,
}

impl ShowArgs {
    /// Checks the range; no I/O.
    pub(crate) fn resolve(self) -> anyhow::Result<ShowPlan> {
        let to = self.to.unwrap_or(u64::MAX);
        if self.from > to {
            bail!("--from {} is past --to {to}: the range is empty", self.from);
        }
        Ok(ShowPlan { session: self.session, orders: self.from..to, json: self.json })
    }
}

/// Prints the records of the planned range.
pub(crate) fn run(store: &StoreLocation, plan: &ShowPlan, out: &mut Out) -> anyhow::Result<()> {
    let handle = store.open_reading()?;
    let snapshot = store.snapshot(&handle)?;
    let read_error = |err: ReadError| store.read_error(&plan.session, err);
    let Some(info) = snapshot.session(&plan.session).map_err(read_error)? else {
        return Err(store.unknown_session(&plan.session));
    };
    let mut first = true;
    for guard in snapshot.records(&plan.session, plan.orders.clone()).map_err(read_error)? {
        let guard = guard.map_err(read_error)?;
        let view = guard.view().map_err(read_error)?;
        if plan.json {
            write_line(out, &annal::json::record(&snapshot, &view).map_err(read_error)?)?;
        } else {
            if !first {
                writeln!(out)?;
            }
            write_record(out, &snapshot, &view, &Style::SHOW)?;
        }
        first = false;
    }
    if first && !plan.json {
        let records = crate::output::plural(info.len, "record");
        writeln!(out, "(nothing to show: session {:?} has {records})", plan.session)?;
    }
    Ok(())
}
