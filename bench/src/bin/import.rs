//! The import benchmark: a corpus of real transcripts through annal's import pipeline, against
//! SQLite (WAL, synchronous=FULL) loading the same parsed records, in one process.
//!
//! Every system runs the same pipeline over `--repeat` copies of the corpus: read each file,
//! detect its format and parse it (shared work, timed as "parse"), make the copy distinct
//! (untimed), then load its sessions (timed as "load"). Prints a Markdown table to stdout and
//! progress to stderr.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use annal_bench::annal_side::Annal;
use annal_bench::corpus::{make_copy, parse_file, Corpus, Tally};
use annal_bench::cputime::{threads_named, CpuClock, Sched};
use annal_bench::loaders::{AnnalImporter, Loaded, Loader, SqliteLoader, CHUNK_RECORDS};
use annal_bench::sqlite::Sqlite;
use annal_bench::{core_count, scratch_dir};
use annal_engine::{Sharing, StoreOptions};
use annal_formats::detect_format;
use annal_support::calendar::today_utc;
use anyhow::{ensure, Context as _};
use clap::Parser;

/// Imports a transcript corpus into annal and loads the same records into SQLite.
#[derive(Debug, Parser)]
#[command(name = "import")]
struct Args {
    /// The corpus folder: transcripts searched recursively for .jsonl and .json files.
    #[arg(long, env = "ANNAL_CORPUS")]
    corpus: PathBuf,
    /// Copies of the corpus imported into one store, each under its own session names and
    /// entryIds.
    #[arg(long, default_value_t = 20)]
    repeat: usize,
    /// Rounds, rotating which system goes first; each system's round with the median
    /// end-to-end rate is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where the scratch folders go (default: the system temp folder).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// A system under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
            System::Sqlite => "SQLite",
        }
    }
}

/// One system's run over all copies of the corpus.
#[derive(Clone, Debug)]
struct Run {
    parse: Duration,
    load: Duration,
    tally: Tally,
    loaded: Loaded,
    /// The loading thread's CPU time while parsing and while loading.
    parse_cpu: CpuClock,
    load_cpu: CpuClock,
    /// annal only: the CPU time of the store's writer thread.
    writer_cpu: Option<Sched>,
    file_bytes: u64,
    /// The disk blocks the files occupy (a file may be sparse); `None` off Unix.
    disk_bytes: Option<u64>,
    /// annal only: bytes of keys and values in its tables, and the breakdown per table.
    stored: Option<(u64, String)>,
}

impl Run {
    fn end_to_end(&self) -> Duration {
        self.parse + self.load
    }

    /// Load time with neither the loading thread nor annal's writer thread on a CPU.
    fn off_cpu(&self) -> Option<Duration> {
        Some(self.load.saturating_sub(self.load_on_cpu()?))
    }

    /// CPU time of the load: the loading thread's and annal's writer thread's.
    fn load_on_cpu(&self) -> Option<Duration> {
        Some(self.load_cpu.total()?.on_cpu + self.writer_cpu.unwrap_or_default().on_cpu)
    }

    /// CPU time of the whole import, parse and load, every thread.
    fn on_cpu(&self) -> Option<Duration> {
        Some(self.parse_cpu.total()?.on_cpu + self.load_on_cpu()?)
    }

