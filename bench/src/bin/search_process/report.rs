//! The benchmark's Markdown: sizes and load times, latency per kind of query beside each
//! system's top-10 overlap with the oracle, every query in detail, scaling across sizes, the
//! library's latency while appending, and peak memory.

use std::fmt::Write as _;
use std::time::Duration;

use annal_bench::quantile;
use annal_bench::report::thousands;

use crate::library::Library;
use crate::process::Timed;
use crate::queries::{Kind, ProcessQuery};

const SYSTEMS: [&str; 3] = ["annal", "FTS5 unicode61", "FTS5 trigram"];

/// One query on the three systems.
pub(crate) struct Measured {
    pub(crate) query: ProcessQuery,
    pub(crate) answers: usize,
    pub(crate) timed: [Timed; 3],
    pub(crate) overlaps: [Option<f64>; 3],
    /// The earlier annal build (`--before`), with its overlap.
    pub(crate) before: Option<(Timed, Option<f64>)>,
}

/// Everything measured at one size.
pub(crate) struct SizeReport {
    pub(crate) mib: u64,
    pub(crate) input_bytes: u64,
    pub(crate) text_bytes: u64,
    pub(crate) blocks: usize,
    pub(crate) import_time: Duration,
    pub(crate) index_bytes: u64,
    pub(crate) store_bytes: u64,
    pub(crate) fts_bytes: [u64; 2],
    pub(crate) fts_load: [Duration; 2],
    pub(crate) measured: Vec<Measured>,
    pub(crate) library: Option<Library>,
    pub(crate) mcp: Option<crate::library::Mcp>,
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

fn sorted(mut runs: Vec<Duration>) -> Vec<Duration> {
    runs.sort();
    runs
}

fn overlap_mean(values: impl Iterator<Item = Option<f64>>) -> String {
    let known: Vec<f64> = values.flatten().collect();
    if known.is_empty() {
        return "–".into();
    }
    format!("{:.2}", known.iter().sum::<f64>() / known.len() as f64)
}

/// Every run of `system` on the queries of `kind`, sorted.
fn runs_of(report: &SizeReport, kind: Option<Kind>, system: usize) -> Vec<Duration> {
    sorted(
        report
            .measured
            .iter()
            .filter(|m| kind.is_none_or(|k| m.query.kind == k))
            .flat_map(|m| m.timed[system].runs.iter().copied())
            .collect(),
    )
}

fn summary(out: &mut String, report: &SizeReport) {
    let text_mib = report.text_bytes as f64 / f64::from(1 << 20);
    let _ = writeln!(
        out,
        "\n### {} MiB of input: {} blocks, {} of text\n\n| | annal | FTS5 unicode61 | FTS5 trigram |\n|---|--:|--:|--:|",
        report.mib,
        thousands(report.blocks as u64),
        mib(report.text_bytes)
    );
    let rate =
        |d: Duration| format!("{:.1} s ({:.1} MiB/s of text)", d.as_secs_f64(), text_mib / d.as_secs_f64());
    let _ = writeln!(
        out,
        "| load (annal: `annal import`, journal and index) | {} | {} | {} |",
        rate(report.import_time),
        rate(report.fts_load[0]),
        rate(report.fts_load[1])
    );
    let ratio = |bytes: u64| format!("{} ({:.2}× text)", mib(bytes), bytes as f64 / report.text_bytes as f64);
    let _ = writeln!(
        out,
        "| on disk | store {} + index {} | {} | {} |",
        mib(report.store_bytes),
        ratio(report.index_bytes),
        ratio(report.fts_bytes[0]),
        ratio(report.fts_bytes[1])
    );
    let _ = writeln!(out, "| JSONL input | {} | | |", mib(report.input_bytes));
}

/// Every run of the earlier build on the queries of `kind` (all kinds for `None`), sorted.
fn before_runs(report: &SizeReport, kind: Option<Kind>) -> Vec<Duration> {
    sorted(
        report
            .measured
            .iter()
            .filter(|m| kind.is_none_or(|k| m.query.kind == k))
            .filter_map(|m| m.before.as_ref())
            .flat_map(|(timed, _)| timed.runs.iter().copied())
            .collect(),
    )
}

/// Before and after, per kind of query, when an earlier build was timed.
fn before_after(out: &mut String, report: &SizeReport) {
    if report.measured.iter().all(|m| m.before.is_none()) {
        return;
    }
    let _ = writeln!(
        out,
        "\nBefore and after (`--before`: the earlier build on the same store and index):\n\n| query kind | before p50 (min–max) | overlap | after p50 (min–max) | overlap | after ÷ before |\n|---|--:|--:|--:|--:|--:|"
    );
    let range = |runs: &[Duration]| {
        format!(
            "{} ms ({}–{})",
            ms(quantile(runs, 0.5)),
            ms(runs.first().copied().unwrap_or_default()),
            ms(runs.last().copied().unwrap_or_default())
        )
    };
    for kind in Kind::ALL {
        let (old, new) = (before_runs(report, Some(kind)), runs_of(report, Some(kind), 0));
        let of_kind = || report.measured.iter().filter(|m| m.query.kind == kind);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.2} |",
            kind.label(),
            range(&old),
            overlap_mean(of_kind().map(|m| m.before.as_ref().and_then(|b| b.1))),
            range(&new),
            overlap_mean(of_kind().map(|m| m.overlaps[0])),
            quantile(&new, 0.5).as_secs_f64() / quantile(&old, 0.5).as_secs_f64().max(1e-9)
        );
    }
}

