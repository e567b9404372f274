//! The search benchmark: annal's index against SQLite FTS5 (`bm25()` + `snippet()`) and a full
//! scan of the same records as JSONL files, side by side in one run, on the same data and
//! query set: the corpus, the append workload's 10,000 records, and a generated store of 1M
//! blocks. Queries are exact identifiers, words and phrases drawn from each data set, each
//! with and without a session filter; every system returns the top 10 with snippets.
//!
//! Reported: p50/p99 latency per query class, indexing MB/s, index size relative to the text,
//! and annal's durable-to-searchable lag. Targets are printed beside the values, never asserted.

#[path = "search/data.rs"]
mod data;
#[path = "search/generate.rs"]
mod generate;
#[path = "search/systems.rs"]
mod systems;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use annal_bench::report::{ms, thousands};
use annal_bench::{core_count, quantile, scratch_dir};
use annal_support::calendar::today_utc;
use clap::Parser;

use crate::data::{Class, Dataset, Query};
use crate::systems::{AnnalSide, Fts, Scan};

/// Runs the search benchmark and prints Markdown tables.
#[derive(Debug, Parser)]
#[command(name = "search")]
struct Args {
    /// The corpus folder (real transcripts); skipped when absent.
    #[arg(long, env = "ANNAL_CORPUS")]
    corpus: Option<PathBuf>,
    /// Records of the small generated store (and of the append workload).
    #[arg(long, default_value_t = 10_000)]
    records: usize,
    /// Also run the append benchmark's records (64-word vocabulary: a stress case).
    #[arg(long)]
    append_workload: bool,
    /// Blocks of the large generated store (0 skips it).
    #[arg(long, default_value_t = 1_000_000)]
    blocks: usize,
    /// Queries drawn per class (each runs with and without a session filter).
    #[arg(long, default_value_t = 30)]
    queries: usize,
    /// Timed rounds over the query set for annal and FTS5.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Queries per class and filter the full scan runs on the large store (it reads everything).
    #[arg(long, default_value_t = 3)]
    scan_queries: usize,
    /// Single-record appends timed for the durable-to-searchable lag.
    #[arg(long, default_value_t = 300)]
    lag_appends: usize,
    /// Seed of the generators and the query draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the scratch stores go (default: the system temp folder).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Latency samples per (class, filtered) and system.
#[derive(Default)]
struct Samples {
    by_key: BTreeMap<(Class, bool), [Vec<Duration>; 3]>,
    /// Queries with at least one hit, per system, and queries run.
    answered: [usize; 3],
    asked: [usize; 3],
}

impl Samples {
    fn push(&mut self, query: &Query, system: usize, took: Duration, hits: usize) {
        self.by_key.entry((query.class, query.session.is_some())).or_default()[system].push(took);
        self.asked[system] += 1;
        self.answered[system] += usize::from(hits > 0);
    }
}

fn timed(run: impl FnOnce() -> anyhow::Result<usize>) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let hits = run()?;
    Ok((started.elapsed(), hits))
}

struct Measured {
    data_name: String,
    records: usize,
    blocks: usize,
    text_bytes: u64,
    queries: usize,
    samples: Samples,
    annal_index: (Duration, u64),
    fts_index: (Duration, u64, u64),
    lag: Vec<Duration>,
}

