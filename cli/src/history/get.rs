//! `annal history get`: an original read back verbatim from the journal, with its metadata.

use std::io::Write;
use std::ops::RangeInclusive;

use annal::error::GetError;
use anyhow::{anyhow, bail};
use clap::Args;

use crate::output::{write_pretty, Out};
use crate::render::write_original;
use crate::store::StoreLocation;

pub(crate) const LONG_ABOUT: &str = "\
Print an original verbatim from the journal, with its metadata. ID is an entryId (the whole record,
as projection markers name it) or entryId#BLOCK (one block, as search hits and evidence rows name
it). --lines A:B prints only lines A to B (from 1; A: and :B are open-ended) of each text, --raw
prints only the text of one block, byte for byte.";

// Arguments of `annal history get`.
#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// ENTRY (a whole record) or ENTRY#BLOCK
    #[arg(value_name = "ID")]
    id: String,
    /// Only lines A to B of each text (from 1, inclusive; A: or :B leave one end open)
    #[arg(long, value_name = "A:B")]
    lines: Option<String>,
    /// Only the text of the block, exactly as stored (no metadata, no added newline)
    #[arg(long, conflicts_with = "json")]
    raw: bool,
    /// A JSON object: session, entryId, sourceOrder, role, timestamp, blocks
    #[arg(long)]
    json: bool,
}

/// `get` with its arguments checked.
#[derive(Debug)]
pub(crate) struct GetPlan {
    id: String,
    lines: Option<RangeInclusive<usize>>,
    raw: bool,
    json: bool,
}

/// Parses `A:B`, `A:`, `:B` or `A` (lines from 1, inclusive).
fn parse_lines(text: &str) -> anyhow::Result<RangeInclusive<usize>> {
    let number = |part: &str, default: usize| -> anyhow::Result<usize> {
        if part.is_empty() {
            return Ok(default);
        }
        part.trim().parse().map_err(|_| anyhow!("--lines {text:?}: {part:?} is not a line number"))
    };
    let (first, last) = match text.split_once(':') {
        Some((a, b)) => (number(a, 1)?, number(b, usize::MAX)?),
        None => {
            let line = number(text, 1)?;
            (line, line)
        }
    };
    if first == 0 {
        bail!("--lines {text}: lines count from 1");
    }
    if first > last {
        bail!("--lines {text}: the first line is after the last");
    }
    Ok(first..=last)
}

impl GetArgs {
    /// Checks the arguments; no I/O.
    pub(crate) fn resolve(self) -> anyhow::Result<GetPlan> {
        if self.id.trim().is_empty() {
            bail!("the id is empty: give an entryId or entryId#BLOCK");
        }
        let lines = self.lines.as_deref().map(parse_lines).transpose()?;
        Ok(GetPlan { id: self.id, lines, raw: self.raw, json: self.json })
    }
}

/// Reads the original and prints it.
pub(crate) fn run(location: &StoreLocation, plan: &GetPlan, out: &mut Out) -> anyhow::Result<()> {
    let store = location.open_reading()?;
    let original = store.get(&plan.id, plan.lines.clone()).map_err(|err| match err {
        unknown @ annal::Error::Get(GetError::UnknownEntry(_)) => location.failed(&unknown),
        annal::Error::Get(GetError::Journal(read)) | annal::Error::Read(read) => {
            location.read_error(&plan.id, read)
        }
        other => anyhow!(other),
    })?;
    if plan.json {
        write_pretty(out, &annal::json::original(&original))?;
    } else if plan.raw {
        let [block] = original.blocks.as_slice() else {
            bail!(
                "--raw prints one block, and {} has {}: name one as {}#N",
                original.entry_id,
                original.block_count,
                original.entry_id
            );
        };
        match &block.text {
            Some(text) => out.write_all(text.as_bytes())?,
            None => bail!("block {} of {} is binary; --raw prints text only", block.index, original.entry_id),
        }
    } else {
        write_original(out, &original)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_lines;

    #[test]
    fn line_ranges() {
        assert_eq!(parse_lines("2:5").ok(), Some(2..=5));
        assert_eq!(parse_lines("3:").ok(), Some(3..=usize::MAX));
        assert_eq!(parse_lines(":4").ok(), Some(1..=4));
        assert_eq!(parse_lines("7").ok(), Some(7..=7));
        assert!(parse_lines("0:2").is_err());
        assert!(parse_lines("5:2").is_err());
        assert!(parse_lines("x").is_err());
    }
}