    fn rate(&self, time: Duration) -> f64 {
        self.tally.input_bytes as f64 / 1e6 / time.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// The pipeline of `annal import` over `repeat` copies of the corpus, loading with `loader`.
fn pipeline(corpus: &Corpus, repeat: usize, loader: &mut impl Loader) -> anyhow::Result<Run> {
    let threshold = StoreOptions::default().blob_threshold_bytes;
    let (mut parse, mut load) = (Duration::ZERO, Duration::ZERO);
    let (mut tally, mut loaded) = (Tally::default(), Loaded::default());
    let (mut parse_cpu, mut load_cpu) = (CpuClock::default(), CpuClock::default());
    for copy in 0..repeat {
        for file in &corpus.files {
            parse_cpu.start();
            let started = Instant::now();
            let mut parsed = parse_file(file)?;
            parse += started.elapsed();
            parse_cpu.stop();
            tally.add(&parsed);
            if parsed.format.is_none() {
                continue;
            }
            tally.large_payloads += make_copy(&mut parsed.sessions, copy, threshold);
            load_cpu.start();
            let started = Instant::now();
            for session in parsed.sessions {
                loader.load(session, &mut loaded)?;
            }
            load += started.elapsed();
            load_cpu.stop();
        }
    }
    Ok(Run {
        parse,
        load,
        tally,
        loaded,
        parse_cpu,
        load_cpu,
        writer_cpu: None,
        file_bytes: 0,
        disk_bytes: None,
        stored: None,
    })
}

fn run(system: System, corpus: &Corpus, repeat: usize, dir: &Path) -> anyhow::Result<Run> {
    match system {
        System::Annal(sharing) => {
            let scratch = scratch_dir(Some(dir), "import-annal")?;
            let path = scratch.path().join("annal.redb");
            let annal = Annal::create(&path, sharing)?;
            let mut run = pipeline(corpus, repeat, &mut AnnalImporter { store: annal.store() })?;
            run.writer_cpu = threads_named("annal-writer");
            let stored = annal.count()?;
            ensure!(
                stored == run.loaded.new,
                "annal holds {stored} records, its appends stored {}",
                run.loaded.new
            );
            let tables = annal.store().snapshot()?.table_sizes()?;
            let breakdown: Vec<String> =
                tables.iter().map(|t| format!("{} {} B", t.table, t.stored_bytes)).collect();
            run.stored = Some((annal.stored_bytes()?, breakdown.join(", ")));
            run.file_bytes = annal.close()?;
            run.disk_bytes = disk_bytes(&[path]);
            Ok(run)
        }
        System::Sqlite => {
            let scratch = scratch_dir(Some(dir), "import-sqlite")?;
            let sqlite = Sqlite::create(&scratch.path().join("records.sqlite"))?;
            let mut loader = SqliteLoader::open(&sqlite.files()[0])?;
            let mut run = pipeline(corpus, repeat, &mut loader)?;
            loader.close()?;
            let stored = sqlite.count()?;
            ensure!(
                stored == run.loaded.new,
                "SQLite holds {stored} rows, its inserts stored {}",
                run.loaded.new
            );
            // Every connection is closed: SQLite has checkpointed its WAL into the main file.
            run.file_bytes = sqlite.file_bytes()?;
            run.disk_bytes = disk_bytes(&sqlite.files());
            Ok(run)
        }
    }
}

/// The bytes of the disk blocks the files that exist among `paths` occupy.
#[cfg(unix)]
fn disk_bytes(paths: &[PathBuf]) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    Some(paths.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.blocks() * 512).sum())
}

#[cfg(not(unix))]
fn disk_bytes(_paths: &[PathBuf]) -> Option<u64> {
    None
}

