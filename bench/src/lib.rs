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
pub mod records;
pub mod report;
pub mod retention;
pub mod scenarios;
pub mod sqlite;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub fn today_utc() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    format!("{year:04}-{month:02}-{day:02}")
}

/// Converts days since 1970-01-01 to a (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
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
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn nearest_rank_quantiles() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&sorted, 0.5), Duration::from_millis(50));
        assert_eq!(quantile(&sorted, 0.99), Duration::from_millis(99));
        assert_eq!(quantile(&sorted[..1], 0.99), Duration::from_millis(1));
    }
}
