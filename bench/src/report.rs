//! Markdown reports: the tables the binaries print, ready to paste into docs/performance.md.
//!
//! Targets are printed beside the measured values and marked met or missed; nothing asserts.

use std::fmt::Write as _;
use std::time::Duration;

use crate::records::Workload;
use crate::scenarios::Run;

/// One scenario measured on both systems.
#[derive(Clone, Debug)]
pub struct Pair {
    /// annal's run.
    pub annal: Run,
    /// SQLite's run.
    pub sqlite: Run,
}

impl Pair {
    fn throughput_ratio(&self) -> f64 {
        self.annal.throughput() / self.sqlite.throughput()
    }
}

/// File sizes after a load: annal's and SQLite's, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// The annal store file.
    pub annal: u64,
    /// The SQLite database and its side files.
    pub sqlite: u64,
    /// The keys and values annal's tables hold, by its own statistics.
    pub annal_stored: u64,
}

/// Everything the append benchmark measured.
#[derive(Clone, Debug)]
pub struct AppendReport {
    /// The run's date, `YYYY-MM-DD`.
    pub date: String,
    /// Cores available to the process.
    pub cores: usize,
    /// The workload's seed.
    pub seed: u64,
    /// Rounds per scenario; the run with the median throughput is reported.
    pub rounds: usize,
    /// The full workload (scenario c and the file sizes).
    pub workload: Workload,
    /// Threads in scenario b.
    pub threads: usize,
    /// Records per call in scenario c.
    pub batch: usize,
    /// (a) one record per call, one thread.
    pub single: Pair,
    /// (b) one record per call, several threads.
    pub threaded: Pair,
    /// (c) batches, one thread.
    pub batched: Pair,
    /// File sizes after (a), when (a) loaded the whole workload.
    pub sizes_single: Option<Sizes>,
    /// File sizes after (c).
    pub sizes_batched: Sizes,
    /// The p50 of a 4 KiB append and `fdatasync` to a plain file on the same disk, this run.
    pub fdatasync_p50: Duration,
}

pub use annal_stdx::thousands;

/// The CPU time each system's run took per call, every thread of the process counted (where
/// `/proc` tells it).
fn cpu_row(out: &mut String, scenario: &str, pair: &Pair) {
    let per_call = |run: &Run| run.cpu.map(|cpu| cpu / u32::try_from(run.calls.max(1)).unwrap_or(u32::MAX));
    if let (Some(annal), Some(sqlite)) = (per_call(&pair.annal), per_call(&pair.sqlite)) {
        let ratio = format!("{:.2}", annal.as_secs_f64() / sqlite.as_secs_f64().max(f64::MIN_POSITIVE));
        row(out, &[scenario, "CPU time per call, every thread", &ms(annal), &ms(sqlite), &ratio, "–", "–"]);
    }
}

/// The writes the disk completed per call in each system's run (every process's, so a busy
/// machine adds to both), where they were counted.
fn disk_writes_row(out: &mut String, scenario: &str, pair: &Pair) {
    let per_call = |run: &Run| run.disk_writes.map(|writes| writes as f64 / run.calls.max(1) as f64);
    if let (Some(annal), Some(sqlite)) = (per_call(&pair.annal), per_call(&pair.sqlite)) {
        let ratio = format!("{:.2}", annal / sqlite.max(f64::MIN_POSITIVE));
        let cells = [
            scenario,
            "disk writes per call",
            &format!("{annal:.2}"),
            &format!("{sqlite:.2}"),
            &ratio,
            "–",
            "–",
        ];
        row(out, &cells);
    }
}

/// A duration in milliseconds with three decimals.
pub fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}

fn rate(records_per_sec: f64) -> String {
    format!("{} rec/s", thousands(records_per_sec.round() as u64))
}

fn met(ok: bool) -> &'static str {
    if ok {
        "**met**"
    } else {
        "**missed**"
    }
}

