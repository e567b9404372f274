//! What each design for a store shared by several processes would cost one append, from its
//! parts measured on this disk in one run: the raw sync, a file lock, the shared log's append
//! (lock, catch up, write a frame, sync, unlock) alone and with a second process appending, a
//! round trip to another process over a Unix socket, and annal's appends (shared and opened
//! alone) beside SQLite's. Prints a Markdown table to stdout and progress to stderr.
//!
//! The log append here is the protocol with a frame of the size a one-record group logs; it is
//! the floor of that design, without the work of deciding the append (which both designs pay).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use annal_bench::annal_side::Annal;
use annal_bench::physical::fdatasync_p50;
use annal_bench::records::generate;
use annal_bench::scenarios::{batches, sequential, Run};
use annal_bench::sqlite::Sqlite;
use annal_bench::{quantile, scratch_dir};
use annal_engine::Sharing;
use annal_support::calendar::today_utc;
use clap::Parser;

/// Measures the parts of each shared-store design and prints a Markdown table.
#[derive(Debug, Parser)]
#[command(name = "sharing")]
struct Args {
    /// Calls per measurement.
    #[arg(long, default_value_t = 2_000)]
    calls: usize,
    /// Bytes of one log frame: what a group of one ordinary record logs.
    #[arg(long, default_value_t = 2_048)]
    frame_bytes: usize,
    /// Where the scratch folders go (default: the system temp folder; use a real disk).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Internal: run as the second appender on this log until its stdin closes.
    #[arg(long, hide = true)]
    child_log: Option<PathBuf>,
    /// Internal: echo requests on standard input and output.
    #[arg(long, hide = true)]
    child_echo: bool,
}

/// The p50 and p99 of a set of latencies.
struct Latency {
    p50: Duration,
    p99: Duration,
}

fn latency(mut samples: Vec<Duration>) -> Latency {
    samples.sort_unstable();
    Latency { p50: quantile(&samples, 0.5), p99: quantile(&samples, 0.99) }
}

fn timed(calls: usize, mut call: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Latency> {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call()?;
        samples.push(started.elapsed());
    }
    Ok(latency(samples))
}

/// A log file zero-filled to its capacity, as the store's log is made, so a write never grows it.
fn make_log(path: &Path, capacity: u64) -> anyhow::Result<File> {
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
    file.set_len(capacity)?;
    file.write_all_at(&vec![0u8; capacity as usize], 0)?;
    file.sync_all()?;
    Ok(file)
}

/// One append by the shared log's protocol: the exclusive lock; the tail word, which says where
/// the frames end (what another process wrote since is read from there); the frame; its sync;
/// the tail word for the next appender; the unlock.
fn log_append(file: &File, frame: &[u8], capacity: u64) -> anyhow::Result<()> {
    file.lock()?;
    let mut tail = [0u8; 8];
    file.read_exact_at(&mut tail, 0)?;
    let mut end = u64::from_le_bytes(tail).max(4096);
    if end + frame.len() as u64 > capacity {
        end = 4096;
    }
    file.write_all_at(frame, end)?;
    file.sync_data()?;
    file.write_all_at(&(end + frame.len() as u64).to_le_bytes(), 0)?;
    file.unlock()?;
    Ok(())
}

fn child_log(path: &Path, frame_bytes: usize) -> anyhow::Result<()> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    let capacity = file.metadata()?.len();
    let frame = vec![0x62u8; frame_bytes];
    // Appends until the parent closes our standard input (checked without blocking each time).
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read(&mut [0u8; 1]);
        let _ = done_tx.send(());
    });
    let mut appended = 0u64;
    while done_rx.try_recv().is_err() {
        log_append(&file, &frame, capacity)?;
        appended += 1;
    }
    println!("{appended}");
    Ok(())
}

fn child_echo() -> anyhow::Result<()> {
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut len = [0u8; 4];
    while input.read_exact(&mut len).is_ok() {
        let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
        input.read_exact(&mut body)?;
        output.write_all(&len)?;
        output.write_all(&body)?;
        output.flush()?;
    }
    Ok(())
}

fn spawn(args: &[&str]) -> anyhow::Result<Child> {
    let exe = std::env::current_exe()?;
    Ok(Command::new(exe).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?)
}

