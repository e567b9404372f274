//! `annal history`: full-text search over every original (`search`) and an original read back
//! verbatim by id (`get`). Both work on what the journal holds, whatever a projection left out.

mod get;
mod search;

use std::io::IsTerminal;

use clap::{Args, Subcommand};

use crate::output::Out;
use crate::store::StoreLocation;

// Arguments of `annal history`.
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum HistoryCommand {
    /// Search every original (text, thinking, tool calls and output), best matches first.
    #[command(long_about = search::LONG_ABOUT)]
    Search(search::SearchArgs),
    /// Print an original verbatim by its id: ENTRY (a whole record) or ENTRY#BLOCK.
    #[command(long_about = get::LONG_ABOUT)]
    Get(get::GetArgs),
}

/// Checks the arguments (no I/O), then runs the subcommand.
pub(crate) fn run(location: &StoreLocation, args: HistoryArgs, out: &mut Out) -> anyhow::Result<()> {
    match args.command {
        HistoryCommand::Search(args) => {
            let plan = args.resolve()?;
            search::run(location, &plan, out)
        }
        HistoryCommand::Get(args) => {
            let plan = args.resolve()?;
            get::run(location, &plan, out)
        }
    }
}

/// Whether highlights may use terminal colours on stdout.
pub(crate) fn colours() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
