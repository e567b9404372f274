//! The `annal ui` benchmark: how soon its pages arrive over a large history. A store is filled
//! with generated sessions of an agent's records (one of 2,000 records and one of 17,800
//! among them), `annal ui` is started on it as a user would, and the session list, a session's
//! first page, what the model saw at 32K and 1M, the HTML export and search as you type (every
//! prefix of a word, as typed) are fetched over loopback, each timed to its last byte. Prints a
//! Markdown report to stdout. `--screenshots DIR` also writes screenshots of each page at 1280
//! and 400 px wide, taken by headless Chromium (`screenshots.rs`).
//!
//! `cargo build --release -p annal-cli && cargo run --release -p annal-bench --bin ui -- [--generate-mib 1024] [--screenshots DIR]`

#[path = "ui/screenshots.rs"]
mod screenshots;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use annal::{Annal, Options, Record};
use annal_bench::{quantile, scratch_dir};
use annal_support::http::{request, ui_address, ui_cookie};
use annal_support::sessions::{Profile, SessionSpec};
use anyhow::{ensure, Context as _};
use clap::Parser;

/// Times `annal ui`'s pages over a generated history.
#[derive(Debug, Parser)]
#[command(name = "ui")]
struct Args {
    /// MiB of generated sessions in the store (about 1 MiB a session).
    #[arg(long, default_value_t = 1024)]
    generate_mib: u64,
    /// Times each page is fetched after its first.
    #[arg(long, default_value_t = 20)]
    repeats: usize,
    /// The annal binary (default: the one built beside this benchmark).
    #[arg(long)]
    annal: Option<PathBuf>,
    /// Where the scratch folder goes (default: the system temp folder; use a real disk).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Also write screenshots of each page at 1280 and 400 px wide to this folder (needs
    /// Chromium: `ANNAL_CHROMIUM`, or `chromium` on the PATH).
    #[arg(long)]
    screenshots: Option<PathBuf>,
}

/// The long session's name and length: as long as the longest real session the viewer was
/// tried on.
const LONG: (&str, u64) = ("long-session", 17_800);

/// A session of a typical length, for its page and its export.
const TYPICAL: (&str, u64) = ("typical-session", 2_000);

/// Fills the store; returns its bytes of records, its sessions, and words its first session's
/// text holds (what the search below types).
fn fill(store: &Path, mib: u64) -> anyhow::Result<(u64, u64, Vec<String>)> {
    let annal = Annal::open_with(store, &Options::default())?;
    let (mut bytes, mut seed) = (0u64, 0u64);
    let mut words = Vec::new();
    while bytes < mib << 20 {
        let records: Vec<Record> =
            (SessionSpec { profile: Profile::Agent, seed }).records().take(1_000).collect();
        if seed == 0 {
            words = words_of(&records);
        }
        bytes += records.iter().map(|r| r.size_bytes() as u64).sum::<u64>();
        annal.append(&format!("generated-{seed:04}"), None, records)?;
        seed += 1;
    }
    for (name, len, seed) in [(LONG.0, LONG.1, 1 << 20), (TYPICAL.0, TYPICAL.1, 1 << 21)] {
        // Entry ids are the store's: each session's own, under its name.
        let mut records = (SessionSpec { profile: Profile::Coding, seed })
            .records()
            .take(len as usize)
            .map(|mut record| {
                record.entry_id = format!("{name}-{}", record.entry_id);
                record
            })
            .peekable();
        while records.peek().is_some() {
            annal.append(name, None, records.by_ref().take(1_000).collect())?;
        }
    }
    annal.append(screenshots::EDIT_SESSION, None, screenshots::edit_records())?;
    ensure!(annal.catch_up(Duration::from_secs(600), |_, _| {})? == 0, "the index did not catch up");
    annal.close()?;
    Ok((bytes, seed, words))
}

