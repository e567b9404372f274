//! The `annal` binary: argument parsing, dispatch, and the mapping of outcomes to exit codes.
//!
//! Work happens in three steps. Parsing (clap) only checks what was typed; resolving turns the
//! arguments into a store location and validated values, still without touching a store; running
//! opens the store and does the work. Output goes through one locked, buffered stdout, and a
//! reader that closes the pipe early (`annal show s | head -1`) ends the run quietly with success.

mod append;
mod compact;
mod demo;
mod export;
mod failure;
mod fleet;
mod fork;
mod generate;
mod history;
mod import;
mod listing;
mod mcp;
mod output;
mod project;
mod reindex;
mod render;
mod show;
mod store;
mod sync;
mod ui;
mod verify;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::output::Out;
use crate::store::StoreLocation;

/// An append-only journal of agent sessions: every record is written once and never rewritten.
#[derive(Debug, Parser)]
#[command(name = "annal", version, propagate_version = true)]
struct Cli {
    /// The store file [default: annal/annal.redb in the user's data directory]
    #[arg(long, global = true, value_name = "PATH", env = "ANNAL_DB")]
    db: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

/// Each subcommand's arguments are built only when it is the one run (`defer`): building every
/// subcommand's arguments cost each command about a third of a millisecond at start. The help
/// texts live on the variants; the argument structs carry plain comments, since clap applies a
/// doc comment on one when it is built, over the variant's text.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// List the sessions of the store.
    Sessions(listing::SessionsArgs),
    /// Print a session's records in order.
    Show(show::ShowArgs),
    /// Append records, read as JSON lines from stdin, to a session as one batch.
    #[command(long_about = append::LONG_ABOUT)]
    Append(append::AppendArgs),
    /// Import the transcripts of the agents `annal sync --list` names, or annal exports.
    Import(import::ImportArgs),
    /// Capture every session the machine's agents write: once, or continuously with --watch.
    Sync(sync::SyncArgs),
    /// Export a session as annal JSONL (re-importable with identical hashes) or Markdown.
    Export(export::ExportArgs),
    /// Fork a session: a new session that shares the parent's first records without copying them.
    Fork(fork::ForkArgs),
    /// Recompute every content hash and hash chain, and check blobs against their hashes.
    Verify(verify::VerifyArgs),
    /// Count sessions, records and blobs, and the bytes each table holds.
    Stats(listing::StatsArgs),
    /// Search every original (`search`) and read one back verbatim by id (`get`).
    History(history::HistoryArgs),
    /// Rebuild the search index from the journal.
    Reindex(reindex::ReindexArgs),
    /// The view of a session for the next model request, under a token budget.
    Project(project::ProjectArgs),
    /// Commit a checkpoint of a session's view (optionally with a handoff summary) and its receipt.
    Compact(compact::CompactArgs),
    /// A guided tour of annal on a generated coding session, in a temporary store.
    Demo,
    /// Serve the store's history to an agent as a Model Context Protocol server on stdio.
    #[command(long_about = mcp::LONG_ABOUT)]
    Mcp(mcp::McpArgs),
    /// One history across many hosts: publish to, follow and check a NATS JetStream fleet.
    Fleet(fleet::FleetArgs),
    /// Read every session, search, and see what the model saw, in a browser (local, read-only).
    Ui(ui::UiArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        // The protocol owns stdout: it must not be locked and buffered for a command's output.
        Command::Mcp(args) => StoreLocation::resolve(cli.db).and_then(|store| mcp::run(store, &args)),
        // The server prints its URL at once and runs until interrupted.
        Command::Ui(args) => StoreLocation::resolve(cli.db).and_then(|store| ui::run(store, &args)),
        command => {
            let mut out = output::stdout();
            let outcome = run(Cli { command, ..cli }, &mut out);
            // Whatever the command printed goes out before an error line, so the two read in order.
            let flushed = out.flush();
            outcome.and_then(|()| flushed.map_err(anyhow::Error::from))
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Engine errors quote their cause; a cause the message already holds is not repeated.
            let line = annal::error::message(err.as_ref());
            // If stderr is gone too there is nobody left to tell.
            let _ = writeln!(io::stderr(), "annal: {line}");
            ExitCode::from(failure::exit_code(failure::kind_of(&err)))
        }
    }
}

fn run(cli: Cli, out: &mut Out) -> anyhow::Result<()> {
    // Resolved only by the commands that use it: the demo brings its own temporary store.
    let store = || StoreLocation::resolve(cli.db.clone());
    match cli.command {
        Command::Sessions(args) => listing::sessions(&store()?, &args, out),
        Command::Show(args) => {
            let plan = args.resolve()?;
            show::run(&store()?, &plan, out)
        }
        Command::Append(args) => {
            let store = store()?;
            if io::stdin().is_terminal() {
                let _ = writeln!(io::stderr(), "annal: reading JSON lines from stdin; end with Ctrl-D");
            }
            let batch = append::read_batch(io::stdin().lock())?;
            append::run(&store, &args, batch, out)
        }
        Command::Import(args) => import::run(&store()?, &args, out),
        Command::Sync(args) => sync::run(&store()?, &args, out),
        Command::Export(args) => export::run(&store()?, &args, out),
        Command::Fork(args) => fork::run(&store()?, &args, out),
        Command::Verify(args) => verify::run(&store()?, &args, out),
        Command::Stats(args) => listing::stats(&store()?, &args, out),
        Command::History(args) => history::run(&store()?, args, out),
        Command::Reindex(args) => reindex::run(&store()?, &args, out),
        Command::Project(args) => {
            let plan = args.resolve()?;
            project::run(&store()?, &plan, out)
        }
        Command::Compact(args) => {
            let plan = args.resolve()?;
            compact::run(&store()?, &plan, out)
        }
        Command::Demo => demo::run(out),
        Command::Fleet(args) => fleet::run(&store()?, &args, out),
        // `main` runs the server before stdout is locked; the protocol cannot share it.
        Command::Mcp(_) => Err(anyhow::anyhow!("the MCP server cannot run with stdout locked")),
        Command::Ui(_) => Err(anyhow::anyhow!("the web server cannot run with stdout locked")),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        super::Cli::command().debug_assert();
    }
}
