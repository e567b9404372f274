//! The ingest benchmark: transcripts from files to search-ready, annal against SQLite with FTS5.
//!
//! Both sides start from nothing and end when a search finds everything: annal imports each
//! file with the calls `annal import` makes, waits for its index and closes (both sharing
//! modes); SQLite (WAL, `synchronous=FULL`, one transaction per file) stores a row per record
//! and indexes the same text in a contentless FTS5 table. Both parse with annal's own parsers.
//! Afterwards the same words are searched on both and the sessions found compared. Prints a
//! Markdown report to stdout.
//!
//! `cargo run --release -p annal-bench --bin ingest -- --input FOLDER [--generate-mib 1024]`

#[path = "ingest/sides.rs"]
mod sides;

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use annal::Sharing;
use annal_bench::records::to_json;
use annal_bench::scratch_dir;
use annal_support::calendar::today_utc;
use annal_support::sessions::{Profile, SessionSpec};
use anyhow::Context as _;
use clap::Parser;

use sides::Outcome;

/// Imports transcripts into annal until searchable, and into SQLite with FTS5.
#[derive(Debug, Parser)]
#[command(name = "ingest")]
struct Args {
    /// Folders of transcripts, each measured as a set of its own (default: the corpus).
    #[arg(long = "input", env = "ANNAL_CORPUS", value_delimiter = ',')]
    inputs: Vec<PathBuf>,
    /// Also measure this many MiB of generated sessions (annal JSONL; most records small, most
    /// bytes in large tool outputs), written to the scratch folder first.
    #[arg(long, default_value_t = 0)]
    generate_mib: u64,
    /// Rounds, rotating which system goes first; the median round of each is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Words searched on both sides afterwards, their sessions compared.
    #[arg(long, default_value_t = 50)]
    queries: usize,
    /// Where the scratch folders go (default: the system temp folder; use a real disk).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum System {
    Annal(Sharing),
    Sqlite,
}

impl System {
    const ALL: [System; 3] =
        [System::Annal(Sharing::Processes), System::Annal(Sharing::Exclusive), System::Sqlite];

    fn label(self) -> &'static str {
        match self {
            System::Annal(Sharing::Exclusive) => "annal (exclusive)",
            System::Annal(_) => "annal (processes)",
            System::Sqlite => "SQLite + FTS5",
        }
    }
}

/// Writes whole generated sessions of 1,000 records as annal JSONL until `bytes` are written.
fn generate(folder: &Path, bytes: u64) -> anyhow::Result<()> {
    std::fs::create_dir_all(folder)?;
    let (mut written, mut seed) = (0, 0);
    while written < bytes {
        let session = format!("generated-{seed:04}");
        let path = folder.join(format!("{session}.jsonl"));
        let mut out = BufWriter::new(std::fs::File::create(&path)?);
        let header = serde_json::json!({"format": "annal-jsonl", "version": 1, "session": session});
        writeln!(out, "{header}")?;
        for record in (SessionSpec { profile: Profile::Agent, seed }).records().take(1_000) {
            writeln!(out, "{}", to_json(&record))?;
        }
        out.flush()?;
        written += std::fs::metadata(&path)?.len();
        seed += 1;
    }
    Ok(())
}

/// Where a system's round keeps its store (the queries afterwards read round 0's).
fn store_path(system: System, scratch: &Path, round: usize) -> PathBuf {
    let folder = scratch.join(format!("round-{round}-{}", system.label().replace([' ', '(', ')', '+'], "")));
    match system {
        System::Annal(_) => folder.join("store.redb"),
        System::Sqlite => folder.join("records.sqlite"),
    }
}

fn run(system: System, files: &[PathBuf], scratch: &Path, round: usize) -> anyhow::Result<Outcome> {
    let path = store_path(system, scratch, round);
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    match system {
        System::Annal(sharing) => sides::annal(files, &path, sharing),
        System::Sqlite => sides::sqlite(files, &path),
    }
}

fn mb_per_s(bytes: u64, outcome: &Outcome) -> f64 {
    bytes as f64 / 1e6 / outcome.elapsed.as_secs_f64()
}

