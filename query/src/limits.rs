//! How long a query may be and how deeply it may nest, checked before tantivy's parser sees it.
//!
//! The parser (and everything after it that walks the parsed query: the terms for snippets, the
//! exclusion guard, tantivy's weights, dropping the tree) recurses once per group and per `NOT`,
//! so ten thousand `(` would overflow a thread's stack and abort the whole process: the command,
//! the web viewer or the MCP server with every request it was serving. Counting here is a loop
//! over the text, so any query is answered: searched, or refused with one line.

use crate::error::SearchError;
use crate::query::quoted_end;

/// The longest query a search reads, in bytes of UTF-8: a pasted error message or a log line
/// fits many times over.
pub(crate) const QUERY_BYTES_MAX: usize = 16 * 1024;

/// The deepest a query may nest groups and `NOT`s: people write two or three levels, and the
/// parser's recursion stays far from any thread's stack at this depth.
pub(crate) const QUERY_DEPTH_MAX: usize = 32;

/// Refuses a query longer than [`QUERY_BYTES_MAX`], whatever its syntax.
pub(crate) fn check_length(text: &str) -> Result<(), SearchError> {
    if text.len() > QUERY_BYTES_MAX {
        return Err(SearchError::QueryTooLong { bytes: text.len(), limit_bytes: QUERY_BYTES_MAX });
    }
    Ok(())
}

/// Refuses query syntax that nests deeper than [`QUERY_DEPTH_MAX`].
pub(crate) fn check_depth(syntax: &str) -> Result<(), SearchError> {
    let depth = nesting_depth(syntax);
    if depth > QUERY_DEPTH_MAX {
        return Err(SearchError::QueryTooDeep { depth, limit: QUERY_DEPTH_MAX });
    }
    Ok(())
}

/// How deeply the parser would recurse on `syntax`: open groups plus the `NOT`s waiting for
/// their operand, at the deepest point.
///
/// It reads the text as tantivy's grammar does: a backslash escapes the next character, a quote
/// opens a phrase only where a term starts (its parentheses are text), and `NOT` is an operator
/// only as a word of its own. Where the two could disagree it counts more, never less: a `NOT`
/// glued to a `(` counts, and `AND`/`OR` do not end a run of `NOT`s.
pub(crate) fn nesting_depth(syntax: &str) -> usize {
    let mut deepest = 0usize;
    // Open groups plus pending NOTs, everywhere.
    let mut depth = 0usize;
    // The pending NOTs of each open group's enclosing level, restored when it closes.
    let mut enclosing: Vec<usize> = Vec::new();
    // NOTs in a row at this level, waiting for an operand.
    let mut pending = 0usize;
    let mut term_starts = true;
    let mut rest = syntax;
    while let Some(c) = rest.chars().next() {
        let mut next = c.len_utf8();
        match c {
            '(' => {
                enclosing.push(pending);
                pending = 0;
                depth += 1;
                deepest = deepest.max(depth);
                term_starts = true;
            }
            ')' => {
                depth = depth.saturating_sub(pending + 1);
                // The closed group is the operand of the NOTs before it.
                let before = enclosing.pop().unwrap_or(0);
                depth = depth.saturating_sub(before);
                pending = 0;
                term_starts = false;
            }
            '"' | '\'' if term_starts => {
                next = quoted_end(rest, c);
                depth -= pending;
                pending = 0;
                term_starts = false;
            }
            '+' | '-' | ':' => term_starts = true,
            c if c.is_whitespace() => term_starts = true,
            _ => {
                next = word_len(rest);
                match &rest[..next] {
                    "NOT" => {
                        pending += 1;
                        depth += 1;
                        deepest = deepest.max(depth);
                    }
                    "AND" | "OR" => {}
                    _ => {
                        depth -= pending;
                        pending = 0;
                    }
                }
                term_starts = rest[next..].starts_with(':');
            }
        }
        rest = &rest[next..];
    }
    deepest
}

/// The length of the word at the start of `text`: up to whitespace, a parenthesis, a quote or
/// a colon, a backslash taking the character after it along.
fn word_len(text: &str) -> usize {
    let mut chars = text.char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '(' | ')' | '"' | '\'' | ':' if offset > 0 => return offset,
            c if c.is_whitespace() => return offset,
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_nots_count_and_text_does_not() {
        assert_eq!(nesting_depth("deploy ledger"), 0);
        assert_eq!(nesting_depth("(a OR b) AND (c OR (d e))"), 2);
        assert_eq!(nesting_depth("NOT a NOT b NOT c"), 1);
        assert_eq!(nesting_depth("NOT NOT NOT a"), 3);
        assert_eq!(nesting_depth("x NOT (NOT (a)) y"), 4);
        assert_eq!(nesting_depth("(((a)))(((b)))"), 3);
        // Parentheses inside a phrase or escaped are text.
        assert_eq!(nesting_depth(r#""(((((" text:'((((' a\(\(\("#), 0);
        // A quote inside a word opens no phrase: the parentheses after it count.
        assert_eq!(nesting_depth(r#"a"b (("#), 2);
        assert_eq!(nesting_depth("日本語 (🦀 OR e\u{301}) テスト"), 1);
        let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(nesting_depth(&deep), 10_000);
        assert_eq!(nesting_depth(&format!("{}a", "NOT ".repeat(20_000))), 20_000);
    }

    #[test]
    fn limits_refuse_with_one_line() {
        let deep = format!("{}a{}", "(".repeat(QUERY_DEPTH_MAX + 1), ")".repeat(QUERY_DEPTH_MAX + 1));
        let err = check_depth(&deep).map(|()| "accepted".to_owned()).unwrap_or_else(|e| e.to_string());
        assert!(err.contains("33 deep") && err.contains("32") && !err.contains('\n'), "{err}");
        let fits = format!("{}a{}", "(".repeat(QUERY_DEPTH_MAX), ")".repeat(QUERY_DEPTH_MAX));
        assert!(check_depth(&fits).is_ok());
        assert!(check_length(&"é".repeat(QUERY_BYTES_MAX / 2)).is_ok());
        assert!(check_length(&"é".repeat(QUERY_BYTES_MAX / 2 + 1)).is_err());
    }
}
