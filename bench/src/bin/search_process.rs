//! The whole-process search benchmark: `annal history search` against the `sqlite3` shell on
//! FTS5 tables of the same blocks (`unicode61`, and `trigram` for identifiers), each a new
//! process per query as a user runs them, at several store sizes; every answer checked against
//! a full-scan oracle. At the largest size, library searches while another thread appends, and
//! the peak memory of a CLI search and of `annal mcp`.
//!
//! Build the CLI first: `cargo build --release -p annal-cli`, then
//! `cargo run --release -p annal-bench --bin search_process`. Targets are printed beside the
//! values, never asserted.

#[path = "search/data.rs"]
#[allow(dead_code)]
mod data;
#[path = "search/generate.rs"]
mod generate;
#[path = "search_process/library.rs"]
mod library;
#[path = "search_process/oracle.rs"]
mod oracle;
#[path = "search_process/process.rs"]
mod process;
#[path = "search_process/queries.rs"]
mod queries;
#[path = "search_process/report.rs"]
mod report;
#[path = "search_process/systems.rs"]
mod systems;

use std::path::PathBuf;
use std::process::Command;

use annal_bench::scratch_dir;
use anyhow::Context as _;
use clap::Parser;

use crate::generate::Size;
use crate::oracle::Oracle;
use crate::process::{time_together, Timed};
use crate::report::{Measured, SizeReport};
use crate::systems::{write_inputs, Annal, Fts, TOP};

/// Times `annal history search` and `sqlite3` FTS5 as whole processes; prints Markdown.
#[derive(Debug, Parser)]
#[command(name = "search_process")]
struct Args {
    /// Store sizes, in MiB of JSONL input.
    #[arg(long, value_delimiter = ',', default_value = "175,1024")]
    sizes_mib: Vec<u64>,
    /// Queries drawn per kind (each asked without and with a session filter).
    #[arg(long, default_value_t = 4)]
    per_kind: usize,
    /// Untimed runs of each command before the timed ones.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Timed runs of each command.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Rounds over the query set for the library measurement.
    #[arg(long, default_value_t = 50)]
    library_rounds: usize,
    /// Records appended from this process while `annal mcp` runs, each searched for through it.
    #[arg(long, default_value_t = 100)]
    lag_probes: usize,
    /// Seed of the generator and the query draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The annal binary (default: `annal` beside this benchmark's binary).
    #[arg(long)]
    annal: Option<PathBuf>,
    /// Another annal binary (an earlier build) to time beside it on the same input, each
    /// searching a store it imported: the before and after of a change, in one run.
    #[arg(long)]
    before: Option<PathBuf>,
    /// Where the scratch stores go (a real disk; default: the system temp folder).
    #[arg(long)]
    dir: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = match &args.annal {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("annal"),
    };
    anyhow::ensure!(
        binary.is_file(),
        "no annal binary at {}: build it first (cargo build --release -p annal-cli) or pass --annal",
        binary.display()
    );
    // Start-up alone: each program asked for its version, the least either can do.
    let mut annal_version = || version(&binary);
    let mut sqlite_version = || version(std::path::Path::new("sqlite3"));
    let startup: [Timed; 2] =
        time_together(&mut [&mut annal_version, &mut sqlite_version], args.warmup, args.runs.max(20))?
            .try_into()
            .map_err(|_| anyhow::anyhow!("two timings were asked for"))?;
    let mut reports = Vec::new();
    let largest = args.sizes_mib.iter().copied().max().unwrap_or(0);
    for &mib in &args.sizes_mib {
        let scratch = scratch_dir(args.dir.as_deref(), &format!("search-process-{mib}"))?;
        let report = measure_size(&args, &binary, scratch.path(), mib, mib == largest)?;
        eprintln!("{} MiB done", mib);
        reports.push(report);
    }
    print!("{}", report::markdown(&args_line(&args), &startup, &reports));
    Ok(())
}

fn version(program: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.arg("--version");
    command
}