/// Measures one set: rounds of every system, the median of each, the queries compared.
fn measure(name: &str, folder: &Path, args: &Args, scratch: &Path) -> anyhow::Result<()> {
    let (files, left) = sides::readable_files(folder)?;
    let input: u64 = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
    eprintln!("{name}: {} files, {:.1} MB", files.len(), input as f64 / 1e6);
    let set = scratch.join(name);
    let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); System::ALL.len()];
    for round in 0..args.rounds {
        for turn in 0..System::ALL.len() {
            let which = (turn + round) % System::ALL.len();
            let outcome = run(System::ALL[which], &files, &set, round)?;
            eprintln!(
                "  round {round}: {} {:.2} s",
                System::ALL[which].label(),
                outcome.elapsed.as_secs_f64()
            );
            runs[which].push(outcome);
        }
    }
    let records = runs[2][0].records;
    for (system, outcomes) in System::ALL.iter().zip(&runs) {
        anyhow::ensure!(
            outcomes.iter().all(|o| o.records == records),
            "{} stored {} records, SQLite {records}",
            system.label(),
            outcomes[0].records
        );
    }
    let words = sides::pick_words(&files, args.queries)?;
    let differ = sides::compare(
        &words,
        &store_path(System::Annal(Sharing::Processes), &set, 0),
        &store_path(System::Sqlite, &set, 0),
    )?;
    let medians: Vec<Outcome> = runs
        .into_iter()
        .map(|mut outcomes| {
            outcomes.sort_by_key(|o| o.elapsed);
            outcomes[outcomes.len() / 2].clone()
        })
        .collect();
    report(name, &files, &left, input, records, &medians, &words, &differ);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn report(
    name: &str,
    files: &[PathBuf],
    left: &[PathBuf],
    input: u64,
    records: u64,
    medians: &[Outcome],
    words: &[String],
    differ: &[String],
) {
    println!("### {name}\n");
    println!(
        "{} files annal reads, {input} B ({:.1} MB), {records} records on each side; {} other files \
         (databases, formats annal does not read) left out of both.\n",
        files.len(),
        input as f64 / 1e6,
        left.len()
    );
    let sqlite = &medians[2];
    println!("| measure | annal (processes) | annal (exclusive) | SQLite + FTS5 |\n|---|--:|--:|--:|");
    let row = |label: &str, cell: &dyn Fn(&Outcome) -> String| {
        println!("| {label} | {} | {} | {} |", cell(&medians[0]), cell(&medians[1]), cell(&medians[2]));
    };
    row("search-ready, seconds", &|o| format!("{:.2}", o.elapsed.as_secs_f64()));
    row("input ÷ time", &|o| format!("{:.1} MB/s", mb_per_s(input, o)));
    row("÷ SQLite's rate", &|o| format!("{:.2}", sqlite.elapsed.as_secs_f64() / o.elapsed.as_secs_f64()));
    row("file length ÷ input", &|o| format!("{:.2}", o.file_bytes as f64 / input as f64));
    row("disk blocks ÷ input", &|o| format!("{:.2}", o.disk_bytes as f64 / input as f64));
    row("index segments", &|o| if o.index_bytes > 0 { o.segments.to_string() } else { "–".into() });
    row("index bytes ÷ input", &|o| {
        if o.index_bytes > 0 {
            format!("{:.2}", o.index_bytes as f64 / input as f64)
        } else {
            "–".into()
        }
    });
    println!(
        "\n{} words searched on both (from `{}` to `{}`): {} found the same sessions on both.",
        words.len(),
        words.first().map_or("", String::as_str),
        words.last().map_or("", String::as_str),
        words.len() - differ.len()
    );
    for line in differ {
        println!("- differ: {line}");
    }
    println!();
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.rounds > 0 && args.queries > 0, "--rounds and --queries must be at least 1");
    anyhow::ensure!(
        !args.inputs.is_empty() || args.generate_mib > 0,
        "no --input folder and nothing to generate"
    );
    let scratch = scratch_dir(args.dir.as_deref(), "ingest")?;
    println!("## Search-ready import\n");
    println!(
        "Run on {}, {} cores; each system's median round of {} by time.\n",
        today_utc(),
        annal_bench::core_count(),
        args.rounds
    );
    for (n, folder) in args.inputs.iter().enumerate() {
        let name = format!("input-{n}");
        println!(
            "Input {n}: `{}`.\n",
            folder.file_name().map_or_else(String::new, |f| f.to_string_lossy().into_owned())
        );
        measure(&name, folder, &args, scratch.path())?;
    }
    if args.generate_mib > 0 {
        let folder = scratch.path().join("generated-input");
        eprintln!("writing {} MiB of generated sessions…", args.generate_mib);
        generate(&folder, args.generate_mib << 20)?;
        measure("generated", &folder, &args, scratch.path())?;
    }
    scratch.close().context("cannot remove the scratch folder")?;
    Ok(())
}
