//! Runs the real `annal` binary against a store in a temporary folder.

// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

pub(crate) mod drill;
pub(crate) mod mcp;
pub(crate) mod ui;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary folder with a store path in it; the user's own data directory is never touched.
pub(crate) struct Sandbox {
    dir: tempfile::TempDir,
    pub(crate) db: PathBuf,
}

/// The exit status of a failure of each kind (docs/errors.md; `cli/src/failure.rs`).
#[allow(dead_code)]
pub(crate) mod status {
    pub(crate) const BAD_INPUT: i32 = 1;
    pub(crate) const USAGE: i32 = 2;
    pub(crate) const NOT_FOUND: i32 = 3;
    pub(crate) const CONFLICT: i32 = 4;
    pub(crate) const BUSY: i32 = 5;
    pub(crate) const READ_ONLY: i32 = 6;
    pub(crate) const CORRUPTED: i32 = 9;
    pub(crate) const UNSUPPORTED: i32 = 10;
    pub(crate) const IO: i32 = 11;
}

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The run succeeded; panics with its stderr otherwise.
    pub(crate) fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        self
    }

    /// The stdout lines.
    pub(crate) fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

impl Sandbox {
    pub(crate) fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = dir.path().join("store.redb");
        Sandbox { dir, db }
    }

    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The binary with a clean environment that points at this sandbox.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_annal"));
        command
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .env_remove("ANNAL_DB")
            .env("HOME", self.dir.path())
            .env("XDG_DATA_HOME", self.dir.path().join("data"));
        command
    }

    /// Runs `annal --db STORE ARGS` with `stdin` as its input.
    pub(crate) fn annal(&self, args: &[&str], stdin: &str) -> Run {
        run(self.command(args), stdin)
    }
}

/// Runs a prepared command with `stdin` as its input.
pub(crate) fn run(mut command: Command, stdin: &str) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the annal binary starts");
    let mut input = child.stdin.take().expect("a stdin pipe");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        // The binary may exit before reading everything (on an error); that is not a failure here.
        let _ = input.write_all(text.as_bytes());
    });
    let Output { status, stdout, stderr } = child.wait_with_output().expect("the annal binary runs");
    writer.join().expect("the stdin writer finishes");
    Run {
        code: status.code(),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
    }
}

/// Parses each stdout line as JSON.
pub(crate) fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}
