//! The fictional project the generated sessions work on (a plain-text accounting tool in Rust):
//! its files and their contents, and the tools that look at and change them (Read, Grep, Glob,
//! Edit, git). Builds, tests and traced runs are in [`super::cargo`].
//!
//! File contents depend only on the project, not on the random stream, so the same file read
//! twice gives the same bytes, as it does in a real session.

use serde_json::json;

use super::topics::Topic;
use super::{Call, Rng};

/// The project's folder, as the tools see it.
pub(crate) const ROOT: &str = "/home/dev/ledger";

/// Files and their length in lines.
const FILES: [(&str, u64); 12] = [
    ("Cargo.toml", 38),
    ("src/main.rs", 140),
    ("src/lib.rs", 60),
    ("src/amount.rs", 420),
    ("src/lexer.rs", 610),
    ("src/parser.rs", 780),
    ("src/report.rs", 930),
    ("src/config.rs", 260),
    ("src/error.rs", 150),
    ("tests/parse.rs", 340),
    ("tests/report.rs", 410),
    ("CHANGELOG.md", 120),
];

const NAMES: [&str; 12] = [
    "parse_amount",
    "split_thousands",
    "lex_number",
    "read_posting",
    "normalize_date",
    "bucket_month",
    "render_row",
    "load_config",
    "resolve_currency",
    "check_balance",
    "parse_ledger",
    "format_cents",
];

const TYPES: [&str; 6] = ["Amount", "Posting", "Token", "Report", "Config", "Currency"];

/// Snippets of plausible Rust, line by line: `{n}` is a function name, `{t}` a type.
const SNIPPETS: [&[&str]; 6] = [
    &[
        "/// Parses one {t} from `input`, which must already be trimmed.",
        "pub fn {n}(input: &str, line: usize) -> Result<{t}, ParseError> {",
        "    let mut parts = input.splitn(2, '.');",
        "    let whole = parts.next().ok_or(ParseError::Empty { line })?;",
        "    let cents = match parts.next() {",
        "        Some(frac) if frac.len() == 2 => frac.parse::<i64>().map_err(ParseError::digits(line))?,",
        "        Some(_) => return Err(ParseError::Precision { line }),",
        "        None => 0,",
        "    };",
        "    Ok({t}::from_parts(whole.parse::<i64>()?, cents))",
        "}",
    ],
    &[
        "impl {t} {",
        "    /// The value in cents, or `None` when it does not fit.",
        "    pub fn {n}(&self, other: &{t}) -> Option<{t}> {",
        "        if self.currency != other.currency {",
        "            return None;",
        "        }",
        "        let cents = self.cents.checked_add(other.cents)?;",
        "        Some({t} { cents, ..*self })",
        "    }",
        "}",
    ],
    &[
        "#[cfg(test)]",
        "mod tests {",
        "    use super::*;",
        "",
        "    #[test]",
        "    fn {n}_roundtrip() {",
        "        let value = {t}::parse(\"1204.50 EUR\").unwrap();",
        "        assert_eq!(value.to_string(), \"1204.50 EUR\");",
        "    }",
        "}",
    ],
    &[
        "fn {n}(tokens: &mut Peekable<Tokens<'_>>) -> Result<Option<{t}>, ParseError> {",
        "    while let Some(token) = tokens.peek() {",
        "        match token.kind {",
        "            Kind::Comment | Kind::Blank => {",
        "                tokens.next();",
        "            }",
        "            Kind::Date => return read_entry(tokens).map(Some),",
        "            _ => return Err(ParseError::Unexpected { at: token.span }),",
        "        }",
        "    }",
        "    Ok(None)",
        "}",
    ],
    &[
        "// Months are bucketed by the ledger's own date, never by local time: a posting",
        "// written on the 31st belongs to that month wherever the report runs.",
        "pub(crate) fn {n}(date: NaiveDate) -> Month {",
        "    Month { year: date.year(), month: date.month() as u8 }",
        "}",
    ],
    &[
        "pub struct {t}Builder {",
        "    accounts: Vec<AccountId>,",
        "    currency: Option<Currency>,",
        "    strict: bool,",
        "}",
        "",
        "impl {t}Builder {",
        "    pub fn {n}(mut self, strict: bool) -> Self {",
        "        self.strict = strict;",
        "        self",
        "    }",
        "}",
    ],
];

const COMMITS: [&str; 10] = [
    "report: show account totals in the footer",
    "lexer: keep spans for multi-byte account names",
    "config: read ledger.toml from the ledger's folder",
    "amount: reject three-digit cents",
    "parser: accept tab-indented postings",
    "ci: run clippy with -D warnings",
    "report: sort accounts by name, then by code",
    "deps: bump chrono to 0.4.41",
    "docs: document the posting grammar",
    "tests: add the big fixture (200k postings)",
];

