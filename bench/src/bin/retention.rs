//! The retention exam (docs/design.md, "Evaluation"): regenerates docs/evaluation.md from
//! seeded sessions and the real corpus (the folder named by `ANNAL_CORPUS`) driven through
//! annal's projections and other agents' compaction rules. The runtime is printed on stdout
//! only, so the document stays byte-identical across runs.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use annal_bench::retention::{corpus, report, run, ExamConfig};
use clap::Parser;

/// Runs the retention exam and writes its report.
#[derive(Debug, Parser)]
#[command(name = "retention")]
struct Args {
    /// Where the report goes.
    #[arg(long, default_value = "docs/evaluation.md")]
    out: PathBuf,
    /// Skip the real corpus (no `ANNAL_CORPUS` needed): a quick try, not the published file.
    #[arg(long)]
    synthetic_only: bool,
    /// The report seeds (default 1,2,3). Other seeds are a try, not the published file.
    #[arg(long, value_delimiter = ',')]
    seeds: Vec<u64>,
    /// Skip the constants sweep.
    #[arg(long)]
    no_sweep: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Open book as a search engine alone would answer: no contender's search leaves out what
    /// its final request carries (the comparison for that signal, not the published file).
    #[arg(long)]
    show_seen: bool,
    /// Open book with each question carrying, as `context`, the ask of the turn that stated its
    /// fact. That points at the answer's neighbourhood (an oracle no real caller has), so it is an
    /// upper bound for the signal, not the published file.
    #[arg(long)]
    oracle_context: bool,
    /// Only these windows (labels such as 32K, 1M; default all). A partial run is for trying
    /// things out: the published report is the default run.
    #[arg(long, value_delimiter = ',')]
    windows: Vec<String>,
    /// Only these profiles (chat, records, coding, mixed, paste, resumed; default all).
    #[arg(long, value_delimiter = ',')]
    profiles: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match exam(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("retention: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn exam(args: &Args) -> anyhow::Result<()> {
    let started = Instant::now();
    // Checked first, so a missing corpus fails at once rather than after the synthetic set.
    let folder = if args.synthetic_only { None } else { Some(corpus::folder()?) };
    let mut config = ExamConfig {
        sweep: !args.no_sweep,
        threads: args.threads,
        hide_seen: !args.show_seen,
        context: args.oracle_context,
        ..ExamConfig::default()
    };
    if !args.seeds.is_empty() {
        config.seeds.clone_from(&args.seeds);
    }
    if !args.windows.is_empty() {
        config.windows.retain(|w| args.windows.iter().any(|a| a == w.label));
    }
    if !args.profiles.is_empty() {
        config.profiles.retain(|p| args.profiles.iter().any(|a| a == p.label()));
    }
    let mut exam = run(&config)?;
    println!("synthetic set and sweep: {:.1} s", started.elapsed().as_secs_f64());
    if let Some(folder) = folder {
        let corpus_started = Instant::now();
        exam.corpus = Some(corpus::run(&config, &folder)?);
        println!("real corpus: {:.1} s", corpus_started.elapsed().as_secs_f64());
    }
    std::fs::write(&args.out, report::render(&exam))?;
    println!("wrote {} in {:.1} s", args.out.display(), started.elapsed().as_secs_f64());
    Ok(())
}