fn row(out: &mut String, cells: &[&str]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn workload_line(r: &AppendReport) -> String {
    let w = &r.workload;
    let ordinary = w.records - w.large;
    format!(
        "Workload: {} records (seed {}), {} bytes of payload text: {} ordinary records averaging {} B \
         and {} tool outputs of 45–55 KB ({:.1}%); overall mean {} B per record.",
        thousands(w.records as u64),
        r.seed,
        thousands(w.payload_bytes as u64),
        thousands(ordinary as u64),
        w.ordinary_payload_bytes / ordinary.max(1),
        w.large,
        100.0 * w.large as f64 / w.records.max(1) as f64,
        w.payload_bytes / w.records.max(1),
    )
}

/// The append benchmark's Markdown: a heading line, the workload, the table and a legend.
pub fn append_markdown(r: &AppendReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Run on {}, {} cores; each system's median-throughput run of {} per scenario. {}",
        r.date,
        r.cores,
        if r.rounds == 1 { "1 round".to_owned() } else { format!("{} rounds", r.rounds) },
        workload_line(r)
    );
    let _ = writeln!(out);
    row(&mut out, &["scenario", "measure", "annal", "SQLite", "annal / SQLite", "target", "result"]);
    row(&mut out, &["---", "---", "--:", "--:", "--:", "---", "---"]);

    let sync = r.fdatasync_p50;
    row(
        &mut out,
        &["disk", "4 KiB append + fdatasync, p50", &ms(sync), &ms(sync), "–", "the physical limit", "–"],
    );
    let (a, b, c) = (&r.single, &r.threaded, &r.batched);
    let a_name = format!("(a) 1 thread, 1 record per call, {} calls", thousands(a.annal.calls as u64));
    let a_p50 = a.annal.p50();
    let ratio = |x: Duration, y: Duration| format!("{:.2}", x.as_secs_f64() / y.as_secs_f64());
    row(
        &mut out,
        &[
            &a_name,
            "p50 latency",
            &ms(a_p50),
            &ms(a.sqlite.p50()),
            &ratio(a_p50, a.sqlite.p50()),
            "annal p50 ≤ 1.5× fdatasync",
            met(a_p50.as_secs_f64() <= 1.5 * sync.as_secs_f64()),
        ],
    );
    let a_p99 = ratio(a.annal.p99(), a.sqlite.p99());
    row(&mut out, &["(a)", "p99 latency", &ms(a.annal.p99()), &ms(a.sqlite.p99()), &a_p99, "–", "–"]);
    let a_slowest = ratio(a.annal.slowest(), a.sqlite.slowest());
    let (annal_slowest, sqlite_slowest) = (ms(a.annal.slowest()), ms(a.sqlite.slowest()));
    row(&mut out, &["(a)", "slowest call", &annal_slowest, &sqlite_slowest, &a_slowest, "–", "–"]);
    row(
        &mut out,
        &[
            "(a)",
            "throughput",
            &rate(a.annal.throughput()),
            &rate(a.sqlite.throughput()),
            &format!("{:.2}", a.throughput_ratio()),
            "≥ SQLite's (ratio ≥ 1)",
            met(a.throughput_ratio() >= 1.0),
        ],
    );
    cpu_row(&mut out, "(a)", a);
    disk_writes_row(&mut out, "(a)", a);

    let b_name = format!(
        "(b) {} threads, 1 record per call, own session each, {} calls",
        r.threads,
        thousands(b.annal.calls as u64)
    );
    row(
        &mut out,
        &[
            &b_name,
            "throughput",
            &rate(b.annal.throughput()),
            &rate(b.sqlite.throughput()),
            &format!("{:.2}", b.throughput_ratio()),
            "≥ 3× SQLite's",
            met(b.throughput_ratio() >= 3.0),
        ],
    );
    let scale_annal = b.annal.throughput() / a.annal.throughput();
    let scale_sqlite = b.sqlite.throughput() / a.sqlite.throughput();
    row(
        &mut out,
        &[
            "(b)",
            "throughput ÷ same system's (a)",
            &format!("{scale_annal:.2}×"),
            &format!("{scale_sqlite:.2}×"),
            "–",
            "annal ≥ 5× annal's (a)",
            met(scale_annal >= 5.0),
        ],
    );
    let b_p50 = ratio(b.annal.p50(), b.sqlite.p50());
    let b_met = met(b.annal.p50().as_secs_f64() <= 4.0 * sync.as_secs_f64());
    row(
        &mut out,
        &[
            "(b)",
            "p50 latency",
            &ms(b.annal.p50()),
            &ms(b.sqlite.p50()),
            &b_p50,
            "annal p50 ≤ 4× fdatasync",
            b_met,
        ],
    );
    let b_p99 = ratio(b.annal.p99(), b.sqlite.p99());
    row(&mut out, &["(b)", "p99 latency", &ms(b.annal.p99()), &ms(b.sqlite.p99()), &b_p99, "–", "–"]);

    let c_name =
        format!("(c) 1 thread, {} records per call, {} calls", r.batch, thousands(c.annal.calls as u64));
    row(
        &mut out,
        &[
            &c_name,
            "throughput",
            &rate(c.annal.throughput()),
            &rate(c.sqlite.throughput()),
            &format!("{:.2}", c.throughput_ratio()),
            "≥ 2× SQLite's",
            met(c.throughput_ratio() >= 2.0),
        ],
    );
    let c_p50 = ratio(c.annal.p50(), c.sqlite.p50());
    row(
        &mut out,
        &["(c)", "p50 latency per call", &ms(c.annal.p50()), &ms(c.sqlite.p50()), &c_p50, "–", "–"],
    );
    cpu_row(&mut out, "(c)", c);

    let payload = r.workload.payload_bytes as f64;
    let mut size_row = |label: &str, sizes: Sizes| {
        let (x, y) = (sizes.annal as f64 / payload, sizes.sqlite as f64 / payload);
        let measure = format!("file bytes ÷ payload bytes, {label}");
        let annal = format!("{x:.2} ({} B)", thousands(sizes.annal));
        let sqlite = format!("{y:.2} ({} B)", thousands(sizes.sqlite));
        let target = if label == "after (c)" { "annal ≤ 1.0" } else { "–" };
        let result = if label == "after (c)" { met(x <= 1.0) } else { "–" };
        row(&mut out, &["size", &measure, &annal, &sqlite, &format!("{:.2}", x / y), target, result]);
    };
    size_row("after (c)", r.sizes_batched);
    if let Some(sizes) = r.sizes_single {
        size_row("after (a)", sizes);
    }
    let stored = r.sizes_batched.annal_stored;
    let stored_cell = format!("{:.2} ({} B)", stored as f64 / payload, thousands(stored));
    row(
        &mut out,
        &["size", "annal's keys + values ÷ payload bytes, after (c)", &stored_cell, "–", "–", "–", "–"],
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "annal / SQLite: above 1 means annal is faster for throughput; below 1 means annal is \
         better for latency and size. Every call is durable (fsync'd) when it returns on both sides."
    );
    out
}

