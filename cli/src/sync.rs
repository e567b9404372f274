//! `annal sync`: capture every session the machine's agents write. One pass reads what changed
//! since the last sync; `--watch` keeps doing it as the agents write; `--list` shows where each
//! agent was looked for; `--install-service` writes a user service that runs `--watch`.

mod service;
mod watch;

use std::io::Write;
use std::path::PathBuf;

use annal::error::ErrorKind;
use annal::sync::{Agent, Environment, SourceReport, SyncOptions, SyncReport};
use annal::Annal;
use anyhow::bail;
use clap::Args;
use serde_json::{json, Value};

use crate::failure;
use crate::output::{self, write_json_line, Align, Out, Table};
use crate::store::StoreLocation;

#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// Read only these agents (comma-separated names; see --list)
    #[arg(long, value_name = "AGENTS", value_delimiter = ',')]
    only: Vec<String>,
    /// Read every agent but these
    #[arg(long, value_name = "AGENTS", value_delimiter = ',')]
    exclude: Vec<String>,
    /// A project folder to search for per-project sessions (aider, Crush); remembered by the store
    #[arg(long = "path", value_name = "DIR")]
    paths: Vec<PathBuf>,
    /// Show each agent, where it was looked for and what is there, without reading anything
    #[arg(long, conflicts_with_all = ["watch", "install_service"])]
    list: bool,
    /// Keep syncing as the agents write (file-system events, and a rescan every --rescan-secs)
    #[arg(long)]
    watch: bool,
    /// Seconds between rescans while watching (a fallback for missed events)
    #[arg(long, value_name = "SECONDS", default_value_t = 60, requires = "watch")]
    rescan_secs: u64,
    /// Print the user service (systemd on Linux, launchd on macOS) that runs `sync --watch`,
    /// then write it when confirmed (or with --yes)
    #[arg(long, conflicts_with = "watch")]
    install_service: bool,
    /// Write the service without asking
    #[arg(long, requires = "install_service")]
    yes: bool,
    /// One JSON object per source (and per pass with --watch)
    #[arg(long)]
    json: bool,
    /// After each pass, publish what is new to a fleet (comma-separated server URLs); with
    /// --watch, a fleet that is away is tried again at the next pass
    #[arg(long, value_name = "URLS", conflicts_with_all = ["list", "install_service"])]
    pub(crate) publish: Option<String>,
    #[command(flatten)]
    pub(crate) connection: crate::store::Connection,
}

impl SyncArgs {
    /// The agents chosen by --only and --exclude; an unknown name is an error naming the known.
    fn agents(&self) -> anyhow::Result<Vec<Agent>> {
        let parse = |names: &[String]| -> anyhow::Result<Vec<Agent>> {
            names
                .iter()
                .map(|name| {
                    Agent::parse(name.trim()).ok_or_else(|| {
                        let known: Vec<_> = Agent::ALL.iter().map(|a| a.name()).collect();
                        anyhow::anyhow!("unknown agent {name:?}; known: {}", known.join(", "))
                    })
                })
                .collect()
        };
        let only = parse(&self.only)?;
        let exclude = parse(&self.exclude)?;
        let base = if only.is_empty() { Agent::ALL.to_vec() } else { only };
        let chosen: Vec<_> = base.into_iter().filter(|a| !exclude.contains(a)).collect();
        if chosen.is_empty() {
            bail!("--only and --exclude leave no agent to read");
        }
        Ok(chosen)
    }

    pub(crate) fn options(&self) -> anyhow::Result<SyncOptions> {
        for path in &self.paths {
            if !path.is_dir() {
                bail!("--path {}: not a folder", path.display());
            }
        }
        Ok(SyncOptions {
            agents: self.agents()?,
            environment: Environment::from_process(),
            projects: self.paths.clone(),
        })
    }
}

pub(crate) fn run(location: &StoreLocation, args: &SyncArgs, out: &mut Out) -> anyhow::Result<()> {
    let options = args.options()?;
    if args.install_service {
        return service::install(location, args, out);
    }
    let store = location.open_or_create()?;
    if args.list {
        let sources = store.survey(&options)?;
        return write_list(&sources, args.json, out);
    }
    if args.watch {
        return watch::run(location, &store, &options, args, out);
    }
    let report = pass(location, &store, &options)?;
    write_report(&report, args.json, false, out)?;
    if let Some(urls) = &args.publish {
        crate::store::Relay::new(urls, &args.connection)
            .step(&store, false)
            .map_err(|line| failure::said(ErrorKind::Io, format!("sync stored everything, but {line}")))?;
    }
    let problems: usize = report.sources.iter().map(|s| s.problems.len()).sum();
    if problems > 0 {
        bail!(
            "{} could not be read (see above); everything else is stored",
            output::plural(problems as u64, "source file")
        );
    }
    Ok(())
}

