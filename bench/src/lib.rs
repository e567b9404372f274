//! annal-bench: shared pieces of the benchmark binaries (workload, systems under test, timing).
//!
//! The binaries in `src/bin` run annal side by side with what a user would pick instead, in
//! one process on the same records, and print Markdown tables for docs/performance.md. Nothing
//! here asserts a timing: targets are printed beside the measured values.

pub mod annal_side;
pub mod corpus;
pub mod cputime;
pub mod loaders;
pub mod mirror;
pub mod physical;
pub mod records;
pub mod report;
pub mod retention;
pub mod scenarios;
pub mod sqlite;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

/// A fresh scratch folder for one scenario, inside `parent` (or the system temp folder), so
/// the files being measured live on the filesystem the caller cares about. Removed on drop.
///
/// # Errors
/// If the folder cannot be created.
pub fn scratch_dir(parent: Option<&Path>, label: &str) -> anyhow::Result<tempfile::TempDir> {
    let prefix = format!("annal-bench-{label}-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    let dir = match parent {
        Some(parent) => builder.tempdir_in(parent),
        None => builder.tempdir(),
    };
    dir.with_context(|| format!("cannot create a scratch folder for {label}"))
}

/// The total length of the files that exist among `paths` (a database and its side files).
///
/// # Errors
/// If a file exists but cannot be inspected.
pub fn files_bytes(paths: &[PathBuf]) -> anyhow::Result<u64> {
    let mut total = 0;
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) => total += meta.len(),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err).with_context(|| format!("cannot stat {}", path.display())),
        }
    }
    Ok(total)
}

/// The number of cores this process may use.
pub fn core_count() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The `q`-quantile (0..=1) of `sorted` by the nearest-rank rule; zero when empty.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of `values`; zero when empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&sorted, 0.5), Duration::from_millis(50));
        assert_eq!(quantile(&sorted, 0.99), Duration::from_millis(99));
        assert_eq!(quantile(&sorted[..1], 0.99), Duration::from_millis(1));
    }
}
