//! The analyzers, registered by name for the index and the query parser, and the words
//! analyzer itself; shared with the snippet builder, which must agree on what a token is.
//!
//! - **words** (`text` field): runs of alphanumeric characters, lower-cased, with positions,
//!   so `connection reset` and phrases work, and `test_user_auth` is found by `auth`.
//! - **identifiers** (`ident` field): see `idents.rs`.
//!
//! docs/search.md explains the choice.

use tantivy::tokenizer::{LowerCaser, TextAnalyzer, Token, TokenStream, Tokenizer, TokenizerManager};

use crate::idents::{IdentQueryTokenizer, IdentTokenizer};

/// The words analyzer's name in the schema. Changing what it emits means a new name: the
/// schema then differs and old indexes are rebuilt.
pub(crate) const WORDS: &str = "annal_words_v2";
/// The identifier analyzer's name in the schema (versioned like [`WORDS`]).
pub(crate) const IDENTS: &str = "annal_idents_v2";
/// A whole value, lower-cased: tool names and targets.
pub(crate) const LOWER: &str = "annal_lower_v1";

/// Words this long or longer are dropped (base64 runs, minified code): nobody types them.
pub(crate) const WORD_BYTES_MAX: usize = 100;
/// Identifier chunks this long or longer are dropped.
pub(crate) const IDENT_BYTES_MAX: usize = 160;

/// The words analyzer: alphanumeric runs, long ones dropped, lower-cased (by the tokenizer
/// itself, into buffers it keeps, as tantivy's `LowerCaser` would).
pub(crate) fn words() -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default()).build()
}

/// Lower-cases `text` into `out` as tantivy's `LowerCaser` does (character by character, so
/// a final sigma is `σ`, as queries lower-cased by that filter have it).
pub(crate) fn lower_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.extend(text.chars().flat_map(char::to_lowercase));
    }
}

/// How many bytes at `offset` are a JSON escape that stands for whitespace or a quote (`\n`,
/// `\t`, `\r`, `\"`), or an escaped backslash (`\\`): tool inputs are JSON text, where a
/// newline is those two characters, and `\nfoo` must read as `foo`.
pub(crate) fn escape_at(bytes: &[u8], offset: usize) -> Option<(usize, bool)> {
    if bytes.get(offset) != Some(&b'\\') {
        return None;
    }
    match bytes.get(offset + 1) {
        // (length, whether it separates)
        Some(b'n' | b't' | b'r' | b'"') => Some((2, true)),
        Some(b'\\') => Some((2, false)),
        _ => None,
    }
}

fn lower() -> TextAnalyzer {
    TextAnalyzer::builder(tantivy::tokenizer::RawTokenizer::default()).filter(LowerCaser).build()
}

/// Tokenizers used while indexing (registered on the index).
pub(crate) fn register_for_indexing(manager: &TokenizerManager) {
    manager.register(WORDS, words());
    manager.register(IDENTS, IdentTokenizer::default());
    manager.register(LOWER, lower());
}

/// Tokenizers the query parser uses: the same words, identifiers as whole literals only.
pub(crate) fn for_queries() -> TokenizerManager {
    let manager = TokenizerManager::default();
    manager.register(WORDS, words());
    manager.register(IDENTS, IdentQueryTokenizer::default());
    manager.register(LOWER, lower());
    manager
}

/// The words tokenizer: [`word_spans`] as lower-cased tantivy tokens.
#[derive(Clone, Debug, Default)]
pub(crate) struct WordTokenizer {
    tokens: TokenList,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = ListedTokens<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> ListedTokens<'a> {
        self.tokens.clear();
        let tokens = &mut self.tokens;
        word_spans(text, |from, to| {
            tokens.push(from, to, |out| lower_into(&text[from..to], out));
            true
        });
        self.tokens.stream()
    }
}

/// Tokens kept between streams: indexing calls a tokenizer once per block, and a block has
/// thousands of tokens, so each token's text buffer is reused rather than allocated anew.
#[derive(Clone, Debug, Default)]
pub(crate) struct TokenList {
    tokens: Vec<Token>,
    len: usize,
}

impl TokenList {
    /// Tokens kept for the next stream at most; a larger list (one huge block) is let go.
    const KEPT_MAX: usize = 1 << 16;

    pub(crate) fn clear(&mut self) {
        self.tokens.truncate(Self::KEPT_MAX);
        self.len = 0;
    }

    /// Appends a token at `from..to` whose text `fill` writes.
    pub(crate) fn push(&mut self, from: usize, to: usize, fill: impl FnOnce(&mut String)) {
        if self.len == self.tokens.len() {
            self.tokens.push(Token::default());
        }
        let token = &mut self.tokens[self.len];
        token.offset_from = from;
        token.offset_to = to;
        token.position = self.len;
        token.position_length = 1;
        token.text.clear();
        fill(&mut token.text);
        self.len += 1;
    }

    pub(crate) fn stream(&mut self) -> ListedTokens<'_> {
        ListedTokens { tokens: &mut self.tokens[..self.len], next: 0 }
    }
}

/// Replays a list of tokens computed up front.
#[derive(Debug)]
pub(crate) struct ListedTokens<'a> {
    pub(crate) tokens: &'a mut [Token],
    pub(crate) next: usize,
}

impl TokenStream for ListedTokens<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// Calls `emit(from, to)` for each word of `text` (the words analyzer's tokens, before
/// lower-casing) while it returns true. Hand-written so snippets scan large outputs without
/// allocating.
pub(crate) fn word_spans(text: &str, mut emit: impl FnMut(usize, usize) -> bool) {
    let bytes = text.as_bytes();
    let mut start = None;
    let mut skip_to = 0;
    for (offset, c) in text.char_indices() {
        if offset < skip_to {
            continue;
        }
        if let Some((len, _)) = escape_at(bytes, offset) {
            // An escape is never part of a word, nor is the letter after its backslash.
            skip_to = offset + len;
            if let Some(from) = start.take() {
                if offset - from < WORD_BYTES_MAX && !emit(from, offset) {
                    return;
                }
            }
            continue;
        }
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(offset);
            }
        } else if let Some(from) = start.take() {
            if offset - from < WORD_BYTES_MAX && !emit(from, offset) {
                return;
            }
        }
    }
    if let Some(from) = start {
        if text.len() - from < WORD_BYTES_MAX {
            emit(from, text.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(text: &str) -> Vec<String> {
        let mut analyzer = words();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        stream.process(&mut |token| out.push(token.text.clone()));
        out
    }

    #[test]
    fn json_escapes_separate_words() {
        let json = r#"{"content":"fn main() {\n    run(\"src/a.rs\")\n}\nend","path":"C:\\new\\x.rs"}"#;
        assert_eq!(
            words_of(json),
            ["content", "fn", "main", "run", "src", "a", "rs", "end", "path", "c", "new", "x", "rs"]
        );
    }

    #[test]
    fn words_split_identifiers() {
        assert_eq!(
            words_of("test_user_auth ECONNRESET v1.18.31"),
            ["test", "user", "auth", "econnreset", "v1", "18", "31"]
        );
    }

    #[test]
    fn word_spans_match_the_analyzer() {
        let text = "Hello, wörld_2 x ".to_owned() + &"a".repeat(WORD_BYTES_MAX) + " end";
        let mut spans = Vec::new();
        word_spans(&text, |a, b| {
            spans.push(text[a..b].to_lowercase());
            true
        });
        assert_eq!(spans, words_of(&text));
    }
}
