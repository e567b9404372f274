//! Running the `annal` binary for the capture benchmark: timed runs with the home folder as
//! every agent's home, a `--watch` child, and its CPU and memory read from `/proc`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

/// Variables that would point an agent elsewhere than the benchmark's home.
const OVERRIDES: [&str; 6] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "GOOSE_PATH_ROOT",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
];

pub(crate) struct Annal {
    binary: PathBuf,
    home: PathBuf,
    db: PathBuf,
}

impl Annal {
    pub(crate) fn new(binary: &Path, home: &Path, db: PathBuf) -> Annal {
        Annal { binary: binary.to_owned(), home: home.to_owned(), db }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg("--db").arg(&self.db).args(args).env("HOME", &self.home).env_remove("ANNAL_DB");
        for name in OVERRIDES {
            command.env_remove(name);
        }
        command
    }

    /// Runs to the end; the seconds it took. A failure is an error with its stderr.
    pub(crate) fn timed(&self, args: &[&str]) -> anyhow::Result<f64> {
        let started = Instant::now();
        let output = self.command(args).stdin(Stdio::null()).output()?;
        let seconds = started.elapsed().as_secs_f64();
        if !output.status.success() {
            bail!("annal {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
        }
        Ok(seconds)
    }

    /// The records the store holds (`annal stats`).
    pub(crate) fn records(&self) -> anyhow::Result<u64> {
        let output = self.command(&["stats", "--json"]).output()?;
        let stats: serde_json::Value =
            serde_json::from_slice(&output.stdout).context("annal stats --json")?;
        stats["records"].as_u64().context("a record count in annal stats --json")
    }

    /// Starts `sync --watch` and waits for its first pass.
    pub(crate) fn watch(&self) -> anyhow::Result<Watch<'_>> {
        let mut child = self
            .command(&["sync", "--watch", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().context("the watch's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        // The first pass prints a line per agent.
        for _ in 0..9 {
            lines.next().context("the watch ended before its first pass")??;
        }
        // Its later lines are not read; a thread drains them so the pipe never fills.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Watch { annal: self, child })
    }
}

pub(crate) struct Watch<'a> {
    annal: &'a Annal,
    child: Child,
}

pub(crate) struct Idle {
    pub(crate) cpu_percent: f64,
    pub(crate) rss_mib: f64,
    pub(crate) peak_mib: f64,
}

impl Watch<'_> {
    /// Appends records to a new live transcript one at a time; each one's delay until it is
    /// found, in ms, sorted.
    pub(crate) fn append_and_search(&self, home: &Path, appends: usize) -> anyhow::Result<Vec<f64>> {
        let file = home.join(".claude/projects/-bench-live/live.jsonl");
        std::fs::create_dir_all(file.parent().context("a folder")?)?;
        let mut delays = Vec::with_capacity(appends);
        for n in 0..appends {
            let token = format!("livetoken{n}q");
            let line = serde_json::json!({"type": "user", "uuid": format!("live-{n}"), "sessionId": "live",
                "message": {"role": "user", "content": format!("look for {token} now")}});
            let mut handle = std::fs::OpenOptions::new().create(true).append(true).open(&file)?;
            handle.write_all(format!("{line}\n").as_bytes())?;
            drop(handle);
            let started = Instant::now();
            loop {
                let output = self.annal.command(&["history", "search", &token, "--json"]).output()?;
                if String::from_utf8_lossy(&output.stdout).contains(&format!("\"live-{n}\"")) {
                    break;
                }
                if started.elapsed() > Duration::from_secs(120) {
                    bail!("append {n} not found after 120 s");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            delays.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        delays.sort_by(f64::total_cmp);
        Ok(delays)
    }

    /// The watch's CPU share and memory over `secs` seconds with nothing written.
    pub(crate) fn idle(&self, secs: u64) -> anyhow::Result<Idle> {
        let pid = self.child.id();
        // Settle after the appends.
        std::thread::sleep(Duration::from_secs(2));
        let before = cpu_ticks(pid)?;
        let started = Instant::now();
        std::thread::sleep(Duration::from_secs(secs));
        let ticks = cpu_ticks(pid)? - before;
        let seconds = started.elapsed().as_secs_f64();
        // The kernel's clock ticks are 100 per second on Linux.
        let cpu_percent = ticks as f64 / 100.0 / seconds * 100.0;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let kib = |key: &str| -> f64 {
            let line = status.lines().find(|l| l.starts_with(key)).unwrap_or_default();
            line.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
        };
        Ok(Idle { cpu_percent, rss_mib: kib("VmRSS:") / 1024.0, peak_mib: kib("VmHWM:") / 1024.0 })
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        // The benchmark is over; the watch has nothing to finish.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User and system CPU ticks of a process.
fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name, which may hold spaces, in parentheses.
    let rest = stat.rsplit_once(')').map(|(_, rest)| rest).context("a /proc stat line")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).context("a CPU time field");
    Ok(field(11)? + field(12)?)
}
