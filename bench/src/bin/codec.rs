//! The codec benchmark: reading archived records in place at alignment 1 versus copying them
//! into an aligned buffer first, per record, next to the engine's whole public read path.
//!
//! redb hands out value bytes at alignment 1. The engine builds rkyv with its `unaligned`
//! format and validates (`rkyv::access`) directly on those bytes; the alternative is to copy
//! each value into an aligned buffer before validating. This measures what that copy costs
//! relative to validated access, on the append benchmark's records laid out at odd addresses.

use std::hint::black_box;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use annal_bench::annal_side::{read_session, Annal};
use annal_bench::mirror::{access, encode, stored, touch};
use annal_bench::records::generate;
use annal_bench::report::{codec_markdown, CodecReport};
use annal_bench::scenarios::{batches, sequential};
use annal_bench::{core_count, median, scratch_dir};
use annal_engine::StoreOptions;
use annal_support::calendar::today_utc;
use anyhow::ensure;
use clap::Parser;
use rkyv::util::AlignedVec;

/// Times validated in-place access against copy-then-access and prints a Markdown table.
#[derive(Debug, Parser)]
#[command(name = "codec")]
struct Args {
    /// Records per pass.
    #[arg(long, default_value_t = 10_000)]
    records: usize,
    /// Timed passes per read path; the median is reported.
    #[arg(long, default_value_t = 31)]
    passes: usize,
    /// Seed of the workload generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the scratch store goes (default: the system temp folder).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// The archived records packed into one buffer, each starting at an odd address, the way
/// values sit inside redb's pages.
struct Arena {
    bytes: Vec<u8>,
    spans: Vec<Range<usize>>,
}

impl Arena {
    fn new(records: &[Vec<u8>]) -> Arena {
        let total = records.iter().map(|r| r.len() + 1).sum();
        let mut bytes = Vec::with_capacity(total);
        let mut spans = Vec::with_capacity(records.len());
        for record in records {
            if (bytes.as_ptr() as usize + bytes.len()).is_multiple_of(2) {
                bytes.push(0);
            }
            spans.push(bytes.len()..bytes.len() + record.len());
            bytes.extend_from_slice(record);
        }
        Arena { bytes, spans }
    }

    fn all_odd(&self) -> bool {
        self.spans.iter().all(|span| (self.bytes[span.clone()].as_ptr() as usize) % 2 == 1)
    }
}

/// One way of reading every record once; returns a checksum so nothing is optimised away.
type ReadPath<'a> = Box<dyn Fn() -> anyhow::Result<u64> + 'a>;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ensure!(args.records > 0 && args.passes > 0, "counts must be positive");
    let records = generate(args.records, args.seed);
    let threshold = StoreOptions::default().blob_threshold_bytes;
    let encoded =
        records.iter().map(|r| encode(&stored(r, threshold))).collect::<anyhow::Result<Vec<_>>>()?;
    let arena = Arena::new(&encoded);
    ensure!(arena.all_odd(), "the arena failed to place every record at an odd address");
    let mirror_bytes: u64 = encoded.iter().map(|e| e.len() as u64).sum();

    // The same records in a real store, for the public read path and to check the mirror.
    let scratch = scratch_dir(args.dir.as_deref(), "codec")?;
    let annal = Annal::create(&scratch.path().join("annal.redb"), annal_engine::Sharing::Processes)?;
    eprintln!("loading {} records into a store …", records.len());
    sequential(&annal, "c", batches(&records, 100))?;
    let (entries, journal_bytes) = annal.journal_bytes()?;
    // Journal keys are (u64, u64): 16 bytes each.
    let engine_value_bytes = journal_bytes.saturating_sub(entries * 16);

    let in_place: ReadPath<'_> = Box::new(|| {
        let mut sum = 0;
        for span in &arena.spans {
            sum += touch(access(&arena.bytes[span.clone()])?);
        }
        Ok(sum)
    });
    let copy_fresh: ReadPath<'_> = Box::new(|| {
        let mut sum = 0;
        for span in &arena.spans {
            let bytes = &arena.bytes[span.clone()];
            let mut aligned = AlignedVec::<16>::with_capacity(bytes.len());
            aligned.extend_from_slice(bytes);
            sum += touch(access(&aligned)?);
        }
        Ok(sum)
    });
    let copy_reused: ReadPath<'_> = Box::new(|| {
        let mut sum = 0;
        let mut aligned = AlignedVec::<16>::new();
        for span in &arena.spans {
            aligned.clear();
            aligned.extend_from_slice(&arena.bytes[span.clone()]);
            sum += touch(access(&aligned)?);
        }
        Ok(sum)
    });
    let copy_only: ReadPath<'_> = Box::new(|| {
        let mut sum = 0;
        for span in &arena.spans {
            let bytes = &arena.bytes[span.clone()];
            let mut aligned = AlignedVec::<16>::with_capacity(bytes.len());
            aligned.extend_from_slice(bytes);
            sum += black_box(&aligned).len() as u64;
        }
        Ok(sum)
    });
    let public: ReadPath<'_> = Box::new(|| {
        let (count, sum) = read_session(annal.store(), "c")?;
        ensure!(count == records.len(), "read {count} records, expected {}", records.len());
        Ok(sum)
    });
    let paths: Vec<(&str, ReadPath<'_>)> = vec![
        ("validated `access` in place at alignment 1 (the engine's choice)", in_place),
        ("copy into a fresh `AlignedVec`, then validated `access`", copy_fresh),
        ("copy into one reused `AlignedVec`, then validated `access`", copy_reused),
        ("the copy alone: fresh `AlignedVec` + memcpy, no access", copy_only),
        ("engine public path: `Snapshot::records` + `RecordGuard::view`", public),
    ];

    // Warm up once, then interleave the paths pass by pass so machine noise hits all alike.
    let mut checksums = Vec::new();
    for (_, path) in &paths {
        checksums.push(black_box(path()?));
    }
    ensure!(checksums[0] == checksums[1] && checksums[0] == checksums[2], "the read paths disagree");
    ensure!(checksums[0] == checksums[4], "the mirror and the engine read different text");
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    for _ in 0..args.passes {
        for ((_, path), samples) in paths.iter().zip(&mut samples) {
            let started = Instant::now();
            black_box(path()?);
            samples.push(started.elapsed().as_secs_f64() * 1e9 / records.len() as f64);
        }
    }
    let rows: Vec<(String, f64)> =
        paths.iter().zip(&mut samples).map(|((label, _), s)| ((*label).to_owned(), median(s))).collect();

    let report = CodecReport {
        date: today_utc(),
        cores: core_count(),
        records: records.len(),
        mean_bytes: mirror_bytes / records.len() as u64,
        passes: args.passes,
        rows: rows.clone(),
        mirror_check: (engine_value_bytes, mirror_bytes),
    };
    print!("{}", codec_markdown(&report));
    let (access_ns, copy_ns, public_ns) = (rows[0].1, rows[1].1 - rows[0].1, rows[4].1);
    println!();
    println!(
        "The copy adds {copy_ns:.0} ns per record: {:.0}% of validated access in place, {:.0}% of the \
         engine's whole public read path.",
        100.0 * copy_ns / access_ns,
        100.0 * copy_ns / public_ns
    );
    drop(paths);
    annal.close()?;
    Ok(())
}