/// One sync pass, with the search index brought up to date after it.
pub(crate) fn pass(
    location: &StoreLocation,
    store: &Annal,
    options: &SyncOptions,
) -> anyhow::Result<SyncReport> {
    // Opened first, the index follows the journal on its own thread while the pass stores
    // records, rather than starting when the pass ends. An index that cannot be opened costs
    // the pass nothing; the wait below names it.
    let _ = store.index_status();
    let report = store.sync(options)?;
    if report.sources.iter().any(|s| s.records_new > 0) {
        if let Err(err) = crate::store::catch_up(store, location, None) {
            eprintln!("annal: {err:#}; the records are stored, searches index them");
        }
    }
    Ok(report)
}

fn source_json(source: &SourceReport) -> Value {
    json!({
        "source": source.agent.name(),
        "found": source.found(),
        "locations": source.locations.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "lookedIn": source.looked_in.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "installed": source.installed.as_ref().map(|p| p.display().to_string()),
        "units": source.units,
        "notReadable": source.agent.not_readable().map(|why| json!({"sessions": source.not_readable, "why": why})),
        "unitsRead": source.units_read,
        "unitsUnsettled": source.units_unsettled,
        "bytesRead": source.bytes_read,
        "sessionsChanged": source.sessions_changed,
        "recordsNew": source.records_new,
        "recordsPresent": source.records_present,
        "recordsRevised": source.records_revised,
        "skipped": source.skipped,
        "problems": source.problems,
    })
}

/// One line per source: what was found and what was stored. Problems and skipped lines go to
/// stderr, one line each. `changed_only` leaves out sources where nothing happened (a watch).
pub(crate) fn write_report(
    report: &SyncReport,
    json: bool,
    changed_only: bool,
    out: &mut Out,
) -> anyhow::Result<()> {
    for source in &report.sources {
        let quiet = source.units_read == 0 && source.problems.is_empty();
        if changed_only && quiet {
            continue;
        }
        for line in source.skipped.iter().chain(&source.problems) {
            eprintln!("annal: {}: {}", source.agent.name(), output::one_line(line));
        }
        if json {
            write_json_line(out, &source_json(source))?;
        } else {
            writeln!(out, "{:<9} {}", source.agent.name(), status(source))?;
        }
    }
    out.flush()?;
    Ok(())
}

fn status(source: &SourceReport) -> String {
    if !source.found() {
        let places: Vec<_> = source.looked_in.iter().map(|p| p.display().to_string()).collect();
        return match (places.is_empty(), &source.installed) {
            (true, _) => "not found (give project folders with --path)".to_owned(),
            (false, Some(home)) => {
                format!("not found: installed in {}, no sessions in {}", home.display(), places.join(", "))
            }
            (false, None) => format!("not found (looked in {})", places.join(", ")),
        };
    }
    if let Some(why) = source.agent.not_readable() {
        return format!("{} found, not readable: {why}", output::plural(source.not_readable, "session"));
    }
    let mut line =
        format!("{} · {} read", output::plural(source.units, "source"), output::count(source.units_read));
    if source.records_new > 0 {
        line += &format!(
            " · +{} in {}",
            output::plural(source.records_new, "record"),
            output::plural(source.sessions_changed, "session")
        );
    } else {
        line += " · up to date";
    }
    if source.records_revised > 0 {
        line += &format!(" · {} revised", output::count(source.records_revised));
    }
    if !source.problems.is_empty() {
        line += &format!(" · {} unreadable", output::count(source.problems.len() as u64));
    }
    line
}

fn write_list(sources: &[SourceReport], json: bool, out: &mut Out) -> anyhow::Result<()> {
    if json {
        for source in sources {
            write_json_line(out, &source_json(source))?;
        }
        return Ok(());
    }
    let mut table = Table::new(&[
        ("SOURCE", Align::Left),
        ("AGENT", Align::Left),
        ("FOUND", Align::Right),
        ("WHERE", Align::Left),
    ]);
    for source in sources {
        let count = source.units + source.not_readable;
        let found = if source.found() { output::count(count) } else { "-".to_owned() };
        let places = if source.found() { &source.locations } else { &source.looked_in };
        let mut places: Vec<_> = places.iter().map(|p| p.display().to_string()).collect();
        if places.is_empty() {
            places.push("(project folders given with --path)".to_owned());
        }
        // Installed, but its sessions are not where it keeps them by default (none yet, or a
        // folder moved by a variable this process does not see).
        if let Some(home) = &source.installed {
            places[0] = format!("installed in {}, no sessions in {}", home.display(), places[0]);
        }
        if let Some(why) = source.agent.not_readable() {
            places.push(format!("not readable: {why}"));
        }
        table.row(vec![
            source.agent.name().to_owned(),
            source.agent.title().to_owned(),
            found,
            places.join(", "),
        ]);
    }
    table.write(out, "")?;
    for source in sources {
        for problem in &source.problems {
            eprintln!("annal: {}: {}", source.agent.name(), output::one_line(problem));
        }
    }
    Ok(())
}
