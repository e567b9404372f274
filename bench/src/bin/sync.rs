//! The capture benchmark: `annal sync` as whole processes over a home folder laid out as the
//! agents lay out their sessions (copies of the corpus's real transcripts), against `annal
//! import` of the same folders, the way a user captured sessions before sync existed.
//!
//! Measured: a first sync (every file new; the search index up to date when it exits), a second
//! (nothing changed), the delay from an append to a live transcript until another process's
//! `annal history search` finds it while `annal sync --watch` runs, and the watch's CPU and
//! memory while the agents are idle. Prints a Markdown report to stdout.
//!
//! `cargo build --release -p annal-cli && ANNAL_CORPUS=<corpus folder> cargo run --release -p annal-bench --bin sync`

#[path = "sync/fixture.rs"]
mod fixture;
#[path = "sync/process.rs"]
mod process;

use std::path::PathBuf;
use std::time::Instant;

use annal_bench::scratch_dir;
use anyhow::Context as _;
use clap::Parser;

use process::Annal;

/// Captures a home folder of agent sessions with `annal sync`, and with `annal import`.
#[derive(Debug, Parser)]
#[command(name = "sync")]
struct Args {
    /// The corpus folder whose transcripts are copied into the home folder.
    #[arg(long, env = "ANNAL_CORPUS")]
    corpus: PathBuf,
    /// How many MiB of transcripts the home folder holds.
    #[arg(long, default_value_t = 1024)]
    size_mib: u64,
    /// Appends timed while watching.
    #[arg(long, default_value_t = 50)]
    appends: usize,
    /// Seconds the watch is measured idle.
    #[arg(long, default_value_t = 30)]
    idle_secs: u64,
    /// The annal binary (default: the one built beside this benchmark).
    #[arg(long)]
    annal: Option<PathBuf>,
    /// Where the scratch folders go (default: the system temp folder; use a real disk).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = match &args.annal {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("annal"),
    };
    anyhow::ensure!(
        binary.is_file(),
        "no annal binary at {} (cargo build --release -p annal-cli)",
        binary.display()
    );
    let scratch = scratch_dir(args.scratch.as_deref(), "sync")?;
    let home = scratch.path().join("home");
    eprintln!("writing {} MiB of transcripts…", args.size_mib);
    let written = fixture::build(&args.corpus, &home, args.size_mib << 20)?;
    let mib = written.bytes as f64 / f64::from(1 << 20);
    println!("# Capturing sessions: `annal sync`\n");
    println!(
        "{} files, {mib:.0} MiB (copies of the corpus's Claude Code, Codex, Gemini CLI and aider transcripts, \
         each under its own ids), in a home folder laid out as those agents lay out theirs. Whole processes, \
         each timed from start to exit; the search index is up to date when each exits.\n",
        written.files
    );
    println!("| run | seconds | MiB/s | records |\n|---|--:|--:|--:|");
    let projects = written.projects.display().to_string();
    let sync_store = Annal::new(&binary, &home, scratch.path().join("sync.redb"));
    let first = sync_store.timed(&["sync", "--path", &projects])?;
    let records = sync_store.records()?;
    println!("| `annal sync`, first | {:.1} | {:.1} | {records} |", first, mib / first);
    let second = sync_store.timed(&["sync"])?;
    println!("| `annal sync`, nothing changed | {second:.2} | | |");
    let import_store = Annal::new(&binary, &home, scratch.path().join("import.redb"));
    let folders = [".claude/projects", ".codex/sessions", ".gemini/tmp", "code"]
        .map(|f| home.join(f).display().to_string());
    let mut import_args = vec!["import"];
    import_args.extend(folders.iter().map(String::as_str));
    let import = import_store.timed(&import_args)?;
    let imported = import_store.records()?;
    println!("| `annal import` of the four folders | {import:.1} | {:.1} | {imported} |", mib / import);
    anyhow::ensure!(records == imported, "sync stored {records} records, import {imported}");
    println!("\nBoth stored the same records. Target for the first sync: 50 MiB/s.\n");

    let started = Instant::now();
    let watch = sync_store.watch()?;
    eprintln!("watch started in {:.1} s", started.elapsed().as_secs_f64());
    let delays = watch.append_and_search(&home, args.appends)?;
    let idle = watch.idle(args.idle_secs)?;
    drop(watch);
    let pick = |q: f64| delays[((delays.len() - 1) as f64 * q).round() as usize];
    println!("## `annal sync --watch`\n");
    println!(
        "{} appends to a live Claude Code transcript, each found by another process's `annal history search` \
         (polled every 20 ms): p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms (target p99 under 2 s).\n",
        delays.len(),
        pick(0.5),
        pick(0.99),
        delays[delays.len() - 1]
    );
    println!(
        "Idle for {} s over the same home folder: {:.2}% of a core, {:.1} MiB resident (peak {:.1} MiB) \
         (target under 1% and 50 MB).",
        args.idle_secs, idle.cpu_percent, idle.rss_mib, idle.peak_mib
    );
    scratch.close().context("cannot remove the scratch folder")?;
    Ok(())
}