fn measure(data: &Dataset, args: &Args, large: bool) -> anyhow::Result<Measured> {
    let dir = scratch_dir(args.dir.as_deref(), "search")?;
    eprintln!("[{}] loading annal …", data.name);
    let annal = AnnalSide::load(dir.path(), data)?;
    eprintln!("[{}] loading FTS5 …", data.name);
    let fts = Fts::load(dir.path(), data)?;
    eprintln!("[{}] writing JSONL …", data.name);
    let scan = Scan::write(dir.path(), data)?;
    let queries = data::queries(data, args.queries, args.seed);
    let mut samples = Samples::default();
    // Warm-up: every query once on both indexes, untimed.
    for query in &queries {
        let (mine, theirs) = (annal.search(query)?, fts.search(query)?);
        if (mine == 0) != (theirs == 0) {
            eprintln!("[{}] annal {mine} hits, FTS5 {theirs}: {query:?}", data.name);
        }
    }
    eprintln!("[{}] {} queries × {} rounds …", data.name, queries.len(), args.rounds);
    for round in 0..args.rounds {
        for query in &queries {
            // Alternate which system goes first, so caches favour neither.
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for system in order {
                let (took, hits) =
                    if system == 0 { timed(|| annal.search(query))? } else { timed(|| fts.search(query))? };
                samples.push(query, system, took, hits);
            }
        }
    }
    eprintln!("[{}] full scans …", data.name);
    let mut scanned: BTreeMap<(Class, bool), usize> = BTreeMap::new();
    for query in &queries {
        let count = scanned.entry((query.class, query.session.is_some())).or_default();
        if large && *count >= args.scan_queries {
            continue;
        }
        *count += 1;
        let (took, hits) = timed(|| scan.search(query))?;
        samples.push(query, 2, took, hits);
    }
    eprintln!("[{}] lag …", data.name);
    let mut lag = annal.lag(args.lag_appends, Duration::from_millis(20))?;
    lag.sort();
    let measured = Measured {
        data_name: data.name.clone(),
        records: data.records(),
        blocks: data.blocks(),
        text_bytes: data.text_bytes(),
        queries: queries.len(),
        samples,
        annal_index: (annal.index_time, annal.index_bytes),
        fts_index: (fts.index_time, fts.index_bytes, fts.file_bytes),
        lag,
    };
    annal.index.close()?;
    Ok(measured)
}

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64().max(1e-9)
}

fn met(ok: bool) -> &'static str {
    if ok {
        "**met**"
    } else {
        "**missed**"
    }
}

