//! The identifier analyzer: the whitespace- and bracket-delimited chunks of a text that are
//! not plain words (`src/api/client.ts`, `--max-output`, `v1.18.31`, a UUID), with their pieces
//! and path tails; and its query-time twin, for which a literal is one identifier or none.
//! docs/search.md explains the choices.

use tantivy::tokenizer::{Token, Tokenizer};

use crate::tokenize::{escape_at, ListedTokens, TokenList, IDENT_BYTES_MAX};

/// Where a chunk ends: whitespace, and the quotes, brackets and list punctuation that surround
/// values in prose, JSON, logs and shell commands.
pub(crate) fn is_chunk_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | ';' | '|')
        // Arrows, box drawing and bullets frame values in tool output (`  42→fn main`, trees).
        || matches!(c, '\u{2190}'..='\u{21FF}' | '\u{2500}'..='\u{257F}' | '\u{2022}' | '\u{2026}' | '\u{00B7}')
}

/// Trimmed from both ends of a chunk: sentence punctuation, and path anchors, so that
/// `./src/a.rs`, `/src/a.rs` and `src/a.rs` meet.
fn is_trimmed(c: char) -> bool {
    matches!(c, '.' | ':' | '!' | '?' | '/' | '\\' | '*' | '=' | '&')
}

/// Where a chunk also splits into pieces: `host:port`, `file.rs:12:5`, `--flag=value`.
fn is_piece_separator(c: char) -> bool {
    matches!(c, ':' | '=')
}

/// Whether a trimmed chunk is an identifier rather than a plain word: it has an alphanumeric
/// character and something else.
fn is_compound(chunk: &str) -> bool {
    chunk.chars().any(char::is_alphanumeric) && !chunk.chars().all(char::is_alphanumeric)
}

/// `chunk` without trimmed characters at either end, with its start offset within `chunk`.
fn trim(chunk: &str) -> (usize, &str) {
    let end = chunk.trim_end_matches(is_trimmed);
    let trimmed = end.trim_start_matches(is_trimmed);
    (end.len() - trimmed.len(), trimmed)
}

/// What an ASCII byte is to the chunk walk: most of any text is plain letters and digits,
/// which are told by one look-up and can never make a chunk an identifier on their own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A letter or digit.
    Alphanumeric,
    /// Other ASCII inside a chunk (`/`, `.`, `-`, `_`, `:`...).
    Other,
    Separator,
    Backslash,
}

const fn ascii_classes() -> [Class; 128] {
    let mut classes = [Class::Other; 128];
    let mut byte = 0;
    while byte < 128 {
        let c = byte as u8 as char;
        classes[byte] = if c.is_ascii_alphanumeric() {
            Class::Alphanumeric
        } else if c == '\\' {
            Class::Backslash
        } else if c.is_ascii_whitespace() || byte == 0x0b {
            Class::Separator
        } else {
            match c {
                '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | ';' | '|' => {
                    Class::Separator
                }
                _ => Class::Other,
            }
        };
        byte += 1;
    }
    classes
}

/// [`is_chunk_separator`] and the rest of the walk's view of every ASCII byte.
const ASCII_CLASSES: [Class; 128] = ascii_classes();

/// The identifier spans of `text`: `(byte offset, byte end)` of each compound chunk, of its
/// compound pieces and of its path tails, in text order. What the `ident` field indexes.
/// `emit` returns whether to go on.
pub(crate) fn ident_spans(text: &str, mut emit: impl FnMut(usize, usize) -> bool) {
    let going = std::cell::Cell::new(true);
    let mut guarded = |from: usize, to: usize| {
        if going.get() {
            going.set(emit(from, to));
        }
    };
    let bytes = text.as_bytes();
    // The chunk being walked, and whether it has anything but ASCII letters and digits: a
    // chunk of those alone is a plain word, never looked at again.
    let mut start = None;
    let mut compound = false;
    let mut offset = 0;
    while offset < bytes.len() {
        if !going.get() {
            return;
        }
        let byte = bytes[offset];
        let (separates, len, plain) = match ASCII_CLASSES.get(usize::from(byte)) {
            Some(Class::Alphanumeric) => (false, 1, true),
            Some(Class::Other) => (false, 1, false),
            Some(Class::Separator) => (true, 1, false),
            Some(Class::Backslash) => match escape_at(bytes, offset) {
                Some((len, separates)) => (separates, len, false),
                None => (false, 1, false),
            },
            None => {
                let c = text[offset..].chars().next().unwrap_or(' ');
                (is_chunk_separator(c), c.len_utf8(), false)
            }
        };
        if separates {
            if let Some(from) = start.take() {
                if compound {
                    chunk_spans(&text[from..offset], from, &mut guarded);
                }
            }
        } else {
            if start.is_none() {
                start = Some(offset);
                compound = false;
            }
            compound |= !plain;
        }
        offset += len;
    }
    if let (Some(from), true, true) = (start, compound, going.get()) {
        chunk_spans(&text[from..], from, &mut guarded);
    }
}

