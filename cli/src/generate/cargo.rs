//! What cargo prints for the fictional project: builds (sometimes failing with compiler errors),
//! test runs (passing ones identical every time, failing ones with a panic), clippy, and a
//! traced release run that logs thousands of lines.

use super::project::{bash, Project, ROOT};
use super::topics::Topic;
use super::{Call, Rng};

/// Appends each line and a newline.
fn push_lines(output: &mut String, lines: &[String]) {
    for line in lines {
        output.push_str(line);
        output.push('\n');
    }
}

impl Project {
    /// `cargo build`: finished, or one to three compiler errors.
    pub(super) fn build(&self, rng: &mut Rng, topic: &Topic) -> Call {
        let mut output = format!("   Compiling ledger v0.4.1 ({ROOT})\n");
        if !rng.chance(45) {
            output.push_str(&format!(
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n",
                rng.between(2, 9),
                rng.below(100)
            ));
            return bash("cargo build", "Build the workspace", output, false);
        }
        let errors = rng.between(1, 3);
        for _ in 0..errors {
            let line = rng.between(40, 400);
            let (code, message, note) = *rng.pick(&[
                ("E0308", "mismatched types", "expected `i64`, found `u64`"),
                (
                    "E0599",
                    "no method named `split_thousands` found for reference `&str` in the current scope",
                    "method not found in `&str`",
                ),
                (
                    "E0004",
                    "non-exhaustive patterns: `&AmountError::Separator { .. }` not covered",
                    "pattern `&AmountError::Separator { .. }` not covered",
                ),
                ("E0425", "cannot find value `cents` in this scope", "not found in this scope"),
            ]);
            let width = line.to_string().len();
            let pad = " ".repeat(width);
            let column = rng.between(9, 40);
            push_lines(
                &mut output,
                &[
                    format!("error[{code}]: {message}"),
                    format!("{pad}--> {}:{line}:{column}", topic.file),
                    format!("{pad} |"),
                    format!("{line} |         let value = {}(&token, line)?;", topic.function),
                    format!("{pad} |                     ^^^^^^^^^^^^^^^^ {note}"),
                    format!("{pad} |"),
                    String::new(),
                ],
            );
        }
        output.push_str(&format!(
            "error: could not compile `ledger` (lib) due to {errors} previous error{}\n",
            if errors > 1 { "s" } else { "" }
        ));
        bash("cargo build", "Build the workspace", output, true)
    }

    /// `cargo test`: passing runs are identical; a failing one fails the topic's test.
    pub(super) fn test(&self, rng: &mut Rng, topic: &Topic, fail: bool) -> Call {
        let running = self.tests.len() + usize::from(fail);
        let mut output = String::new();
        push_lines(
            &mut output,
            &[
                format!("   Compiling ledger v0.4.1 ({ROOT})"),
                "    Finished `test` profile [unoptimized + debuginfo] target(s) in 6.12s".into(),
                "     Running unittests src/lib.rs (target/debug/deps/ledger-3f9c2a7e5b1d4c08)".into(),
                String::new(),
                format!("running {running} tests"),
            ],
        );
        for name in &self.tests {
            output.push_str(&format!("test {name} ... ok\n"));
        }
        let counts = "0 ignored; 0 measured; 0 filtered out";
        if !fail {
            let passed = self.tests.len();
            push_lines(
                &mut output,
                &[
                    String::new(),
                    format!("test result: ok. {passed} passed; 0 failed; {counts}; finished in 0.84s"),
                    String::new(),
                    "   Doc-tests ledger".into(),
                    String::new(),
                    "running 2 tests".into(),
                    "test src/amount.rs - amount::Amount::parse (line 41) ... ok".into(),
                    "test src/report.rs - report::Report::monthly (line 88) ... ok".into(),
                    String::new(),
                    format!("test result: ok. 2 passed; 0 failed; {counts}; finished in 1.02s"),
                ],
            );
            return bash("cargo test", "Run the test suite", output, false);
        }
        let (test, file) = (topic.test, topic.file);
        let line = rng.between(100, 400);
        let (left, right) = (rng.between(1000, 999_999), rng.between(1000, 999_999));
        push_lines(
            &mut output,
            &[
                format!("test {test} ... FAILED"),
                String::new(),
                "failures:".into(),
                String::new(),
                format!("---- {test} stdout ----"),
                String::new(),
                format!("thread '{test}' panicked at {file}:{line}:9:"),
                "assertion `left == right` failed".into(),
                format!("  left: Amount {{ cents: {left}, currency: None }}"),
                format!(" right: Amount {{ cents: {right}, currency: None }}"),
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace".into(),
                String::new(),
                String::new(),
                "failures:".into(),
                format!("    {test}"),
                String::new(),
                format!(
                    "test result: FAILED. {} passed; 1 failed; {counts}; finished in 0.91s",
                    self.tests.len()
                ),
                String::new(),
                "error: test failed, to rerun pass `--lib`".into(),
            ],
        );
        bash("cargo test", "Run the test suite", output, true)
    }

