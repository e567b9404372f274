//! The physical limit beside both systems: what one durable 4 KiB append to a plain file costs
//! on the disk the benchmark runs on, measured in the same run.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{quantile, scratch_dir};

/// The p50 of `count` appends of 4 KiB to a new file in `dir`, each followed by `fdatasync`.
///
/// # Errors
/// If the file cannot be made, written or synced.
pub fn fdatasync_p50(dir: &Path, count: usize) -> anyhow::Result<Duration> {
    let scratch = scratch_dir(Some(dir), "fdatasync")?;
    let mut file = OpenOptions::new().create(true).append(true).open(scratch.path().join("raw"))?;
    let block = vec![0x61u8; 4096];
    let mut latencies = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        file.write_all(&block)?;
        file.sync_data()?;
        latencies.push(started.elapsed());
    }
    latencies.sort_unstable();
    Ok(quantile(&latencies, 0.5))
}
