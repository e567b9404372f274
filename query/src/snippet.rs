//! Snippets: a short stretch of an original around what matched, with the matches marked.
//!
//! The text is not stored in the index; a snippet is computed from the original read from the
//! journal, with the same word and identifier boundaries the index uses, so what is marked is
//! exactly what matched. Runs of whitespace and control characters (newlines included) fold to
//! one space, so a snippet is one line.

use std::ops::Range;

use crate::idents::ident_spans;
use crate::query::Terms;
use crate::tokenize::word_spans;

/// Only this much of a large original is scanned for matches (the rest is still searchable;
/// its snippet then shows the first match found in this part, or the beginning).
const SCAN_BYTES_MAX: usize = 4 << 20;
/// Matches looked at when choosing the window.
const MATCHES_MAX: usize = 4_096;

/// A one-line excerpt of an original with the matching terms marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snippet {
    /// The excerpt; `…` marks where the original goes on.
    pub text: String,
    /// Byte ranges of `text` that matched, in order, not overlapping.
    pub highlights: Vec<Range<usize>>,
}

impl Snippet {
    /// `text` with each highlight wrapped in `open` and `close`.
    pub fn marked(&self, open: &str, close: &str) -> String {
        let mut out =
            String::with_capacity(self.text.len() + self.highlights.len() * (open.len() + close.len()));
        let mut at = 0;
        for range in &self.highlights {
            out.push_str(&self.text[at..range.start]);
            out.push_str(open);
            out.push_str(&self.text[range.clone()]);
            out.push_str(close);
            at = range.end;
        }
        out.push_str(&self.text[at..]);
        out
    }

    /// The highlights as character (Unicode scalar value) offsets, for JSON consumers.
    pub fn highlight_chars(&self) -> Vec<(usize, usize)> {
        let char_at = |byte: usize| self.text[..byte].chars().count();
        self.highlights.iter().map(|r| (char_at(r.start), char_at(r.end))).collect()
    }
}

/// Whether the identifier `token` is `term` (already lower-cased), ignoring case as the
/// identifier analyzer does (`str::to_lowercase`).
fn equals_term(token: &str, term: &str) -> bool {
    if token.is_ascii() {
        token.len() == term.len() && token.eq_ignore_ascii_case(term)
    } else {
        token.to_lowercase() == term
    }
}

/// Whether the word `token` is `term`, lower-cased as the words analyzer does: character by
/// character (tantivy's `LowerCaser`). `str::to_lowercase` makes a word-final `Σ` a `ς`, so
/// `ΟΔΟΣ` was found (as `οδοσ`) but not marked.
fn equals_word(token: &str, term: &str) -> bool {
    if token.is_ascii() {
        token.len() == term.len() && token.eq_ignore_ascii_case(term)
    } else {
        token.chars().flat_map(char::to_lowercase).eq(term.chars())
    }
}

/// Whether every one of `terms` (numbered from `first`) has a match starting within `width`
/// bytes before `end`: the best window is found, scanning further cannot improve it.
fn all_within(last_start: &[Option<usize>], first: usize, terms: usize, end: usize, width: usize) -> bool {
    last_start[first..first + terms].iter().all(|s| s.is_some_and(|s| end.saturating_sub(s) <= width))
}