/// A request of `bytes` to another process and its answer, over a Unix socket pair (the child
/// echoes through its standard streams, which the socket is).
fn round_trips(calls: usize, bytes: usize) -> anyhow::Result<Latency> {
    let (mut ours, theirs) = UnixStream::pair()?;
    let exe = std::env::current_exe()?;
    let theirs_out = theirs.try_clone()?;
    let mut child = Command::new(exe)
        .arg("--child-echo")
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
        .spawn()?;
    let mut request = (bytes as u32).to_le_bytes().to_vec();
    request.extend(std::iter::repeat_n(0x63u8, bytes));
    let mut answer = vec![0u8; request.len()];
    let result = timed(calls, || {
        ours.write_all(&request)?;
        ours.read_exact(&mut answer)?;
        Ok(())
    });
    drop(ours);
    child.wait()?;
    result
}

fn append_run(run: &Run) -> Latency {
    latency(run.latencies.clone())
}

fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(log) = &args.child_log {
        return child_log(log, args.frame_bytes);
    }
    if args.child_echo {
        return child_echo();
    }
    let scratch = scratch_dir(args.dir.as_deref(), "sharing")?;
    let dir = scratch.path();
    let calls = args.calls;

    let disk = fdatasync_p50(dir, calls)?;
    eprintln!("4 KiB append + fdatasync: p50 {}", ms(disk));
    let lock_file = File::create(dir.join("lock"))?;
    let lock = timed(calls, || Ok(lock_file.lock().and_then(|()| lock_file.unlock())?))?;
    eprintln!("lock + unlock: p50 {}", ms(lock.p50));

    let capacity = 64 << 20;
    let log_path = dir.join("shared.log");
    let log = make_log(&log_path, capacity)?;
    let frame = vec![0x61u8; args.frame_bytes];
    let alone = timed(calls, || log_append(&log, &frame, capacity))?;
    eprintln!("log append, one process: p50 {}", ms(alone.p50));
    let log_arg = log_path.to_string_lossy().into_owned();
    let mut child = spawn(&["--child-log", &log_arg, "--frame-bytes", &args.frame_bytes.to_string()])?;
    let contended_started = Instant::now();
    let contended = timed(calls, || log_append(&log, &frame, capacity))?;
    let contended_secs = contended_started.elapsed().as_secs_f64();
    drop(child.stdin.take());
    let mut out = String::new();
    child.stdout.take().map(|mut s| s.read_to_string(&mut out)).transpose()?;
    child.wait()?;
    let theirs: f64 = out.trim().parse().unwrap_or(0.0);
    let both_per_sec = (calls as f64 + theirs) / contended_secs;
    eprintln!("log append, two processes: p50 {}, {both_per_sec:.0} appends/s together", ms(contended.p50));

    let trip = round_trips(calls, args.frame_bytes)?;
    eprintln!("round trip to another process: p50 {}", ms(trip.p50));

    let records = generate(calls, 1);
    let mut appends = Vec::new();
    for (label, sharing) in [("shared", Sharing::Processes), ("opened alone", Sharing::Exclusive)] {
        let folder = scratch_dir(Some(dir), "annal")?;
        let annal = Annal::create(&folder.path().join("annal.redb"), sharing)?;
        let run = sequential(&annal, "a", batches(&records, 1))?;
        annal.close()?;
        eprintln!("annal append, {label}: p50 {}", ms(run.p50()));
        appends.push((label, append_run(&run)));
    }
    let folder = scratch_dir(Some(dir), "sqlite")?;
    let sqlite = Sqlite::create(&folder.path().join("records.sqlite"))?;
    let sqlite_run = append_run(&sequential(&sqlite, "a", batches(&records, 1))?);
    eprintln!("SQLite append: p50 {}", ms(sqlite_run.p50));

    println!("Run on {}, {calls} calls each, frames of {} bytes.\n", today_utc(), args.frame_bytes);
    println!("| what | p50 | p99 | ÷ fdatasync p50 |\n|---|--:|--:|--:|");
    let row = |what: &str, l: &Latency| {
        println!(
            "| {what} | {} | {} | {:.2} |",
            ms(l.p50),
            ms(l.p99),
            l.p50.as_secs_f64() / disk.as_secs_f64()
        );
    };
    println!("| 4 KiB append + fdatasync | {} | | 1.00 |", ms(disk));
    row("file lock + unlock", &lock);
    row("shared log append (lock, tail, frame, fdatasync, unlock), one process", &alone);
    row("the same while a second process appends to the log", &contended);
    row(&format!("round trip of {} bytes to another process (Unix socket)", args.frame_bytes), &trip);
    for (label, l) in &appends {
        row(&format!("annal append of one record, {label}"), l);
    }
    row("SQLite append of one record (WAL, synchronous=FULL)", &sqlite_run);
    println!("\nTwo processes appending to the shared log together: {both_per_sec:.0} appends/s.");
    Ok(())
}
