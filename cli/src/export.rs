//! `annal export`: a session as annal JSONL (lossless, re-importable) or Markdown, optionally
//! with secrets masked. Stored records are never changed.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use annal::error::{ExportError, ReadError};
use annal::{Error, ExportFormat, ExportOptions};
use anyhow::Context;
use clap::Args;

use crate::output::Out;
use crate::store::StoreLocation;

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The session to export (a fork includes the records it inherits)
    session: String,
    /// annal JSONL (a header line, then one portable record per line) or Markdown for people
    #[arg(long, default_value = "jsonl", value_parser = ["jsonl", "markdown"])]
    format: String,
    /// Mask secrets (API keys, tokens, private keys, passwords) with labelled placeholders
    #[arg(long)]
    redact: bool,
    /// Write to FILE instead of stdout (written whole or not at all)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

pub(crate) fn run(location: &StoreLocation, args: &ExportArgs, out: &mut Out) -> anyhow::Result<()> {
    let store = location.open_reading()?;
    let format = if args.format == "markdown" { ExportFormat::Markdown } else { ExportFormat::Jsonl };
    let options = ExportOptions { format, redact: args.redact };
    let write = |sink: &mut dyn Write| store.export(&args.session, &options, sink).map(drop);
    let describe = |err: Error| match err {
        Error::Export(ExportError::Read(ReadError::UnknownSession(name))) => location.unknown_session(&name),
        Error::Export(ExportError::Read(other)) | Error::Read(other) => {
            location.read_error(&args.session, other)
        }
        other => anyhow::Error::from(other),
    };
    match &args.output {
        None => write(out).map_err(describe),
        Some(path) => {
            // Written beside the target and renamed into place, so a failed export never leaves
            // a truncated file that looks complete.
            let folder =
                path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
            let mut temp = tempfile::NamedTempFile::new_in(folder)
                .with_context(|| format!("cannot write in {}", folder.display()))?;
            {
                let mut sink = BufWriter::new(temp.as_file_mut());
                write(&mut sink).map_err(describe)?;
                sink.flush().with_context(|| format!("cannot write {}", path.display()))?;
            }
            temp.as_file().sync_all().with_context(|| format!("cannot write {}", path.display()))?;
            temp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
            Ok(())
        }
    }
}