/// Runs every system `rounds` times, rotating which goes first, and keeps each system's round
/// with the median end-to-end time.
fn measure(corpus: &Corpus, repeat: usize, rounds: usize, dir: &Path) -> anyhow::Result<Vec<Run>> {
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); System::ALL.len()];
    for round in 0..rounds {
        for turn in 0..System::ALL.len() {
            let index = (round + turn) % System::ALL.len();
            let system = System::ALL[index];
            let result = run(system, corpus, repeat, dir).with_context(|| system.label())?;
            let cpu = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
            eprintln!(
                "round {}/{rounds}: {:<17} parse {:.2} s, load {:.2} s (loader on CPU {:.2} s, queued {:.2} s; \
                 writer on CPU {:.2} s, queued {:.2} s), {:.1} MB/s end to end",
                round + 1,
                system.label(),
                result.parse.as_secs_f64(),
                result.load.as_secs_f64(),
                cpu(result.load_cpu.total().map(|s| s.on_cpu)),
                cpu(result.load_cpu.total().map(|s| s.queued)),
                cpu(result.writer_cpu.map(|s| s.on_cpu)),
                cpu(result.writer_cpu.map(|s| s.queued)),
                result.rate(result.end_to_end()),
            );
            runs[index].push(result);
        }
    }
    runs.into_iter()
        .map(|mut system_runs| {
            system_runs.sort_by_key(Run::end_to_end);
            let middle = system_runs.len() / 2;
            system_runs.into_iter().nth(middle).context("no rounds ran")
        })
        .collect()
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(args.repeat > 0 && args.rounds > 0, "--repeat and --rounds must be positive");
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    ensure!(dir.is_dir(), "{} is not a folder", dir.display());
    let corpus = Corpus::find(&args.corpus)?;
    let readable =
        corpus.files.iter().filter_map(|f| std::fs::read(f).ok()).filter(|b| detect_format(b).is_some());
    ensure!(readable.count() > 0, "no file in the corpus is a transcript annal can read");
    let runs = measure(&corpus, args.repeat, args.rounds, &dir)?;
    let first = &runs[0];
    for (system, run) in System::ALL.iter().zip(&runs) {
        ensure!(run.tally == first.tally, "{} parsed a different corpus", system.label());
        ensure!(
            run.loaded.new == first.loaded.new,
            "{} stored {} records, annal {}",
            system.label(),
            run.loaded.new,
            first.loaded.new
        );
        if let Some((_, breakdown)) = &run.stored {
            eprintln!("{}: keys + values per table: {breakdown}", system.label());
        }
    }
    print!("{}", report(&args, &corpus, &runs));
    Ok(())
}

fn ratio(value: f64) -> String {
    format!("{value:.2}")
}

fn verdict(met: bool) -> &'static str {
    if met {
        "**met**"
    } else {
        "**missed**"
    }
}