fn kinds(out: &mut String, report: &SizeReport) {
    let _ = writeln!(
        out,
        "\n| query kind | annal p50 (min–max) | top-10 overlap | unicode61 p50 (min–max) | overlap | trigram p50 (min–max) | overlap | annal ÷ unicode61 | annal ÷ trigram |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for kind in Kind::ALL {
        let mut row = format!("| {} |", kind.label());
        let mut p50 = [Duration::ZERO; 3];
        for (system, slot) in p50.iter_mut().enumerate() {
            let runs = runs_of(report, Some(kind), system);
            *slot = quantile(&runs, 0.5);
            let (min, max) =
                (runs.first().copied().unwrap_or_default(), runs.last().copied().unwrap_or_default());
            let overlap = overlap_mean(
                report.measured.iter().filter(|m| m.query.kind == kind).map(|m| m.overlaps[system]),
            );
            let _ = write!(row, " {} ms ({}–{}) | {overlap} |", ms(*slot), ms(min), ms(max));
        }
        for fts in [1, 2] {
            let _ = write!(row, " {:.2} |", p50[0].as_secs_f64() / p50[fts].as_secs_f64().max(1e-9));
        }
        let _ = writeln!(out, "{row}");
    }
}

fn details(out: &mut String, report: &SizeReport) {
    let _ = writeln!(
        out,
        "\n<details><summary>every query at {} MiB</summary>\n\n| query | answers | annal p50 | overlap | unicode61 p50 | overlap | trigram p50 | overlap |\n|---|--:|--:|--:|--:|--:|--:|--:|",
        report.mib
    );
    for m in &report.measured {
        let mut row =
            format!("| {} {} | {} |", m.query.kind.label(), m.query.shown(), thousands(m.answers as u64));
        for system in 0..3 {
            let runs = sorted(m.timed[system].runs.clone());
            let overlap = m.overlaps[system].map_or("–".into(), |o| format!("{o:.2}"));
            let _ = write!(row, " {} ms | {overlap} |", ms(quantile(&runs, 0.5)));
        }
        let _ = writeln!(out, "{row}");
    }
    let _ = writeln!(out, "\n</details>");
}

