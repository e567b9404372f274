//! The append benchmark: annal against SQLite (WAL, synchronous=FULL) on the same records.
//!
//! Three scenarios, each on a fresh store and a fresh database in a scratch folder: (a) one
//! durable append per call from one thread, (b) several threads each appending one record per
//! call to its own session, (c) batches from one thread. Prints a Markdown table to stdout and
//! progress to stderr.

use std::path::{Path, PathBuf};

use annal_bench::annal_side::Annal;
use annal_bench::physical::{fdatasync_p50, writes_during};
use annal_bench::records::{generate, Workload};
use annal_bench::report::{append_markdown, AppendReport, Pair, Sizes};
use annal_bench::scenarios::{batches, concurrent, median_run, sequential, Run, System};
use annal_bench::sqlite::Sqlite;
use annal_bench::{core_count, scratch_dir};
use annal_engine::{Record, Sharing};
use annal_support::calendar::today_utc;
use anyhow::ensure;
use clap::Parser;

/// Appends the same seeded records to annal and to SQLite and prints a Markdown table.
#[derive(Debug, Parser)]
#[command(name = "append")]
struct Args {
    /// Records in the workload: loaded by scenario (c) and measured for file size.
    #[arg(long, default_value_t = 10_000)]
    records: usize,
    /// Single-record calls in scenarios (a) and (b) (default and maximum: --records).
    #[arg(long)]
    calls: Option<usize>,
    /// Appending threads in scenario (b).
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// Records per call in scenario (c).
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rounds per scenario, alternating which system goes first; each system's run with the
    /// median throughput is reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where the scratch folders go (default: the system temp folder). Point it at the disk
    /// you care about.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// annal's sharing mode: `processes` (the default: other processes may open the store) or
    /// `exclusive` (this process alone, one fsync per commit).
    #[arg(long, default_value = "processes", value_parser = ["processes", "exclusive"])]
    sharing: String,
}

/// Which scenario a run is.
#[derive(Clone, Copy, Debug)]
enum Scenario {
    Single,
    Threaded(usize),
    Batched(usize),
}

/// Runs one scenario on one system's fresh files and reports what the files hold afterwards.
fn run_annal(
    dir: &Path,
    sharing: Sharing,
    scenario: Scenario,
    records: &[Record],
) -> anyhow::Result<(Run, u64, u64)> {
    let scratch = scratch_dir(Some(dir), "annal")?;
    let annal = Annal::create(&scratch.path().join("annal.redb"), sharing)?;
    let run = measure(dir, &annal, scenario, records)?;
    let stored = annal.count()?;
    ensure!(stored == records.len() as u64, "annal holds {stored} records, expected {}", records.len());
    let stored_bytes = annal.stored_bytes()?;
    let file_bytes = annal.close()?;
    Ok((run, file_bytes, stored_bytes))
}

/// Runs `scenario` on `system`, counting the writes the disk completed meanwhile.
fn measure(dir: &Path, system: &impl System, scenario: Scenario, records: &[Record]) -> anyhow::Result<Run> {
    let (run, writes) = writes_during(dir, || match scenario {
        Scenario::Single => sequential(system, "a", batches(records, 1)),
        Scenario::Threaded(threads) => concurrent(system, "b", records, threads),
        Scenario::Batched(batch) => sequential(system, "c", batches(records, batch)),
    });
    Ok(Run { disk_writes: writes, ..run? })
}

fn run_sqlite(dir: &Path, scenario: Scenario, records: &[Record]) -> anyhow::Result<(Run, u64)> {
    let scratch = scratch_dir(Some(dir), "sqlite")?;
    let sqlite = Sqlite::create(&scratch.path().join("records.sqlite"))?;
    let run = measure(dir, &sqlite, scenario, records)?;
    let stored = sqlite.count()?;
    ensure!(stored == records.len() as u64, "SQLite holds {stored} records, expected {}", records.len());
    // Every connection is closed now, so SQLite has checkpointed its WAL into the main file.
    let bytes = sqlite.file_bytes()?;
    Ok((run, bytes))
}

/// Runs a scenario `rounds` times on each system, alternating which goes first, and keeps each
/// system's median run; file sizes are those of the first round.
fn both(
    dir: &Path,
    sharing: Sharing,
    label: &str,
    scenario: Scenario,
    records: &[Record],
    rounds: usize,
) -> anyhow::Result<(Pair, Sizes)> {
    let (mut annal_runs, mut sqlite_runs, mut sizes) = (Vec::new(), Vec::new(), None);
    for round in 0..rounds {
        let mut annal_result = None;
        let mut sqlite_result = None;
        for annal_turn in [round % 2 == 0, round % 2 != 0] {
            let started = std::time::Instant::now();
            let (system, seconds) = if annal_turn {
                let result = run_annal(dir, sharing, scenario, records)?;
                let seconds = result.0.elapsed.as_secs_f64();
                annal_result = Some(result);
                ("annal", seconds)
            } else {
                let result = run_sqlite(dir, scenario, records)?;
                let seconds = result.0.elapsed.as_secs_f64();
                sqlite_result = Some(result);
                ("SQLite", seconds)
            };
            eprintln!(
                "{label} round {}/{rounds}: {system}, {} records, {seconds:.2} s appending ({:.2} s in all)",
                round + 1,
                records.len(),
                started.elapsed().as_secs_f64()
            );
        }
        let ((annal, annal_bytes, annal_stored), (sqlite, sqlite_bytes)) =
            annal_result.zip(sqlite_result).ok_or_else(|| anyhow::anyhow!("a round ran only one system"))?;
        sizes.get_or_insert(Sizes { annal: annal_bytes, sqlite: sqlite_bytes, annal_stored });
        annal_runs.push(annal);
        sqlite_runs.push(sqlite);
    }
    let missing = || anyhow::anyhow!("no rounds ran");
    let pair = Pair {
        annal: median_run(annal_runs).ok_or_else(missing)?,
        sqlite: median_run(sqlite_runs).ok_or_else(missing)?,
    };
    Ok((pair, sizes.ok_or_else(missing)?))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(
        args.records > 0 && args.threads > 0 && args.batch > 0 && args.rounds > 0,
        "counts must be positive"
    );
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir(),
    };
    ensure!(dir.is_dir(), "{} is not a folder", dir.display());
    let records = generate(args.records, args.seed);
    let calls = args.calls.unwrap_or(args.records).clamp(1, args.records);
    let single_records = &records[..calls];

    let rounds = args.rounds;
    let fdatasync_p50 = fdatasync_p50(&dir, 500)?;
    eprintln!("4 KiB append + fdatasync: p50 {:.3} ms", fdatasync_p50.as_secs_f64() * 1e3);
    let sharing = if args.sharing == "exclusive" { Sharing::Exclusive } else { Sharing::Processes };
    eprintln!("annal sharing mode: {}", args.sharing);
    let (single, sizes_single) = both(&dir, sharing, "(a)", Scenario::Single, single_records, rounds)?;
    let (threaded, _) = both(&dir, sharing, "(b)", Scenario::Threaded(args.threads), single_records, rounds)?;
    let (batched, sizes_batched) =
        both(&dir, sharing, "(c)", Scenario::Batched(args.batch), &records, rounds)?;

    let report = AppendReport {
        date: today_utc(),
        cores: core_count(),
        seed: args.seed,
        rounds,
        workload: Workload::of(&records),
        threads: args.threads,
        batch: args.batch,
        single,
        threaded,
        batched,
        sizes_single: (calls == args.records).then_some(sizes_single),
        sizes_batched,
        fdatasync_p50,
    };
    print!("{}", append_markdown(&report));
    Ok(())
}
