//! The projection benchmark: planning and rendering a deterministic-v1 projection of tool-heavy
//! sessions (1K, 10K and 100K records, about 8 KB each), warm, side by side with a naive reader
//! that parses every record of the same session's JSONL file with serde_json and builds a view.
//!
//! Planning reads only the digests; rendering borrows the text of the records it shows from one
//! read transaction. Timed: `prepare_originals` (outline, plan, the reads that settle it) and
//! `render` (messages, stats, hash), and the view of a committed checkpoint. Targets are printed
//! beside the values, never asserted.

#[path = "project/naive.rs"]
mod naive;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use annal_bench::{core_count, median, scratch_dir};
use annal_engine::{Budget, CompactOptions, ProjectOptions, ProjectionStats, Sharing, Store, StoreOptions};
use annal_support::calendar::today_utc;
use annal_support::sessions::{Profile, SessionSpec};
use anyhow::{ensure, Context as _};
use clap::Parser;

const SESSION: &str = "bench";

/// Times projections and prints Markdown tables.
#[derive(Debug, Parser)]
#[command(name = "project")]
struct Args {
    /// Session sizes, in records.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    sizes: Vec<usize>,
    /// Timed runs per size; the median is reported (sizes over 50,000 records run a third).
    #[arg(long, default_value_t = 21)]
    runs: usize,
    /// Runs of the naive reader per size.
    #[arg(long, default_value_t = 3)]
    naive_runs: usize,
    /// The window W of the budget.
    #[arg(long, default_value_t = 200_000)]
    window: u32,
    /// The output ceiling O of the budget.
    #[arg(long, default_value_t = 32_000)]
    max_output: u32,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the scratch stores and JSONL files go (default: the system temp folder).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Debug)]
