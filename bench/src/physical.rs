//! The physical limit beside both systems: what one durable 4 KiB append to a plain file costs
//! on the disk the benchmark runs on, measured in the same run; and how many writes that disk
//! has completed, to count what a call costs it.

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

/// The writes the block device holding `dir` has completed since boot (the kernel's
/// `/sys/dev/block/MAJOR:MINOR/stat`, every process's), or `None` where that cannot be read
/// (another system, a file system on no block device). A durable call costs at least one; a
/// sync that commits the file system's journal costs more.
pub fn disk_writes(dir: &Path) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let (major, minor) = major_minor(std::fs::metadata(dir).ok()?.dev());
        let stat = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).ok()?;
        // Fields: reads, reads merged, sectors read, ms reading, then writes completed.
        stat.split_whitespace().nth(4)?.parse().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        None
    }
}

/// What `work` returns, and the writes the disk holding `dir` completed meanwhile (see
/// [`disk_writes`]).
pub fn writes_during<T>(dir: &Path, work: impl FnOnce() -> T) -> (T, Option<u64>) {
    let before = disk_writes(dir);
    let done = work();
    let writes = disk_writes(dir).zip(before).map(|(after, before)| after.saturating_sub(before));
    (done, writes)
}

/// A device number's major and minor parts, as Linux encodes them (glibc's `major`, `minor`).
fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::major_minor;

    #[test]
    fn device_numbers_split_as_the_kernel_encodes_them() {
        // makedev(8, 1), makedev(259, 3) and makedev(0x12345, 0x6789a) as glibc builds them.
        assert_eq!(major_minor(0x801), (8, 1));
        assert_eq!(major_minor(0x10303), (259, 3));
        assert_eq!(major_minor(0x0001_2000_6783_459a), (0x12345, 0x6789a));
    }
}
