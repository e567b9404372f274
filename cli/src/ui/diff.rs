//! Diffs as a session page shows them, one line per line: an edit's old and new text as a line
//! diff with three lines of context around each change (similar's Myers diff), and tool output
//! or input that already is a diff (a unified diff, a `diff --git`, Codex's `*** Begin Patch`).

use maud::{html, Markup};
use similar::{ChangeTag, TextDiff};

use super::markdown::visible_controls;

/// Unchanged lines kept around each change, as `diff -u` keeps them.
const CONTEXT_LINES: usize = 3;

/// How one line of a diff is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    Added,
    Removed,
    Context,
    Hunk,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Added => "add",
            Mark::Removed => "del",
            Mark::Context => "ctx",
            Mark::Hunk => "hunk",
        }
    }
}

/// The lines of a diff with their marks, and how many were added and removed.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    lines: Vec<(Mark, String)>,
    pub(crate) added: usize,
    pub(crate) removed: usize,
}

impl Lines {
    fn push(&mut self, mark: Mark, line: String) {
        match mark {
            Mark::Added => self.added += 1,
            Mark::Removed => self.removed += 1,
            Mark::Context | Mark::Hunk => {}
        }
        self.lines.push((mark, line));
    }

    /// Appends another diff's lines (the next edit of a file edited several times at once).
    pub(crate) fn extend(&mut self, other: Lines) {
        self.added += other.added;
        self.removed += other.removed;
        self.lines.extend(other.lines);
    }

    /// How many lines the diff shows, hunk headers included.
    pub(crate) fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// `+9 −2`, for a fold's label.
    pub(crate) fn tally(&self) -> String {
        format!("+{} \u{2212}{}", self.added, self.removed)
    }

    /// The lines in a `pre`, each its own block (no blank line between them), with the counts
    /// as data for whoever reads the page.
    pub(crate) fn render(&self) -> Markup {
        html! {
            pre.diff data-added=(self.added) data-removed=(self.removed) {
                @for (mark, line) in &self.lines {
                    span class=(mark.class()) { (visible_controls(line)) }
                }
            }
        }
    }
}

/// The line diff from `old` to `new`: hunks of changed lines with their context.
pub(crate) fn edit(old: &str, new: &str) -> Lines {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Lines::default();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let (old_range, new_range) =
            (first.old_range().start..last.old_range().end, first.new_range().start..last.new_range().end);
        out.push(
            Mark::Hunk,
            format!(
                "@@ -{},{} +{},{} @@",
                old_range.start + 1,
                old_range.len(),
                new_range.start + 1,
                new_range.len()
            ),
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let (mark, sign) = match change.tag() {
                    ChangeTag::Delete => (Mark::Removed, '-'),
                    ChangeTag::Insert => (Mark::Added, '+'),
                    ChangeTag::Equal => (Mark::Context, ' '),
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                out.push(mark, format!("{sign}{}", text.strip_suffix('\r').unwrap_or(text)));
            }
        }
    }
    out
}

/// A diff already written as text, each line marked by its first character.
pub(crate) fn written(text: &str) -> Lines {
    let mut out = Lines::default();
    for line in text.lines() {
        let mark = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => Mark::Added,
            Some(b'-') if !line.starts_with("---") => Mark::Removed,
            Some(b'@') if line.starts_with("@@") => Mark::Hunk,
            Some(b'*') if line.starts_with("*** ") => Mark::Hunk,
            _ => Mark::Context,
        };
        out.push(mark, line.to_owned());
    }
    out
}

/// Whether `text` reads as a diff: a hunk header, a `diff --git` line or a patch's first line.
pub(crate) fn is_diff(text: &str) -> bool {
    text.lines().take(400).any(|line| {
        line.starts_with("@@ -") || line.starts_with("diff --git ") || line.starts_with("*** Begin Patch")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_of_two_lines_in_sixty_shows_those_two_with_context() {
        let old: String = (0..60).map(|i| format!("línea {i} — 日本語 🦀 e\u{301}\n")).collect();
        let new = old.replace("línea 10 ", "línea diez ").replace("línea 40 ", "línea cuarenta ");
        let lines = edit(&old, &new);
        assert_eq!((lines.added, lines.removed), (2, 2));
        let hunks = lines.lines.iter().filter(|(mark, _)| *mark == Mark::Hunk).count();
        assert_eq!(hunks, 2, "two changes far apart are two hunks");
        assert_eq!(lines.lines.len(), 2 + 2 * (2 + 2 * CONTEXT_LINES));
        assert!(lines.lines.contains(&(Mark::Hunk, "@@ -8,7 +8,7 @@".to_owned())), "{:?}", lines.lines);
        let html = lines.render().into_string();
        assert!(html.contains("<span class=\"del\">-línea 10 — 日本語 🦀 e\u{301}</span>"), "{html}");
        assert!(!html.contains('\n'), "one block per line, no blank line between: {html}");
    }

    #[test]
    fn an_edit_without_a_final_newline_and_with_crlf_reads_cleanly() {
        let lines = edit("a\r\nb\r\nc", "a\r\nB\r\nc");
        assert_eq!((lines.added, lines.removed), (1, 1));
        assert!(lines.lines.iter().all(|(_, line)| !line.ends_with('\r')), "{:?}", lines.lines);
        assert_eq!(edit("same", "same").lines.len(), 0);
    }

    #[test]
    fn written_diffs_and_patches_are_recognised_and_marked() {
        let text = "--- a/x.rs\n+++ b/x.rs\n@@ -1,2 +1,2 @@\n-old\n+new\n same";
        assert!(is_diff(text));
        let html = written(text).render().into_string();
        assert!(html.contains("<span class=\"del\">-old</span>"), "{html}");
        assert!(html.contains("<span class=\"add\">+new</span>"), "{html}");
        assert!(!is_diff("just text\n- a list item"));
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch";
        assert!(is_diff(patch));
        assert_eq!((written(patch).added, written(patch).removed), (1, 1));
    }
}