struct Measured {
    records: usize,
    payload_bytes: u64,
    jsonl_bytes: u64,
    plan: Duration,
    render: Duration,
    total: Duration,
    /// The fastest run: the cost without waiting behind other processes on a shared machine.
    fastest: Duration,
    view: Duration,
    first: Duration,
    naive: Duration,
    stats: ProjectionStats,
    naive_tokens: usize,
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median_of(mut values: Vec<Duration>) -> Duration {
    let mut ms: Vec<f64> = values.iter().map(|d| millis(*d)).collect();
    values.clear();
    Duration::from_secs_f64(median(&mut ms) / 1e3)
}

fn measure(args: &Args, records: usize) -> anyhow::Result<Measured> {
    let scratch = scratch_dir(args.dir.as_deref(), "project")?;
    let store = Store::open(
        scratch.path().join("annal.redb"),
        StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() },
    )?;
    let jsonl = scratch.path().join("session.jsonl");
    let mut writer = naive::JsonlWriter::create(&jsonl)?;
    // The tool-heavy profile of annal-support's session family.
    let mut session = SessionSpec { profile: Profile::ToolHeavy, seed: args.seed }.records();
    let mut payload_bytes = 0u64;
    let mut written = 0usize;
    let loading = Instant::now();
    while written < records {
        let batch: Vec<_> = session.by_ref().take((records - written).min(500)).collect();
        for (i, record) in batch.iter().enumerate() {
            payload_bytes += annal_bench::records::payload_bytes(record) as u64;
            writer.write(written + i, record)?;
        }
        written += batch.len();
        store.append(SESSION, None, batch)?;
    }
    writer.finish()?;
    eprintln!("  {records} records loaded in {:.1} s", loading.elapsed().as_secs_f64());
    let budget = Budget::new(args.window, args.max_output);
    let options = ProjectOptions::new(budget);
    let runs = if records > 50_000 { args.runs.div_ceil(3) } else { args.runs };
    let (mut plans, mut renders, mut totals) = (Vec::new(), Vec::new(), Vec::new());
    let mut stats = ProjectionStats::default();
    // The first run warms the caches and is not counted.
    for run in 0..=runs {
        let started = Instant::now();
        let snapshot = store.projection_snapshot()?;
        let prepared = snapshot.prepare_originals(SESSION, &options)?;
        let planned = started.elapsed();
        let projection = prepared.render()?;
        black_box(projection.hash);
        let total = started.elapsed();
        stats = projection.stats;
        if run > 0 {
            plans.push(planned);
            renders.push(total - planned);
            totals.push(total);
        }
    }
    // A store handle's first projection reads the session's digests (and nothing is cached).
    let path = scratch.path().join("annal.redb");
    let mut store = store;
    let mut firsts = Vec::new();
    for _ in 0..3 {
        store.close()?;
        store = Store::open(&path, StoreOptions { sharing: Sharing::Exclusive, ..StoreOptions::default() })?;
        let started = Instant::now();
        let snapshot = store.projection_snapshot()?;
        let prepared = snapshot.prepare_originals(SESSION, &options)?;
        black_box(prepared.render()?.hash);
        firsts.push(started.elapsed());
    }
    store.compact(SESSION, &CompactOptions { force: true, ..CompactOptions::new(options) })?;
    let mut views = Vec::new();
    for run in 0..=runs {
        let started = Instant::now();
        let snapshot = store.projection_snapshot()?;
        let prepared = snapshot.prepare(SESSION, &options)?;
        let projection = prepared.render()?;
        black_box(projection.hash);
        if run > 0 {
            views.push(started.elapsed());
        }
    }
    let mut naive_times = Vec::new();
    let mut naive_tokens = 0;
    for _ in 0..args.naive_runs.max(1) {
        let started = Instant::now();
        naive_tokens = naive::project(&jsonl, budget.tail_tokens as usize)?;
        naive_times.push(started.elapsed());
    }
    let jsonl_bytes = std::fs::metadata(&jsonl).context("the JSONL file")?.len();
    store.close()?;
    Ok(Measured {
        records,
        payload_bytes,
        jsonl_bytes,
        plan: median_of(plans),
        render: median_of(renders),
        fastest: totals.iter().min().copied().unwrap_or_default(),
        total: median_of(totals),
        view: median_of(views),
        first: median_of(firsts),
        naive: median_of(naive_times),
        stats,
        naive_tokens,
    })
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(!args.sizes.is_empty() && args.runs > 0, "sizes and runs must be given");
    let mut results = Vec::new();
    for &records in &args.sizes {
        eprintln!("measuring {records} records");
        results.push(measure(&args, records)?);
    }
    println!("Run on {}, {} cores; seed {}; budget W = {}, O = {} (defaults otherwise); median of {} warm runs ({} above 50,000 records), naive reader median of {}.\n",
        today_utc(), core_count(), args.seed, args.window, args.max_output, args.runs, args.runs.div_ceil(3), args.naive_runs.max(1));
    println!("| records | payload | JSONL file | annal plan | annal render | annal plan + render | fastest run | per 1,000 records | checkpoint view | first call after open | naive JSONL read + view | naive ÷ annal |");
    println!("| --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
    for m in &results {
        println!(
            "| {} | {} | {} | {:.2} ms | {:.2} ms | **{:.2} ms** | {:.2} ms | {:.3} ms | {:.2} ms | {:.2} ms | {:.0} ms | {:.0}× |",
            m.records,
            mib(m.payload_bytes),
            mib(m.jsonl_bytes),
            millis(m.plan),
            millis(m.render),
            millis(m.total),
            millis(m.fastest),
            millis(m.total) * 1_000.0 / m.records as f64,
            millis(m.view),
            millis(m.first),
            millis(m.naive),
            millis(m.naive) / millis(m.total).max(1e-9),
        );
    }
    println!("\n| records | projection tokens (history / evidence / tail) | kept: user, assistant, tail, rows | omitted: assistant in markers, tool records | naive view tokens |");
    println!("| --: | --- | --- | --- | --: |");
    for m in &results {
        let (t, k, o) = (&m.stats.tokens, &m.stats.kept, &m.stats.omitted);
        println!(
            "| {} | {} ({} / {} / {}) | {}, {}, {}, {} | {} in {}, {} | {} |",
            m.records,
            t.total,
            t.user + t.assistant + t.markers,
            t.evidence,
            t.tail,
            k.user_messages + k.user_messages_cut,
            k.assistant_outputs,
            k.tail_records,
            k.evidence_rows,
            o.assistant_outputs,
            o.markers,
            o.tool_records,
            m.naive_tokens,
        );
    }
    let at = |n: usize| results.iter().find(|m| m.records == n);
    println!("\n| target | measured | result |\n| --- | --- | --- |");
    if let Some(m) = at(10_000) {
        let ms = millis(m.total);
        println!(
            "| plan + render ≤ 5 ms warm at 10K records (median) | {ms:.2} ms | **{}** |",
            if ms <= 5.0 { "met" } else { "missed" }
        );
        let fastest = millis(m.fastest);
        println!(
            "| the same, fastest run (no waiting behind other processes) | {fastest:.2} ms | **{}** |",
            if fastest <= 5.0 { "met" } else { "missed" }
        );
        let ratio = millis(m.naive) / ms;
        println!(
            "| ≥ 10× faster than the naive reader at 10K | {ratio:.0}× | **{}** |",
            if ratio >= 10.0 { "met" } else { "missed" }
        );
    }
    for pair in results.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let growth = millis(b.total) / millis(a.total);
        let records = b.records as f64 / a.records as f64;
        println!(
            "| growth no worse than linear, {} → {} records | time ×{growth:.1} for records ×{records:.0} | **{}** |",
            a.records,
            b.records,
            if growth <= records * 1.1 { "met" } else { "missed" }
        );
    }
    Ok(())
}