fn report(m: &Measured, p50_target: Option<Duration>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#### {}: {} records, {} blocks, {:.1} MB of text; {} queries\n",
        m.data_name,
        thousands(m.records as u64),
        thousands(m.blocks as u64),
        m.text_bytes as f64 / 1e6,
        m.queries
    );
    let _ = writeln!(out, "| query | session filter | annal p50 | annal p99 | FTS5 p50 | FTS5 p99 | JSONL scan p50 | JSONL scan p99 | FTS5 ÷ annal (p50) | scan ÷ annal (p50) |");
    let _ = writeln!(out, "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |");
    let mut all: [Vec<Duration>; 3] = Default::default();
    let mut rows: Vec<(String, String, [Vec<Duration>; 3])> = Vec::new();
    for ((class, filtered), samples) in &m.samples.by_key {
        for (system, list) in samples.iter().enumerate() {
            all[system].extend(list);
        }
        rows.push((
            class.label().into(),
            if *filtered { "yes".into() } else { "no".into() },
            samples.clone(),
        ));
    }
    rows.push(("**all**".into(), "both".into(), all));
    let mut p50_all = [Duration::ZERO; 3];
    for (label, filter, mut samples) in rows {
        for list in &mut samples {
            list.sort();
        }
        let p = |system: usize, q: f64| quantile(&samples[system], q);
        let ratio = |system: usize| {
            let base = p(0, 0.5).as_secs_f64();
            if samples[system].is_empty() || base == 0.0 {
                "–".into()
            } else {
                format!("{:.1}×", p(system, 0.5).as_secs_f64() / base)
            }
        };
        let cell =
            |system: usize, q: f64| if samples[system].is_empty() { "–".into() } else { ms(p(system, q)) };
        if label == "**all**" {
            p50_all = [p(0, 0.5), p(1, 0.5), p(2, 0.5)];
        }
        let _ = writeln!(
            out,
            "| {label} | {filter} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(0, 0.5),
            cell(0, 0.99),
            cell(1, 0.5),
            cell(1, 0.99),
            cell(2, 0.5),
            cell(2, 0.99),
            ratio(1),
            ratio(2)
        );
    }
    let s = &m.samples;
    let _ = writeln!(
        out,
        "\nQueries with at least one hit: annal {}/{}, FTS5 {}/{}, JSONL scan {}/{}.\n",
        s.answered[0], s.asked[0], s.answered[1], s.asked[1], s.answered[2], s.asked[2]
    );
    let (annal_time, annal_bytes) = m.annal_index;
    let (fts_time, fts_bytes, fts_file) = m.fts_index;
    let text = m.text_bytes.max(1) as f64;
    let lag_p50 = quantile(&m.lag, 0.5);
    let lag_p99 = quantile(&m.lag, 0.99);
    let speedup = p50_all[1].as_secs_f64() / p50_all[0].as_secs_f64().max(1e-12);
    let _ = writeln!(out, "| measure | annal | FTS5 | target | result |");
    let _ = writeln!(out, "| --- | --: | --: | --- | --- |");
    if let Some(target) = p50_target {
        let _ = writeln!(
            out,
            "| p50, all queries | {} | {} | annal ≤ {} | {} |",
            ms(p50_all[0]),
            ms(p50_all[1]),
            ms(target),
            met(p50_all[0] <= target)
        );
    }
    let _ = writeln!(
        out,
        "| p50 speed-up over FTS5, all queries | {speedup:.1}× | – | ≥ 5× | {} |",
        met(speedup >= 5.0)
    );
    let _ = writeln!(
        out,
        "| indexing throughput (text MB/s) | {:.1} | {:.1} | – | – |",
        mb_per_s(m.text_bytes, annal_time),
        mb_per_s(m.text_bytes, fts_time)
    );
    let _ = writeln!(
        out,
        "| index size ÷ text size | {:.2} ({} B) | {:.2} ({} B index; file with its text copy {:.2}) | annal ≤ 0.5 | {} |",
        annal_bytes as f64 / text,
        thousands(annal_bytes),
        fts_bytes as f64 / text,
        thousands(fts_bytes),
        fts_file as f64 / text,
        met(annal_bytes as f64 / text <= 0.5)
    );
    let _ = writeln!(
        out,
        "| durable-to-searchable lag, {} appends every 20 ms | p50 {} / p99 {} | – (same transaction) | p99 ≤ 1 s | {} |",
        m.lag.len(),
        ms(lag_p50),
        ms(lag_p99),
        met(lag_p99 <= Duration::from_secs(1))
    );
    out
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut sets: Vec<(Dataset, bool, Option<Duration>)> = Vec::new();
    match &args.corpus {
        Some(folder) => sets.push((data::corpus(folder)?, false, None)),
        None => eprintln!("no --corpus (or ANNAL_CORPUS): the corpus is skipped"),
    }
    let small = generate::Size::Records(args.records);
    sets.push((generate::generated(small, args.seed), false, Some(Duration::from_micros(500))));
    if args.append_workload {
        sets.push((data::append_workload(args.records, args.seed), false, Some(Duration::from_micros(500))));
    }
    if args.blocks > 0 {
        sets.push((
            generate::generated(generate::Size::Blocks(args.blocks), args.seed),
            true,
            Some(Duration::from_millis(1)),
        ));
    }
    println!(
        "Run on {}, {} cores; seed {}; top {} with snippets; {} rounds for annal and FTS5, one pass for the JSONL scan{}.\n",
        today_utc(),
        core_count(),
        args.seed,
        systems::TOP,
        args.rounds,
        if args.blocks > 0 { format!(" ({} queries per class and filter on the large store)", args.scan_queries) } else { String::new() }
    );
    for (data, large, target) in &sets {
        let measured = measure(data, &args, *large)?;
        println!("{}", report(&measured, *target));
    }
    Ok(())
}
