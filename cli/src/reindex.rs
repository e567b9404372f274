//! `annal reindex`: rebuild the search index from the journal, with a progress bar. The old
//! index stays searchable until the new one is committed whole.

use crate::failure::said;
use annal::error::ErrorKind;
use std::io::Write;

use annal::error::IndexError;
use anyhow::{anyhow, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::output::{bytes, count, write_json_pretty, Out};
use crate::store::StoreLocation;

// Arguments of `annal reindex`.
#[derive(Debug, Args)]
pub(crate) struct ReindexArgs {
    /// A JSON object: records, blocks, textBytes, indexBytes, seconds, folder
    #[arg(long)]
    json: bool,
}

/// Rebuilds the index of the store at `location`.
pub(crate) fn run(location: &StoreLocation, args: &ReindexArgs, out: &mut Out) -> anyhow::Result<()> {
    let store = location.open_existing()?;
    let folder = store.index_folder();
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template("{spinner} indexing {pos}/{len} records {wide_bar} {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let summary = store.reindex(&mut |done, total| {
        progress.set_length(total);
        progress.set_position(done);
    });
    progress.finish_and_clear();
    let summary = summary.map_err(|err| match err {
        annal::Error::Index(IndexError::Busy { path }) => said(
            ErrorKind::Busy,
            format!(
                "another process holds the search index writer of {location} ({}); close it and try again",
                path.display()
            ),
        ),
        other => anyhow!(other),
    })?;
    let index_bytes = summary.index_bytes;
    if args.json {
        write_json_pretty(
            out,
            &json!({
                "records": summary.positions,
                "blocks": summary.documents,
                "textBytes": summary.text_bytes,
                "indexBytes": index_bytes,
                "seconds": summary.elapsed.as_secs_f64(),
                "folder": folder.display().to_string(),
            }),
        )?;
    } else {
        writeln!(
            out,
            "indexed {} records ({} blocks, {} of text) in {:.1} s",
            count(summary.positions),
            count(summary.documents),
            bytes(summary.text_bytes),
            summary.elapsed.as_secs_f64()
        )?;
        writeln!(out, "index {} ({})", folder.display(), bytes(index_bytes))?;
    }
    store.close().context("cannot close the store")?;
    Ok(())
}
