//! Timing a whole process, as hyperfine does: warm-up runs, then timed runs, each from spawn
//! to exit; and the child's peak resident memory, measured by GNU time in one more run.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

/// One finished run: wall time and what it printed.
pub(crate) struct Run {
    pub(crate) took: Duration,
    pub(crate) stdout: Vec<u8>,
}

/// `command` run under GNU time (`/usr/bin/time`, Debian's `time` package), which reports the
/// child's own peak resident memory into `report`. Measured in a separate run: a child spawned
/// straight from this process would carry this process's peak (Linux keeps the peak of the
/// address space a child starts from across `exec`).
pub(crate) fn under_time(command: &Command, report: &std::path::Path) -> Command {
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped.arg("-f").arg("%M").arg("-o").arg(report).arg(command.get_program()).args(command.get_args());
    wrapped
}

/// The peak resident memory GNU time wrote into `report` (it writes kilobytes).
pub(crate) fn peak_rss(report: &std::path::Path) -> anyhow::Result<u64> {
    let text =
        std::fs::read_to_string(report).with_context(|| format!("no report in {}", report.display()))?;
    let kilobytes: u64 =
        text.trim().lines().last().unwrap_or_default().trim().parse().context("GNU time's report")?;
    Ok(kilobytes * 1024)
}

/// Runs `command` once to its end (its output read as it comes, stdin closed); a non-zero
/// exit is an error with what it printed.
pub(crate) fn run_once(command: &mut Command) -> anyhow::Result<Run> {
    let started = Instant::now();
    let output = command.output().with_context(|| format!("cannot start {command:?}"))?;
    let took = started.elapsed();
    if !output.status.success() {
        bail!(
            "{command:?} exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(Run { took, stdout: output.stdout })
}

/// Timed runs of one command after `warmup` untimed ones: every duration, the last run's
/// output, and the peak memory of one more run under GNU time.
pub(crate) struct Timed {
    pub(crate) runs: Vec<Duration>,
    pub(crate) peak_rss_bytes: u64,
    pub(crate) stdout: Vec<u8>,
}

/// Timed runs of several commands, interleaved: each takes its warm-up runs, then the timed
/// runs go round the commands, each round starting at the next command, so the machine's
/// drifts and the order's own effects fall on every command alike; then one more run of each
/// under GNU time. One [`Timed`] per command, in the order given.
pub(crate) fn time_together(
    makers: &mut [&mut dyn FnMut() -> Command],
    warmup: usize,
    runs: usize,
) -> anyhow::Result<Vec<Timed>> {
    for make in makers.iter_mut() {
        for _ in 0..warmup {
            run_once(&mut make())?;
        }
    }
    let count = makers.len();
    let mut timed: Vec<Timed> = (0..count)
        .map(|_| Timed { runs: Vec::with_capacity(runs), peak_rss_bytes: 0, stdout: Vec::new() })
        .collect();
    for round in 0..runs.max(1) {
        for step in 0..count {
            let which = (round + step) % count;
            let run = run_once(&mut (makers[which])())?;
            timed[which].runs.push(run.took);
            timed[which].stdout = run.stdout;
        }
    }
    for (make, timed) in makers.iter_mut().zip(&mut timed) {
        let report = tempfile::NamedTempFile::new()?;
        run_once(&mut under_time(&make(), report.path()))?;
        timed.peak_rss_bytes = peak_rss(report.path())?;
    }
    Ok(timed)
}
