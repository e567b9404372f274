//! What people search a transcript for, taken out of its records: the searchable texts of a
//! record, those texts as a person reads them, and the identifier-like words in them (paths,
//! flags, ids, versions, snake_case names, URLs). The search tests check that each is found;
//! the search benchmark draws its identifier queries from them.

use annal_engine::{Block, Record};

/// The searchable texts of a record, in block order (every block but binary blobs).
pub fn searchable_texts(record: &Record) -> impl Iterator<Item = &str> {
    record.blocks.iter().filter_map(searchable_text)
}

/// The text a block is searched by, as the index takes it; `None` for a binary blob.
pub fn searchable_text(block: &Block) -> Option<&str> {
    match block {
        Block::Text { text } | Block::Thinking { text } => Some(text),
        Block::ToolCall { input, .. } => Some(input),
        Block::ToolResult { output, .. } => Some(output),
        Block::Blob { .. } => None,
    }
}

/// `text` as a person reads it: JSON escapes of whitespace and quotes in tool inputs (`\\n`,
/// `\\t`, `\\r`, `\\"`) become spaces, so nobody asks for `nfield` out of `\\nfield`; an escaped
/// backslash stays.
pub fn readable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('n' | 't' | 'r' | '"')) => {
                chars.next();
                out.push(' ');
            }
            ('\\', Some('\\')) => {
                chars.next();
                out.push_str("\\\\");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Identifier-like words of `text` (already [`readable`]), as a person would copy them out of
/// it: split at whitespace, quotes, brackets, list punctuation and the arrows and box drawing of
/// tool output, sentence punctuation trimmed, 6 to 99 bytes, with a letter or digit and something
/// else in them. Words a query would read as syntax (`-x` excludes x, `role:...` names a field)
/// are left out.
pub fn identifiers(text: &str) -> Vec<&str> {
    let separator = |c: char| {
        c.is_whitespace()
            || "\"'`()[]{}<>,;|".contains(c)
            || matches!(c, '\u{2190}'..='\u{21FF}' | '\u{2500}'..='\u{257F}' | '\u{2022}' | '\u{2026}' | '\u{00B7}')
    };
    text.split(separator)
        .map(|word| word.trim_matches(|c: char| ".:!?/\\*=&".contains(c)))
        .filter(|word| {
            let has_alnum = word.chars().any(char::is_alphanumeric);
            let compound = !word.chars().all(char::is_alphanumeric);
            let syntax = (word.starts_with(['-', '+'])
                && word.chars().nth(1).is_some_and(char::is_alphanumeric))
                || ["session:", "role:", "tool:", "target:", "error:", "text:", "ident:"]
                    .iter()
                    .any(|field| word.to_lowercase().starts_with(field));
            has_alnum && compound && !syntax && (6..100).contains(&word.len())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_read_as_spaces_and_syntax_is_left_out() {
        assert_eq!(readable(r#"{"a":"x\nsrc/main.rs\\y"}"#), r#"{"a":"x src/main.rs\\y"}"#);
        let text = "see src/api/client.ts, --max-output=200 and role:user; ERR_1A2B3C→next v1.2.3";
        assert_eq!(identifiers(text), ["src/api/client.ts", "--max-output=200", "ERR_1A2B3C", "v1.2.3"]);
    }
}