fn chunk_spans(chunk: &str, base: usize, emit: &mut impl FnMut(usize, usize)) {
    let (lead, whole) = trim(chunk);
    if whole.is_empty() || whole.len() >= IDENT_BYTES_MAX {
        return;
    }
    // Pieces and tails can trim to the same span (`a\\b` has two backslashes): each once.
    let mut seen: Vec<(usize, usize)> = Vec::new();
    let mut once = |from: usize, to: usize| {
        if !seen.contains(&(from, to)) {
            seen.push((from, to));
            emit(from, to);
        }
    };
    let whole_start = base + lead;
    // Line and column numbers (`src/a.rs:12:5`, `host:8080`, `12:30`) make every mention a
    // term of its own: the chunk is indexed without them. Searched in full, such a value is
    // found as the phrase of its words.
    let mut core = whole;
    while let Some((head, tail)) = core.rsplit_once(is_piece_separator) {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        core = head;
    }
    with_suffixes(trim(core).1, whole_start, &mut once);
    if whole.contains(is_piece_separator) {
        let mut piece_start = 0;
        for (offset, c) in whole.char_indices().chain(std::iter::once((whole.len(), ':'))) {
            if is_piece_separator(c) {
                let (piece_lead, piece) = trim(&whole[piece_start..offset]);
                if piece.len() < whole.len() {
                    with_suffixes(piece, whole_start + piece_start + piece_lead, &mut once);
                }
                piece_start = offset + c.len_utf8();
            }
        }
    }
}

/// The most path components a tail has: `/home/u/proj/src/api/client.ts` yields
/// `src/api/client.ts` and shorter, not every deeper tail (each would be a term of its
/// own). A longer partial path is still found, as a phrase (see `query.rs`).
const TAIL_COMPONENTS_MAX: usize = 3;

/// Emits `span` (at `start`) if it is compound, and each compound tail of it that follows a
/// path separator (`/`, `\`) or a `::`, up to [`TAIL_COMPONENTS_MAX`] components:
/// `src/api/client.ts` also yields `api/client.ts` and `client.ts`, so a path is found by its
/// tail and an absolute path by its relative form.
fn with_suffixes(span: &str, start: usize, emit: &mut impl FnMut(usize, usize)) {
    if !is_compound(span) {
        return;
    }
    emit(start, start + span.len());
    let bytes = span.as_bytes();
    let tails: Vec<usize> = span
        .char_indices()
        .filter_map(|(offset, c)| match c {
            '/' | '\\' => Some(offset + 1),
            ':' if bytes.get(offset + 1) == Some(&b':') => Some(offset + 2),
            _ => None,
        })
        .collect();
    let skip = tails.len().saturating_sub(TAIL_COMPONENTS_MAX);
    for &tail in &tails[skip..] {
        let (lead, rest) = trim(&span[tail.min(span.len())..]);
        if is_compound(rest) && !rest.starts_with(':') {
            let from = start + tail + lead;
            emit(from, from + rest.len());
        }
    }
}

/// The single identifier token a query literal stands for, if the whole literal is one
/// compound chunk; `None` for plain words and for several chunks.
pub(crate) fn ident_of_literal(literal: &str) -> Option<String> {
    let literal = literal.trim();
    if literal.is_empty() || literal.contains(is_chunk_separator) {
        return None;
    }
    let (_, whole) = trim(literal);
    (is_compound(whole) && whole.len() < IDENT_BYTES_MAX).then(|| whole.to_lowercase())
}

/// The identifier analyzer used while indexing.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdentTokenizer {
    tokens: TokenList,
}

impl Tokenizer for IdentTokenizer {
    type TokenStream<'a> = ListedTokens<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> ListedTokens<'a> {
        self.tokens.clear();
        let tokens = &mut self.tokens;
        ident_spans(text, |from, to| {
            // `str::to_lowercase`, as the query side lower-cases a literal.
            tokens.push(from, to, |out| match &text[from..to] {
                ascii if ascii.is_ascii() => {
                    out.push_str(ascii);
                    out.make_ascii_lowercase();
                }
                other => out.push_str(&other.to_lowercase()),
            });
            true
        });
        self.tokens.stream()
    }
}

/// The identifier analyzer the query parser uses: a literal is one identifier or none.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdentQueryTokenizer {
    tokens: Vec<Token>,
}