/// The report for every size.
pub(crate) fn markdown(command_args: &str, startup: &[Timed; 2], reports: &[SizeReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Search as whole processes\n\n`cargo build --release -p annal-cli && cargo run --release -p annal-bench --bin search_process -- {command_args}`\n\n\
         Each query is a new process, as a user runs it: `annal --db STORE history search --json --limit 10 Q` \
         against `sqlite3 -readonly -json DB \"SELECT session, entry, snippet(…) … WHERE blocks MATCH '…' ORDER BY rank LIMIT 10\"`. \
         Both print the top 10 with a snippet. A session filter is part of the MATCH expression, since the session is an indexed column. \
         Times are wall clock from spawn to exit, after warm-up runs, with a warm page cache; the runs of the commands compared on a query (and of the two `--version`s) are interleaved, each round starting at the next command. \
         The overlap is the share of each top 10 that a full scan confirms answers the query, over min(10, answers there are).\n"
    );
    let p50 = |timed: &Timed| quantile(&timed.runs, 0.5);
    let _ = writeln!(
        out,
        "\nStart-up alone (`annal --version` and `sqlite3 --version`, {} runs each): annal p50 {} ms, \
         sqlite3 p50 {} ms.",
        startup[0].runs.len(),
        ms(p50(&startup[0])),
        ms(p50(&startup[1]))
    );
    for report in reports {
        summary(&mut out, report);
        kinds(&mut out, report);
        before_after(&mut out, report);
        details(&mut out, report);
    }
    let _ = writeln!(out, "\n### Scaling: `annal history search` p50 over all queries\n\n| input | annal p50 | ÷ smallest | before p50 | unicode61 p50 | trigram p50 |\n|--:|--:|--:|--:|--:|--:|");
    let first = reports.first().map(|r| quantile(&runs_of(r, None, 0), 0.5)).unwrap_or_default();
    for report in reports {
        let p = |system| quantile(&runs_of(report, None, system), 0.5);
        let old = before_runs(report, None);
        let old = if old.is_empty() { "–".to_owned() } else { format!("{} ms", ms(quantile(&old, 0.5))) };
        let _ = writeln!(
            out,
            "| {} MiB | {} ms | {:.2}× | {old} | {} ms | {} ms |",
            report.mib,
            ms(p(0)),
            p(0).as_secs_f64() / first.as_secs_f64().max(1e-9),
            ms(p(1)),
            ms(p(2))
        );
    }
    let _ = writeln!(out, "\nTargets: p50 ≤ 10 ms at ≥ 1 GB, and within 1.5× of the smallest store.");
    if let Some(largest) = reports.iter().max_by_key(|r| r.mib) {
        memory(&mut out, largest);
    }
    out
}

fn memory(out: &mut String, report: &SizeReport) {
    if let Some(library) = &report.library {
        let runs = sorted(library.latencies.clone());
        let _ = writeln!(
            out,
            "\n### Library search at {} MiB while another thread appends\n\n{} searches through `SearchIndex::search` (top 10 with snippets), while a second thread appended {} records, one every 10 ms: \
             p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms (targets: p50 ≤ 1 ms, p99 ≤ 10 ms).",
            report.mib,
            thousands(runs.len() as u64),
            thousands(library.appends as u64),
            quantile(&runs, 0.5).as_secs_f64() * 1e3,
            quantile(&runs, 0.99).as_secs_f64() * 1e3,
            runs.last().copied().unwrap_or_default().as_secs_f64() * 1e3
        );
    }
    let peak =
        |system: usize| report.measured.iter().map(|m| m.timed[system].peak_rss_bytes).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n### Peak resident memory at {} MiB\n\n| process | peak RSS |\n|---|--:|",
        report.mib
    );
    for (system, name) in SYSTEMS.iter().enumerate() {
        let _ = writeln!(out, "| one search, {name} | {} |", mib(peak(system)));
    }
    if let Some(mcp) = &report.mcp {
        let _ = writeln!(
            out,
            "| `annal mcp` answering every query of the set, then the probes below | {} |",
            mib(mcp.peak_rss_bytes)
        );
        let lags = sorted(mcp.lags.clone());
        let _ = writeln!(
            out,
            "\n### Another process's appends, found through `annal mcp`\n\n{} records appended by this process while `annal mcp` ran on the {} MiB store, each searched for through the server at once: found after p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms from the append's return (target: p99 ≤ 1 s).",
            lags.len(),
            report.mib,
            quantile(&lags, 0.5).as_secs_f64() * 1e3,
            quantile(&lags, 0.99).as_secs_f64() * 1e3,
            lags.last().copied().unwrap_or_default().as_secs_f64() * 1e3
        );
    }
}
