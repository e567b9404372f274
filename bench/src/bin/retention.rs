//! The retention exam (DESIGN §8): regenerates docs/evaluation.md from seeded sessions driven
//! through annal's projections and other agents' compaction rules. The runtime is printed on
//! stdout only, so the document stays byte-identical across runs.

use std::path::PathBuf;
use std::time::Instant;

use annal_bench::retention::{report, run, ExamConfig};
use clap::Parser;

/// Runs the retention exam and writes its report.
#[derive(Debug, Parser)]
#[command(name = "retention")]
struct Args {
    /// Where the report goes.
    #[arg(long, default_value = "docs/evaluation.md")]
    out: PathBuf,
    /// The seed of the session generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the constants sweep.
    #[arg(long)]
    no_sweep: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Session length as a multiple of the trigger (windows up to 200K).
    #[arg(long, default_value_t = 3.0)]
    length: f64,
    /// Only these windows (labels such as 32K, 1M; default all). A partial run is for trying
    /// things out: the published report is the default run.
    #[arg(long, value_delimiter = ',')]
    windows: Vec<String>,
    /// Only these profiles (chat, records, coding, mixed; default all).
    #[arg(long, value_delimiter = ',')]
    profiles: Vec<String>,
    /// Session length as a multiple of the trigger at 1M.
    #[arg(long, default_value_t = 1.25)]
    length_1m: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let config = ExamConfig {
        seed: args.seed,
        sweep: !args.no_sweep,
        threads: args.threads,
        length_multiple: args.length,
        length_multiple_1m: args.length_1m,
        ..ExamConfig::default()
    };
    let mut config = config;
    if !args.windows.is_empty() {
        config.windows.retain(|w| args.windows.iter().any(|a| a == w.label));
    }
    if !args.profiles.is_empty() {
        config.profiles.retain(|p| args.profiles.iter().any(|a| a == p.label()));
    }
    let mut exam = run(&config)?;
    let note = corpus_note(&mut exam, &config)?;
    let text = report::render(&exam, &note);
    std::fs::write(&args.out, text)?;
    println!("wrote {} in {:.1} s", args.out.display(), started.elapsed().as_secs_f64());
    Ok(())
}

#[cfg(feature = "corpus")]
fn corpus_note(exam: &mut annal_bench::retention::Exam, config: &ExamConfig) -> anyhow::Result<String> {
    annal_bench::retention::corpus::run_into(exam, config)
}

#[cfg(not(feature = "corpus"))]
fn corpus_note(_exam: &mut annal_bench::retention::Exam, _config: &ExamConfig) -> anyhow::Result<String> {
    Ok("real corpus: not in this file (the default command runs the synthetic set only, so anyone can reproduce it); \
        `ANNAL_CORPUS=<corpus folder> cargo run --release -p annal-bench --features corpus --bin retention` adds a \
        section with every corpus session at every window."
        .into())
}