/// The Markdown report: a paragraph on the corpus and one table.
fn report(args: &Args, corpus: &Corpus, runs: &[Run]) -> String {
    let (processes, exclusive, sqlite) = (&runs[0], &runs[1], &runs[2]);
    let tally = &processes.tally;
    let per_copy = |n: u64| n / args.repeat as u64;
    let mut out = format!(
        "Run on {}, {} cores; each system's median round of {} by end-to-end time.\n\n\
         Corpus: {} `.jsonl`/`.json` files, {} B, of which {} in formats annal reads ({}; {} B: the input) and {} of no format annal reads \
         ({} B, detected and skipped); {} files with other extensions not read. Per copy: {} sessions, \
         {} records, {} lines skipped by the parsers, {} payloads over the blob threshold.\n\
         Imported {} times into one store: {:.1} MB of input ({} B), {} records stored by each system \
         ({} kept with another session), appended in chunks of {}.\n\n",
        today_utc(),
        core_count(),
        args.rounds,
        per_copy(tally.files),
        per_copy(tally.input_bytes + tally.unrecognised_bytes),
        per_copy(tally.files_recognised),
        tally.by_format.iter().map(|(name, files)| format!("{} {name}", per_copy(*files))).collect::<Vec<_>>().join(", "),
        per_copy(tally.input_bytes),
        per_copy(tally.files_unrecognised),
        per_copy(tally.unrecognised_bytes),
        corpus.other_files,
        per_copy(tally.sessions),
        per_copy(tally.records),
        per_copy(tally.skipped_lines),
        per_copy(tally.large_payloads),
        args.repeat,
        tally.input_bytes as f64 / 1e6,
        tally.input_bytes,
        processes.loaded.new,
        processes.loaded.kept,
        CHUNK_RECORDS,
    );
    out.push_str("| measure | annal (processes) | annal (exclusive) | SQLite | target | result |\n");
    out.push_str("| --- | --: | --: | --: | --- | --- |\n");
    let mut row = |measure: &str, f: &dyn Fn(&Run) -> String, target: &str, result: String| {
        let cells: Vec<String> = runs.iter().map(f).collect();
        out.push_str(&format!(
            "| {measure} | {} | {} | {} | {target} | {result} |\n",
            cells[0], cells[1], cells[2]
        ));
    };
    let none = || "–".to_owned();
    let secs = |d: Option<Duration>| d.map_or_else(none, |d| format!("{:.2} s", d.as_secs_f64()));
    let rate = |r: &Run| r.rate(r.end_to_end());
    let load_rate = |r: &Run| r.rate(r.load);
    let both = |f: &dyn Fn(&Run) -> bool| {
        format!("processes {}, exclusive {}", verdict(f(processes)), verdict(f(exclusive)))
    };
    row(
        "end to end (parse + load)",
        &|r| format!("{:.1} MB/s", rate(r)),
        "annal ≥ 50 MB/s",
        both(&|r| rate(r) >= 50.0),
    );
    let sqlite_rate = rate(sqlite);
    row(
        "end to end ÷ SQLite's",
        &|r| ratio(rate(r) / sqlite_rate),
        "annal ≥ 1.5",
        both(&|r| rate(r) >= 1.5 * sqlite_rate),
    );
    row("load only", &|r| format!("{:.1} MB/s", load_rate(r)), "–", none());
    row("load only ÷ SQLite's", &|r| ratio(load_rate(r) / load_rate(sqlite)), "–", none());
    row(
        "parse only (read, detect, parse: the same work)",
        &|r| format!("{:.1} MB/s", r.rate(r.parse)),
        "–",
        none(),
    );
    let size = |r: &Run| r.file_bytes as f64 / tally.input_bytes as f64;
    row(
        "store file bytes ÷ input bytes",
        &|r| format!("{} ({} B)", ratio(size(r)), r.file_bytes),
        "annal ≤ 1.5",
        both(&|r| size(r) <= 1.5),
    );
    row(
        "disk blocks of the store file ÷ input bytes",
        &|r| {
            r.disk_bytes
                .map_or_else(none, |b| format!("{} ({b} B)", ratio(b as f64 / tally.input_bytes as f64)))
        },
        "–",
        none(),
    );
    row(
        "keys + values ÷ input bytes",
        &|r| {
            r.stored.as_ref().map_or_else(none, |(b, _)| {
                format!("{} ({b} B)", ratio(*b as f64 / tally.input_bytes as f64))
            })
        },
        "–",
        none(),
    );
    row("time: parse", &|r| secs(Some(r.parse)), "–", none());
    row("parse: on CPU", &|r| secs(r.parse_cpu.total().map(|s| s.on_cpu)), "–", none());
    row("time: load", &|r| secs(Some(r.load)), "–", none());
    row("load: loading thread on CPU", &|r| secs(r.load_cpu.total().map(|s| s.on_cpu)), "–", none());
    row(
        "… of which entryId look-ups (annal), JSON encoding (SQLite)",
        &|r| secs(Some(r.loaded.prepare)),
        "–",
        none(),
    );
    row("load: annal's writer thread on CPU", &|r| secs(r.writer_cpu.map(|s| s.on_cpu)), "–", none());
    row("load: off CPU (disk flushes, queued behind other processes)", &|r| secs(r.off_cpu()), "–", none());
    row("CPU time in all (parse + load, every thread)", &|r| secs(r.on_cpu()), "–", none());
    let per_cpu = |r: &Run| r.on_cpu().map(|t| r.rate(t));
    row("input ÷ CPU time", &|r| per_cpu(r).map_or_else(none, |v| format!("{v:.1} MB/s")), "–", none());
    row(
        "input ÷ CPU time, ÷ SQLite's",
        &|r| per_cpu(r).zip(per_cpu(sqlite)).map_or_else(none, |(a, b)| ratio(a / b)),
        "–",
        none(),
    );
    out
}