/// Seven different words of 6 to 12 lower-case letters from the records' text, spread through it.
fn words_of(records: &[Record]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for record in records {
        for block in &record.blocks {
            if let annal::Block::Text { text } = block {
                for word in text.split(|c: char| !c.is_ascii_alphabetic()) {
                    if (6..=12).contains(&word.len())
                        && word.bytes().all(|b| b.is_ascii_lowercase())
                        && !all.iter().any(|w| w == word)
                    {
                        all.push(word.to_owned());
                    }
                }
            }
        }
    }
    let step = (all.len() / 7).max(1);
    all.into_iter().step_by(step).take(7).collect()
}

/// A running `annal ui`: its port and cookie.
struct Ui {
    child: std::process::Child,
    port: u16,
    token: String,
    cookie: String,
}

impl Ui {
    fn start(binary: &Path, store: &Path) -> anyhow::Result<Ui> {
        let mut child = Command::new(binary)
            .args(["--db"])
            .arg(store)
            .args(["ui", "--no-open", "--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start annal ui")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("no stdout")?).read_line(&mut line)?;
        let (port, token) = ui_address(&line).context("annal ui printed no URL")?;
        let cookie = ui_cookie(port, &token).context("annal ui gave no cookie for its token")?;
        Ok(Ui { child, port, token, cookie })
    }

    /// Fetches `path`, timed to the answer's last byte.
    fn time(&self, path: &str) -> anyhow::Result<Duration> {
        Ok(self.fetch(path)?.0)
    }