    /// A traced release run over the big fixture: thousands of log lines.
    pub(super) fn profile_run(&self, rng: &mut Rng, topic: &Topic, fixed: bool) -> Call {
        let command =
            "RUST_LOG=ledger=trace cargo run --release -- report --monthly --input fixtures/big.ledger";
        let mut output = String::new();
        push_lines(
            &mut output,
            &[
                "    Finished `release` profile [optimized] target(s) in 0.09s".into(),
                "     Running `target/release/ledger report --monthly --input fixtures/big.ledger`".into(),
            ],
        );
        let lines = rng.between(2500, 6000);
        let accounts = [
            "Assets:Cash",
            "Assets:Bank:Checking",
            "Expenses:Food",
            "Expenses:Rent",
            "Income:Salary",
            "Expenses:Travel",
        ];
        let mut millis = 0u64;
        for index in 0..lines {
            millis += rng.between(1, 5);
            let stamp = format!("2026-03-02T10:41:{:02}.{:03}Z", 7 + millis / 1000 % 50, millis % 1000);
            let account = rng.pick(&accounts);
            let text = match rng.below(20) {
                0 if !fixed => format!(
                    " WARN ledger::report: bucket {account} re-sorted ({} entries) line={}",
                    rng.between(1000, 40_000),
                    index * 40
                ),
                1..=9 => format!(
                    "TRACE {}: insert posting line={} account={account} cents={}",
                    topic.function,
                    index * 40 + 3,
                    rng.between(100, 500_000)
                ),
                _ => format!(
                    "DEBUG ledger::lexer: token line={} kind=Number text=\"{},{:03}.{:02}\"",
                    index * 40 + 1,
                    rng.between(1, 99),
                    rng.below(1000),
                    rng.below(100)
                ),
            };
            output.push_str(&format!("{stamp} {text}\n"));
        }
        let took = if fixed { "0.41s" } else { "12.84s" };
        output.push_str(&format!("report written: 14 months, 212 accounts, 200,118 postings in {took}\n"));
        bash(command, "Trace the slow monthly report", output, false)
    }

    /// `cargo clippy -D warnings`: clean, or a few lints that fail it.
    pub(super) fn clippy(&self, rng: &mut Rng, topic: &Topic) -> Call {
        let command = "cargo clippy --all-targets -- -D warnings";
        if rng.chance(50) {
            let mut output = String::new();
            push_lines(
                &mut output,
                &[
                    format!("    Checking ledger v0.4.1 ({ROOT})"),
                    "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 2.31s".into(),
                ],
            );
            return bash(command, "Lint", output, false);
        }
        let mut output = format!("    Checking ledger v0.4.1 ({ROOT})\n");
        let help = "https://rust-lang.github.io/rust-clippy/master/index.html#cast_possible_wrap";
        for _ in 0..rng.between(2, 5) {
            let line = rng.between(30, 400);
            push_lines(
                &mut output,
                &[
                    "error: casting `u64` to `i64` may wrap around the value".into(),
                    format!("  --> {}:{line}:21", topic.file),
                    "   |".into(),
                    format!("{line} |     let cents = raw as i64;"),
                    "   |                 ^^^^^^^^^^".into(),
                    "   |".into(),
                    format!("   = help: for further information visit {help}"),
                    String::new(),
                ],
            );
        }
        output.push_str("error: could not compile `ledger` (lib) due to previous errors\n");
        bash(command, "Lint", output, true)
    }
}