impl Tokenizer for IdentQueryTokenizer {
    type TokenStream<'a> = ListedTokens<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> ListedTokens<'a> {
        self.tokens.clear();
        if let Some(ident) = ident_of_literal(text) {
            self.tokens.push(Token {
                offset_from: 0,
                offset_to: text.len(),
                position: 0,
                text: ident,
                position_length: 1,
            });
        }
        ListedTokens { tokens: &mut self.tokens[..], next: 0 }
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::TextAnalyzer;

    use super::*;

    fn idents(text: &str) -> Vec<String> {
        let mut analyzer = TextAnalyzer::from(IdentTokenizer::default());
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        stream.process(&mut |token| out.push(token.text.clone()));
        out
    }

    #[test]
    fn identifiers_are_whole_chunks() {
        assert_eq!(
            idents("read src/api/client.ts, then `--max-output=5` (v1.18.31)."),
            ["src/api/client.ts", "api/client.ts", "client.ts", "--max-output", "v1.18.31"]
        );
        assert_eq!(idents("ECONNRESET at 0x7f3a9c"), Vec::<String>::new());
        assert_eq!(idents("fn test_user_auth()"), ["test_user_auth"]);
        assert_eq!(
            idents("id 550E8400-e29b-41d4-a716-446655440000:"),
            ["550e8400-e29b-41d4-a716-446655440000"]
        );
        assert_eq!(idents("./src/main.rs:12:5: error"), ["src/main.rs", "main.rs"]);
        assert!(idents("at localhost:8080 12:30").is_empty());
        assert_eq!(idents("std::io::Error"), ["std::io::error", "io::error"]);
        assert_eq!(idents("  42→use std::io;\n├── src/a.rs"), ["std::io", "src/a.rs", "a.rs"]);
        assert_eq!(
            idents("/h/u/p/src/api/client.ts"),
            ["h/u/p/src/api/client.ts", "src/api/client.ts", "api/client.ts", "client.ts"]
        );
        assert_eq!(idents(r#"{"file_path":"src/a.rs"}"#), ["file_path", "src/a.rs", "a.rs"]);
        assert_eq!(idents("&& || -- ..."), Vec::<String>::new());
    }

    #[test]
    fn json_escapes_separate_identifiers() {
        let json = r#"{"content":"fn main() {\n    run(\"src/a.rs\")\n}\nend","path":"C:\\new\\x.rs"}"#;
        assert_eq!(idents(json), ["src/a.rs", "a.rs", r"c:\\new\\x.rs", r"new\\x.rs", "x.rs"]);
    }

    /// The walk as it was written first, a char at a time: what the byte walk must match.
    fn spans_by_chars(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut emit = |from: usize, to: usize| out.push((from, to));
        let bytes = text.as_bytes();
        let (mut start, mut skip_to) = (None, 0);
        for (offset, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            if offset < skip_to {
                continue;
            }
            let escape = escape_at(bytes, offset);
            if let Some((len, _)) = escape {
                skip_to = offset + len;
            }
            if is_chunk_separator(c) || escape.is_some_and(|(_, separates)| separates) {
                if let Some(from) = start.take() {
                    chunk_spans(&text[from..offset], from, &mut emit);
                }
            } else if start.is_none() {
                start = Some(offset);
            }
        }
        out
    }

    fn spans(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        ident_spans(text, |from, to| {
            out.push((from, to));
            true
        });
        out
    }

    #[test]
    fn every_ascii_byte_is_classed_as_the_separator_test_says() {
        for byte in 0u8..128 {
            let separator = ASCII_CLASSES[usize::from(byte)] == Class::Separator;
            assert_eq!(separator, is_chunk_separator(char::from(byte)), "{byte:#04x}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_byte_walk_finds_what_the_char_walk_found(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-zA-Z0-9]{1,6}",
                    "[ \t\n\x0b\x0c\u{3000}\u{a0}→├•]",
                    "[-_./:=\\\\\"'(){}<>,;|!?*&]{1,2}",
                    "(\\\\n|\\\\t|\\\\\"|\\\\\\\\|\\\\u00e9)",
                    "[東京🦀e\u{301}ÉØ]{1,3}",
                ],
                0..24,
            )
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(spans(&text), spans_by_chars(&text), "{:?}", text);
        }
    }

    #[test]
    fn query_literals_are_one_identifier_or_none() {
        assert_eq!(ident_of_literal("--max-output").as_deref(), Some("--max-output"));
        assert_eq!(ident_of_literal("SRC/Api/client.ts.").as_deref(), Some("src/api/client.ts"));
        assert_eq!(ident_of_literal("ECONNRESET"), None);
        assert_eq!(ident_of_literal("two words"), None);
    }
}