    /// Fetches `path`: how long to its last byte, and its body.
    fn fetch(&self, path: &str) -> anyhow::Result<(Duration, String)> {
        let host = format!("127.0.0.1:{}", self.port);
        let started = Instant::now();
        let answer = request(self.port, "GET", path, &[("Host", &host), ("Cookie", &self.cookie)])?;
        let took = started.elapsed();
        ensure!(answer.status == 200, "{path}: {} {}", answer.status, answer.body);
        Ok((took, answer.body))
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Appends one user request to the long session with the `annal` binary, as another process
/// writing while `annal ui` reads.
fn grow(binary: &Path, store: &Path, window: &str, visit: usize) -> anyhow::Result<()> {
    use std::io::Write as _;
    let line = serde_json::json!({"entryId": format!("grow-{window}-{visit}"), "role": "user",
        "timestamp": "2026-05-01T10:00:00Z",
        "blocks": [{"type": "text", "text": format!("one more request, {visit}: 検索\u{3000}🦀")}]});
    let mut child = Command::new(binary)
        .arg("--db")
        .arg(store)
        .args(["append", LONG.0])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .context("cannot start annal append")?;
    child.stdin.take().context("no stdin")?.write_all(format!("{line}\n").as_bytes())?;
    ensure!(child.wait()?.success(), "annal append failed");
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// p50 and p95 of `times` (nearest rank, as every benchmark here).
fn percentiles(times: &mut [Duration]) -> (Duration, Duration) {
    times.sort();
    (quantile(times, 0.5), quantile(times, 0.95))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = args
        .annal
        .clone()
        .unwrap_or_else(|| std::env::current_exe().unwrap_or_default().with_file_name("annal"));
    ensure!(binary.is_file(), "no annal binary at {} (cargo build --release -p annal-cli)", binary.display());
    let scratch = scratch_dir(args.dir.as_deref(), "ui")?;
    let store = scratch.path().join("store.redb");
    eprintln!("filling {} MiB…", args.generate_mib);
    let (bytes, sessions, words) = fill(&store, args.generate_mib)?;
    ensure!(!words.is_empty(), "the generated text has no words to search");
    let ui = Ui::start(&binary, &store)?;
    let mut rows = Vec::new();
    let pages = [
        ("session list", "/".to_owned()),
        ("a 2,000-record session, its first page", format!("/session?name={}", TYPICAL.0)),
        ("the 17,800-record session, its first page", format!("/session?name={}", LONG.0)),
        ("what the model saw of it, 32K", format!("/seen?name={}&window=32K", LONG.0)),
        ("what the model saw of it, 1M", format!("/seen?name={}&window=1M", LONG.0)),
        ("the 2,000-record session as one HTML file", format!("/export?name={}&format=html", TYPICAL.0)),
    ];
    for (label, path) in pages {
        let first = ui.time(&path)?;
        if path.starts_with("/seen") {
            // Its chart is drawn after the page: waited for, so no page below competes with it.
            ui.time(&format!("{path}&part=chart"))?;
        }
        let mut again: Vec<Duration> = (0..args.repeats).map(|_| ui.time(&path)).collect::<Result<_, _>>()?;
        let (p50, p95) = percentiles(&mut again);
        rows.push(format!("| {label} (`{path}`) | {} | {} | {} |", ms(first), ms(p50), ms(p95)));
    }
    // What the model saw, cold: the session grows by a record before each visit, so nothing
    // rendered for it is kept; then its chart, asked for as the page's script asks.
    let mut cold_rows = Vec::new();
    for window in ["32K", "1M"] {
        let path = format!("/seen?name={}&window={window}", LONG.0);
        let (mut pages, mut charts) = (Vec::new(), Vec::new());
        for visit in 0..args.repeats {
            grow(&binary, &store, window, visit)?;
            pages.push(ui.time(&path)?);
            charts.push(ui.time(&format!("{path}&part=chart"))?);
        }
        let ((page_p50, page_p95), (chart_p50, chart_p95)) =
            (percentiles(&mut pages), percentiles(&mut charts));
        cold_rows.push(format!(
            "| {window} (`{path}`) | {} | {} | {} | {} |",
            ms(page_p50),
            ms(page_p95),
            ms(chart_p50),
            ms(chart_p95)
        ));
    }
    // Search as you type: every prefix of two or more characters of words the sessions hold.
    let (mut typed, mut whole) = (Vec::new(), Vec::new());
    for word in &words {
        let chars: Vec<char> = word.chars().collect();
        for end in 2.min(chars.len())..=chars.len() {
            let prefix: String = chars[..end].iter().collect();
            let query: String = prefix.bytes().map(|b| format!("%{b:02X}")).collect();
            // As the page sends it: the word being typed matches the words it starts.
            let (took, body) = ui.fetch(&format!("/search?fragment=1&prefix=1&q={query}"))?;
            typed.push(took);
            if end == chars.len() {
                ensure!(!body.contains(">0 hits<"), "no hit for {word:?}");
                whole.push(took);
            }
        }
    }
    let searches = typed.len();
    if let Some(folder) = &args.screenshots {
        screenshots::take(folder, ui.port, &ui.token, &ui.cookie, &words, &[TYPICAL.0, LONG.0])?;
        eprintln!("screenshots in {}", folder.display());
    }
    let (p50, p95) = percentiles(&mut typed);
    let whole_max = whole.iter().max().copied().unwrap_or_default();
    let whole_p50 = percentiles(&mut whole).0;
    println!("## `annal ui`\n");
    println!(
        "{sessions} generated sessions ({:.0} MiB of records), one of 2,000 records and one of 17,800, in a store on this disk; `annal ui` started on it, pages fetched over loopback and timed to their last byte (the browser paints after that; each page has one stylesheet and one deferred script, both from the binary).\n",
        bytes as f64 / (1u64 << 20) as f64
    );
    println!("| page | first, ms | again p50, ms | again p95, ms |\n|---|--:|--:|--:|");
    for row in rows {
        println!("{row}");
    }
    println!(
        "\nWhat the model saw of the 17,800-record session, cold: {} visits each, the session grown by one user record (`annal append`) before each, so nothing rendered for it is kept; then the chart of tokens per request (`&part=chart`), drawn after the page, as the page's script asks for it.\n",
        args.repeats
    );
    println!("| window | page p50, ms | page p95, ms | then its chart p50, ms | chart p95, ms |\n|---|--:|--:|--:|--:|");
    for row in cold_rows {
        println!("{row}");
    }
    println!(
        "\nSearch as you type: {searches} requests, every prefix of two or more letters of {} words the generated text holds ({}), as typed: p50 {} ms, p95 {} ms; the whole words alone (each with hits): p50 {} ms, max {} ms.",
        words.len(),
        words.join(", "),
        ms(p50),
        ms(p95),
        ms(whole_p50),
        ms(whole_max)
    );
    Ok(())
}
