//! One row of the agent registry: everything annal knows of one agent, named in its folder
//! (`<agent>/agent.rs`) and listed once in the table.

use std::path::{Path, PathBuf};

use super::environment::Environment;
use super::TranscriptFormat;

/// Tells an agent's transcript among the files under its locations, by its path, name and
/// parent folder's name.
pub(crate) type SessionFile = fn(&Path, &str, &str) -> Option<TranscriptFormat>;

/// What annal knows of one agent.
#[derive(Debug)]
pub(crate) struct Row {
    /// The name on the command line (`annal sync --only`), and in `sync --list`.
    pub(crate) name: &'static str,
    /// The agent's own name, for people (`sync --list`, the UI's session list).
    pub(crate) title: &'static str,
    /// The transcript formats its files are written in (none for an agent read from a database
    /// only, or not read at all).
    pub(crate) formats: &'static [TranscriptFormat],
    /// The environment variables its locations honour.
    pub(crate) overrides: &'static [&'static str],
    /// Where it keeps its sessions, whether or not they exist; per-project agents look in the
    /// project folders given.
    pub(crate) locations: fn(&Environment, &[PathBuf]) -> Vec<PathBuf>,
    /// The folder it makes for itself at its first run (settings, logs) whether or not it has
    /// kept a session yet; `None` for an agent that keeps nothing outside projects or an editor.
    pub(crate) home: fn(&Environment) -> Option<PathBuf>,
    /// Whether it keeps sessions inside project folders rather than in one place.
    pub(crate) per_project: bool,
    /// Which files under its locations are its transcripts, by path, name and parent folder.
    pub(crate) session_file: Option<SessionFile>,
    /// Why annal cannot read its sessions, when it cannot: they are counted, never read.
    pub(crate) not_readable: Option<&'static str>,
    /// The prefix its importer gives the entryIds it derives (`codex:…`), which tells the
    /// agent of a stored session; `None` where another agent's importer writes them.
    pub(crate) entry_prefix: Option<&'static str>,
    /// What it wraps around a user's words in a request.
    pub(crate) wrappers: &'static [Wrapper],
    /// The fuzz targets of its readers (`fuzz/fuzz_targets/<target>.rs`); their seeds sit in
    /// its folder, `seeds/<target>/`. Read by the test that checks them against fuzz/.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fuzz_targets: &'static [&'static str],
    /// Its rows in README.md and docs/import.md, which a test checks against the files.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) docs: Docs,
}

/// An agent's rows in the documentation, checked against the files by a test.
#[derive(Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Docs {
    /// README.md's "where (default)" cell of its `annal sync` row.
    pub(crate) readme: &'static str,
    /// docs/import.md's cells after the agent's title: format, where, followed (for an agent
    /// annal cannot read: where, why not).
    pub(crate) import: &'static str,
}

/// Context an agent adds to a user's request: a block from a line starting with `open` to the
/// first `close` after it, taken out, or (`keep`) replaced by the text between the two.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wrapper {
    open: &'static str,
    close: &'static str,
    keep: bool,
}

impl Wrapper {
    /// A block the agent adds (its context, reminders): taken out whole.
    pub(crate) const fn added(open: &'static str, close: &'static str) -> Wrapper {
        Wrapper { open, close, keep: false }
    }

    /// Tags around the user's own words (a command's name, its arguments): the words stay.
    pub(crate) const fn around(open: &'static str, close: &'static str) -> Wrapper {
        Wrapper { open, close, keep: true }
    }
}

/// `text` without the blocks `wrappers` describe: what the user wrote.
pub(crate) fn unwrap_request(text: &str, wrappers: &[Wrapper]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, wrapper)) = next_block(rest, wrappers) {
        out.push_str(&rest[..at]);
        let inner_start = at + wrapper.open.len();
        match rest[inner_start..].find(wrapper.close) {
            Some(length) => {
                if wrapper.keep {
                    out.push_str(rest[inner_start..inner_start + length].trim());
                }
                rest = &rest[inner_start + length + wrapper.close.len()..];
            }
            // Never closed: the block runs to the end.
            None => {
                if wrapper.keep {
                    out.push_str(&rest[inner_start..]);
                }
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first block a wrapper opens at the start of a line (after spaces), by byte offset.
fn next_block<'w>(text: &str, wrappers: &'w [Wrapper]) -> Option<(usize, &'w Wrapper)> {
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let at = line_start + indent;
        if let Some(wrapper) = wrappers.iter().find(|w| text[at..].starts_with(w.open)) {
            return Some((at, wrapper));
        }
        line_start += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRAPPERS: &[Wrapper] = &[
        Wrapper::added("<environment_context>", "</environment_context>"),
        Wrapper::around("<command-args>", "</command-args>"),
    ];

    #[test]
    fn added_blocks_go_and_the_users_words_stay() {
        let text = "<environment_context>\n  <cwd>/home/ユーザー</cwd>\n</environment_context>\n\n\
                    修正してください 🙂 the parser";
        assert_eq!(unwrap_request(text, WRAPPERS).trim(), "修正してください 🙂 the parser");
        let command = "<command-args>e\u{301}crire le test</command-args>";
        assert_eq!(unwrap_request(command, WRAPPERS).trim(), "e\u{301}crire le test");
    }

    #[test]
    fn a_block_never_closed_runs_to_the_end_and_text_without_blocks_is_kept() {
        assert_eq!(unwrap_request("ask\n<environment_context>\n<cwd>", WRAPPERS), "ask\n");
        let plain = "why does <environment_context> appear mid-line?";
        assert_eq!(unwrap_request(plain, WRAPPERS), plain);
        let long = "\u{3000}".repeat(10_000) + "x";
        assert_eq!(unwrap_request(&long, WRAPPERS), long);
    }
}