/// The matches of `terms` in `text`: (byte range, term number), in text order. A phrase
/// matches where its words stand in a row, and is one match spanning them. Each scan stops as
/// soon as a window of `width` bytes holds all of its terms.
fn matches(text: &str, terms: &Terms, width: usize) -> Vec<(usize, usize, usize)> {
    let (words, phrases, idents) = (terms.words.len(), terms.phrases.len(), terms.idents.len());
    let mut found = Vec::new();
    let mut last_start: Vec<Option<usize>> = vec![None; words + phrases + idents];
    if words + phrases > 0 {
        let longest = terms.phrases.iter().map(Vec::len).max().unwrap_or(1);
        let mut recent: std::collections::VecDeque<(usize, usize)> =
            std::collections::VecDeque::with_capacity(longest);
        word_spans(text, |from, to| {
            if recent.len() == longest {
                recent.pop_front();
            }
            recent.push_back((from, to));
            let token = &text[from..to];
            if let Some(n) = terms.words.iter().position(|t| equals_word(token, t)) {
                found.push((from, to, n));
                last_start[n] = Some(from);
            }
            for (n, phrase) in terms.phrases.iter().enumerate() {
                let Some(last_word) = phrase.last() else { continue };
                if recent.len() < phrase.len() || !equals_word(token, last_word) {
                    continue;
                }
                let run = recent.range(recent.len() - phrase.len()..);
                if phrase.iter().zip(run).all(|(word, &(a, b))| equals_word(&text[a..b], word)) {
                    let start = recent[recent.len() - phrase.len()].0;
                    found.push((start, to, words + n));
                    last_start[words + n] = Some(start);
                }
            }
            found.len() < MATCHES_MAX && !all_within(&last_start, 0, words + phrases, to, width)
        });
    }
    if idents > 0 {
        let base = words + phrases;
        ident_spans(text, |from, to| {
            if let Some(n) = terms.idents.iter().position(|t| equals_term(&text[from..to], t)) {
                found.push((from, to, base + n));
                last_start[base + n] = Some(from);
            }
            found.len() < 2 * MATCHES_MAX && !all_within(&last_start, base, idents, to, width)
        });
    }
    found.sort_unstable();
    found
}

/// The byte window of about `width` bytes holding the most distinct terms (then the most
/// matches, then the earliest).
fn best_window(found: &[(usize, usize, usize)], width: usize) -> Option<(usize, usize)> {
    let mut best: Option<((usize, usize), (usize, usize))> = None;
    let mut seen = Vec::new();
    for (i, &(start, _, _)) in found.iter().enumerate().take(MATCHES_MAX) {
        seen.clear();
        let mut last_end = start;
        let mut count = 0;
        for &(from, to, term) in &found[i..] {
            // The match the window opens with is in it however long it is (an identifier or a
            // phrase longer than the width was once cut off unmarked). Saturating:
            // `SearchRequest::snippet_chars` may be anything up to `usize::MAX`.
            if count > 0 && to > start.saturating_add(width) {
                break;
            }
            let _ = from;
            count += 1;
            last_end = last_end.max(to);
            if !seen.contains(&term) {
                seen.push(term);
            }
        }
        let score = (seen.len(), count);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, (start, last_end)));
        }
    }
    best.map(|(_, window)| window)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A snippet of `text` for `terms`, about `width` characters long.
pub(crate) fn snippet(text: &str, terms: &Terms, width: usize) -> Snippet {
    let width = width.max(16);
    let scanned = &text[..floor_boundary(text, SCAN_BYTES_MAX)];
    let found = matches(scanned, terms, width);
    let (start, end) = match best_window(&found, width) {
        Some((first, last)) => {
            // Context before the first match: a third of the room the matches leave.
            let slack = width.saturating_sub(last - first);
            let mut start = floor_boundary(text, first.saturating_sub(slack / 3));
            // Do not open in the middle of a word if a word start is near.
            if start > 0 {
                // Past the whole space: a thin or ideographic space is several bytes long.
                let space = text[start..first].char_indices().find(|(_, c)| c.is_whitespace());
                if let Some((space, c)) = space.filter(|&(space, _)| space < 16) {
                    start += space + c.len_utf8();
                }
            }
            (start, floor_boundary(text, start.saturating_add(width).max(last)))
        }
        None => (0, floor_boundary(text, width)),
    };
    let mut end = end;
    if end < text.len() {
        let last_match = found.iter().filter(|m| m.1 <= end).map(|m| m.1).max().unwrap_or(start);
        if let Some(space) = text[last_match.max(start)..end].rfind(char::is_whitespace) {
            let cut = last_match.max(start) + space;
            if end - cut < 16 {
                end = cut;
            }
        }
    }
    build(text, start, end, &found)
}

/// The highlight of what was copied to `out` since `from`, without the spaces at its edges: an
/// identifier may begin or end with a control character, which is copied as a space. One at
/// the end of the snippet is trimmed away, and the highlight then ran past the text (`é\0`).
fn marked(out: &str, from: usize) -> Range<usize> {
    let part = &out[from..];
    let start = from + (part.len() - part.trim_start_matches(' ').len());
    start..(from + part.trim_end_matches(' ').len()).max(start)
}