/// The fictional project.
#[derive(Debug)]
pub(super) struct Project {
    /// The unit tests `cargo test` lists, in its order.
    pub(super) tests: Vec<String>,
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A project file's absolute path.
pub(super) fn path(file: &str) -> String {
    format!("{ROOT}/{file}")
}

/// A shell command and what it printed.
pub(super) fn bash(command: &str, description: &str, output: String, is_error: bool) -> Call {
    Call { tool: "Bash", input: json!({"command": command, "description": description}), output, is_error }
}

impl Project {
    pub(super) fn new() -> Project {
        const MODULES: [&str; 6] = ["amount", "lexer", "parser", "report", "config", "error"];
        const VERBS: [&str; 8] =
            ["parses", "rejects", "rounds", "formats", "sums", "keeps", "splits", "reads"];
        const CASES: [&str; 9] = [
            "empty_input",
            "negative_amount",
            "thousands_separator",
            "unicode_account",
            "long_line",
            "missing_currency",
            "trailing_comment",
            "month_boundary",
            "leap_day",
        ];
        let mut tests = Vec::new();
        for (index, case) in CASES.iter().cycle().take(342).enumerate() {
            let module = MODULES[index % MODULES.len()];
            let verb = VERBS[index / MODULES.len() % VERBS.len()];
            tests.push(format!("{module}::tests::{verb}_{case}_{}", index / 72));
        }
        tests.sort();
        Project { tests }
    }

    /// Another file than `file`.
    pub(super) fn neighbour(&self, rng: &mut Rng, file: &str) -> &'static str {
        let others: Vec<&'static str> = FILES.iter().map(|(f, _)| *f).filter(|f| *f != file).collect();
        others[rng.below(others.len() as u64) as usize]
    }

    /// The file's lines: the same every time it is read.
    fn lines(file: &str) -> Vec<String> {
        let count = FILES.iter().find(|(f, _)| *f == file).map_or(200, |(_, n)| *n) as usize;
        let mut rng = Rng::new(fnv(file));
        let mut lines = Vec::with_capacity(count + 12);
        if file.ends_with(".toml") {
            lines.extend(
                ["[package]", "name = \"ledger\"", "version = \"0.4.1\"", "edition = \"2021\""]
                    .map(String::from),
            );
        }
        while lines.len() < count {
            if file.ends_with(".md") {
                let version = 40 - lines.len() / 12;
                lines.push(format!("## 0.{}.{} ", version / 10, version % 10));
                lines.push(format!("- {}", rng.pick(&COMMITS)));
                lines.push(String::new());
                continue;
            }
            let (snippet, name, ty) = (*rng.pick(&SNIPPETS), *rng.pick(&NAMES), *rng.pick(&TYPES));
            lines.extend(snippet.iter().map(|line| line.replace("{n}", name).replace("{t}", ty)));
            lines.push(String::new());
        }
        lines.truncate(count);
        lines
    }

    pub(super) fn read(&self, file: &'static str) -> Call {
        let output = Project::lines(file)
            .iter()
            .enumerate()
            .map(|(index, line)| format!("{:>6}\t{line}\n", index + 1))
            .collect();
        Call { tool: "Read", input: json!({"file_path": path(file)}), output, is_error: false }
    }

    pub(super) fn grep(&self, rng: &mut Rng, topic: &Topic) -> Call {
        let pattern = topic.function.rsplit("::").next().unwrap_or(topic.function);
        let mut output = String::new();
        for _ in 0..rng.between(3, 24) {
            let (file, lines) = rng.pick(&FILES[1..11]);
            let line = rng.between(1, *lines);
            let code = rng.pick(&[
                "let value = {p}(&token, line)?;",
                "pub fn {p}(",
                "    .map(|t| {p}(t, 0))",
                "// {p} must not panic",
            ]);
            output.push_str(&format!("{file}:{line}:    {}\n", code.replace("{p}", pattern)));
        }
        let input = json!({"pattern": pattern, "path": ROOT, "output_mode": "content", "-n": true});
        Call { tool: "Grep", input, output, is_error: false }
    }

    pub(super) fn glob(&self) -> Call {
        let output =
            FILES.iter().filter(|(f, _)| f.ends_with(".rs")).map(|(f, _)| format!("{}\n", path(f))).collect();
        Call { tool: "Glob", input: json!({"pattern": "**/*.rs", "path": ROOT}), output, is_error: false }
    }

    pub(super) fn git_log(&self, rng: &mut Rng) -> Call {
        let output =
            (0..15).map(|_| format!("{:07x} {}\n", rng.next_u64() >> 36, rng.pick(&COMMITS))).collect();
        bash("git log --oneline -n 15", "Recent commits", output, false)
    }

    pub(super) fn edit(&self, rng: &mut Rng, topic: &Topic) -> Call {
        let lines = Project::lines(topic.file);
        let at = rng.below(lines.len().saturating_sub(10) as u64) as usize;
        let old = lines[at..at + 3].join("\n");
        let new = format!("{old}\n    // {} handled here as well", topic.goal);
        let input = json!({"file_path": path(topic.file), "old_string": old, "new_string": new});
        if rng.chance(15) {
            let output = format!("String to replace not found in file.\nString: {old}");
            return Call { tool: "Edit", input, output, is_error: true };
        }
        let mut output = format!("The file {} has been updated. ", path(topic.file));
        output.push_str("Here's the result of running `cat -n` on a snippet of the edited file:\n");
        for (index, line) in lines.iter().enumerate().skip(at.saturating_sub(3)).take(10) {
            output.push_str(&format!("{:>6}\t{line}\n", index + 1));
        }
        Call { tool: "Edit", input, output, is_error: false }
    }

    pub(super) fn git_diff(&self, rng: &mut Rng, topic: &Topic) -> Call {
        let added = rng.between(5, 80);
        let removed = rng.between(1, 30);
        let output = format!(
            " {} | {} {}{}\n 1 file changed, {added} insertions(+), {removed} deletions(-)\n",
            topic.file,
            added + removed,
            "+".repeat((added / 4) as usize),
            "-".repeat((removed / 4) as usize)
        );
        bash("git diff --stat", "What changed", output, false)
    }
}