fn args_line(args: &Args) -> String {
    let sizes: Vec<String> = args.sizes_mib.iter().map(u64::to_string).collect();
    let before = if args.before.is_some() { " --before ANNAL_BEFORE" } else { "" };
    format!(
        "--sizes-mib {} --per-kind {} --warmup {} --runs {} --library-rounds {} --lag-probes {} --seed {}{before}",
        sizes.join(","),
        args.per_kind,
        args.warmup,
        args.runs,
        args.library_rounds,
        args.lag_probes,
        args.seed
    )
}

fn measure_size(
    args: &Args,
    binary: &std::path::Path,
    dir: &std::path::Path,
    mib: u64,
    largest: bool,
) -> anyhow::Result<SizeReport> {
    let data = generate::generated(Size::InputBytes(mib << 20), args.seed);
    let input = dir.join("input");
    let input_bytes = write_inputs(&input, &data)?;
    let annal = Annal { binary: binary.to_path_buf(), store: dir.join("annal.redb") };
    let import_time = annal.import(&input).context("annal import")?;
    let index_bytes = library::index_bytes(&annal.store)?;
    // The earlier build searches a store it imported itself: an index it would not read as its
    // own (another schema) would otherwise be rebuilt at every switch between the two. It is
    // imported here, before the FTS5 loads, so both stores' files are as old when the queries
    // start: an index file written under two seconds before an open is checked whole again
    // (`query/src/verified.rs`), which made the earlier build's first queries cost a full
    // checksum pass each when its import ran last.
    let old = match &args.before {
        Some(binary) => {
            let old = Annal { binary: binary.clone(), store: dir.join("before.redb") };
            old.import(&input).context("annal import, the earlier build")?;
            Some(old)
        }
        None => None,
    };
    let words = Fts { file: dir.join("fts5-unicode61.db"), tokenizer: "unicode61" };
    let trigram = Fts { file: dir.join("fts5-trigram.db"), tokenizer: "trigram" };
    let load_words = words.load(&data)?;
    let load_trigram = trigram.load(&data)?;
    let queries = queries::draw(&data, args.per_kind, args.seed);
    let oracle = Oracle::scan(&data.sessions, &queries);
    let mut measured = Vec::new();
    for (n, query) in queries.iter().enumerate() {
        // Interleaved, so each system's runs meet the same moments of a noisy machine.
        let mut annal_search = || annal.search(query);
        let mut words_search = || words.search(query);
        let mut trigram_search = || trigram.search(query);
        let mut old_search = old.as_ref().map(|old| move || old.search(query));
        let mut makers: Vec<&mut dyn FnMut() -> Command> =
            vec![&mut annal_search, &mut words_search, &mut trigram_search];
        if let Some(search) = old_search.as_mut() {
            makers.push(search);
        }
        let mut timed = time_together(&mut makers, args.warmup, args.runs)?.into_iter();
        let (Some(a), Some(w), Some(t)) = (timed.next(), timed.next(), timed.next()) else {
            anyhow::bail!("three timings were asked for");
        };
        let before = match timed.next() {
            Some(timed) => {
                let overlap = oracle.overlap(n, query, &Annal::hits(&timed.stdout)?, TOP);
                Some((timed, overlap))
            }
            None => None,
        };
        let overlaps = [
            oracle.overlap(n, query, &Annal::hits(&a.stdout)?, TOP),
            oracle.overlap(n, query, &Fts::hits(&w.stdout)?, TOP),
            oracle.overlap(n, query, &Fts::hits(&t.stdout)?, TOP),
        ];
        measured.push(Measured {
            query: query.clone(),
            answers: oracle.count(n),
            timed: [a, w, t],
            overlaps,
            before,
        });
    }
    let library =
        if largest { Some(library::measure(&annal.store, &queries, args.library_rounds)?) } else { None };
    let mcp =
        if largest { Some(library::mcp(binary, &annal.store, &queries, args.lag_probes)?) } else { None };
    Ok(SizeReport {
        mib,
        input_bytes,
        text_bytes: data.text_bytes(),
        blocks: data.blocks(),
        import_time,
        index_bytes,
        store_bytes: std::fs::metadata(&annal.store)?.len(),
        fts_bytes: [words.bytes(), trigram.bytes()],
        fts_load: [load_words, load_trigram],
        measured,
        library,
        mcp,
    })
}