/// Copies `text[start..end]`, folding whitespace and marking the matches inside.
fn build(text: &str, start: usize, end: usize, found: &[(usize, usize, usize)]) -> Snippet {
    // Matches inside the window, merged where they overlap (an identifier and its words).
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for &(from, to, _) in found.iter().filter(|m| m.0 >= start && m.1 <= end) {
        match ranges.last_mut() {
            Some(last) if from <= last.end => last.end = last.end.max(to),
            _ => ranges.push(from..to),
        }
    }
    let mut out = String::with_capacity(end - start + 8);
    if start > 0 {
        out.push('…');
    }
    let mut highlights = Vec::with_capacity(ranges.len());
    let mut pending = ranges.iter().peekable();
    let mut open: Option<(usize, usize)> = None;
    let mut last_space = true;
    for (offset, c) in text[start..end].char_indices() {
        let offset = start + offset;
        if let Some((from, to)) = open {
            if offset == to {
                highlights.push(marked(&out, from));
                open = None;
            }
        }
        if let Some(range) = pending.peek() {
            if range.start == offset {
                open = Some((out.len(), range.end));
                pending.next();
            }
        }
        if c.is_whitespace() || c.is_control() {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(c);
            last_space = false;
        }
    }
    if let Some((from, _)) = open {
        highlights.push(marked(&out, from));
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if end < text.len() {
        out.push('…');
    }
    Snippet { text: out, highlights }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str], idents: &[&str]) -> Terms {
        let owned = |list: &[&str]| list.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        Terms { words: owned(words), phrases: Vec::new(), idents: owned(idents) }
    }

    #[test]
    fn marks_matches_and_folds_lines() {
        let text = "first line\nthe request failed:\n  ECONNRESET while reading src/api/client.ts\nlast";
        let mut wanted = terms(&["econnreset"], &["src/api/client.ts"]);
        wanted.phrases.push(vec!["api".into(), "client".into()]);
        let s = snippet(text, &wanted, 200);
        assert_eq!(
            s.marked("[", "]"),
            "first line the request failed: [ECONNRESET] while reading [src/api/client.ts] last"
        );
        let s = snippet("a client, an api client", &wanted, 200);
        assert_eq!(s.marked("[", "]"), "a client, an [api client]");
    }

    #[test]
    fn multi_byte_spaces_before_the_window_are_stepped_over_whole() {
        // A window opening a few bytes before a thin space (U+2009) once started inside it.
        let wanted = terms(&["needle"], &["linux-arm64-0.21.5.tgz"]);
        for space in ['\u{2009}', '\u{3000}', '\u{a0}', ' '] {
            for pad in 0..40 {
                let text = format!(
                    "{}{space}needle linux-arm64-0.21.5.tgz 日本語 🦀 e\u{301} {}",
                    "x".repeat(100 + pad),
                    "tail ".repeat(30)
                );
                let s = snippet(&text, &wanted, 80);
                let marked = s.marked("[", "]");
                assert!(marked.contains("[needle] [linux-arm64-0.21.5.tgz]"), "{pad} {space:?}: {marked}");
            }
        }
    }

    #[test]
    fn long_texts_are_cut_around_the_match() {
        let text = format!("{} needle {}", "lorem ipsum ".repeat(200), "dolor sit ".repeat(200));
        let s = snippet(&text, &terms(&["needle"], &[]), 80);
        assert!(s.text.starts_with('…') && s.text.ends_with('…'), "{}", s.text);
        assert!(s.marked("[", "]").contains("[needle]"));
        assert!(s.text.chars().count() <= 90, "{}", s.text);
    }

    #[test]
    fn no_match_shows_the_beginning() {
        let s = snippet("héllo wörld", &terms(&["absent"], &[]), 80);
        assert_eq!(s.text, "héllo wörld");
        assert!(s.highlights.is_empty());
        let s = snippet("Héllo wörld", &terms(&["héllo"], &[]), 80);
        assert_eq!(s.highlight_chars(), vec![(0, 5)]);
    }
}