/// The codec benchmark's measurements, in nanoseconds per record.
#[derive(Clone, Debug)]
pub struct CodecReport {
    /// The run's date.
    pub date: String,
    /// Cores available.
    pub cores: usize,
    /// Records per pass.
    pub records: usize,
    /// Mean archived record size in the journal, bytes.
    pub mean_bytes: u64,
    /// Passes timed; the median is reported.
    pub passes: usize,
    /// `(label, ns per record)`, the first being validated access in place.
    pub rows: Vec<(String, f64)>,
    /// Value bytes in the engine's journal and in the mirror's encoding of the same records.
    pub mirror_check: (u64, u64),
}

/// The codec benchmark's Markdown table.
pub fn codec_markdown(r: &CodecReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Run on {}, {} cores. {} records of the append workload, {} B per archived record on \
         average; median of {} passes.",
        r.date,
        r.cores,
        thousands(r.records as u64),
        thousands(r.mean_bytes),
        r.passes
    );
    let _ = writeln!(out);
    row(&mut out, &["read path", "ns / record", "÷ validated access in place"]);
    row(&mut out, &["---", "--:", "--:"]);
    let base = r.rows.first().map_or(1.0, |(_, ns)| *ns);
    for (label, ns) in &r.rows {
        row(&mut out, &[label, &format!("{ns:.0}"), &format!("{:.2}", ns / base)]);
    }
    let (engine, mirror) = r.mirror_check;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Mirror check: the engine's journal holds {} B of record values, the bench's mirror of its \
         layout encodes the same records in {} B ({}).",
        thousands(engine),
        thousands(mirror),
        if engine == mirror { "identical" } else { "DIFFERENT: the mirror is out of date" }
    );
    out
}
