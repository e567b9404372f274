//! From what a person or an agent typed to a tantivy query, and the terms its snippets show.
//!
//! The query language is tantivy's (words, `"phrases"`, `AND`/`OR`/`NOT`, `+must`, `-not`,
//! `(groups)`, `role:user`), with all terms required by default. Values that look like
//! syntax but are identifiers (`--max-output`, `src/api/client.ts`, `localhost:8080`,
//! `v1.18.31`, `test_user_auth`, `foo(bar)`) are quoted before parsing: every unquoted word
//! with a character other than a letter or digit is searched as the literal it is, unless it is
//! an operator, a `+`/`-` before a plain word, a parenthesis that opens or closes a group, or a
//! `field:` of the index. A literal search (`literal: true`) skips the parser altogether.
//!
//! An identifier is searched exactly (the `ident` field) when the index has it anywhere; only
//! when it has not is it searched as the phrase of its words (`max-output` then finds
//! `max output`). So `--max-output` never returns prose that merely says "max output", and a
//! half-remembered identifier still finds something.

use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, QueryParser, QueryParserError, TermQuery};
use tantivy::schema::{IndexRecordOption, Schema};
use tantivy::Term;

use crate::error::{one_line, SearchError};
use crate::exclusion::guard_exclusions;
use crate::idents::ident_of_literal;
use crate::limits::{check_depth, check_length};
use crate::schema::{Fields, QUERY_FIELDS};
use crate::tokenize::{for_queries, words};

/// What a query looks for, for snippets: lower-cased words, phrases (words in a row) and
/// identifiers. Excluded terms are left out: a hit cannot contain them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Terms {
    pub(crate) words: Vec<String>,
    pub(crate) phrases: Vec<Vec<String>>,
    pub(crate) idents: Vec<String>,
}

impl Terms {
    fn add(&mut self, fields: &Fields, term: &Term) {
        let value = term.value();
        let Some(text) = value.as_str() else { return };
        let list = if term.field() == fields.text {
            &mut self.words
        } else if term.field() == fields.ident {
            &mut self.idents
        } else {
            return;
        };
        if !list.iter().any(|t| t == text) {
            list.push(text.to_owned());
        }
    }

    fn collect(&mut self, fields: &Fields, query: &dyn Query) {
        if let Some(boolean) = query.downcast_ref::<BooleanQuery>() {
            for (occur, clause) in boolean.clauses() {
                if *occur != Occur::MustNot {
                    self.collect(fields, clause.as_ref());
                }
            }
        } else if let Some(phrase) = query.downcast_ref::<PhraseQuery>() {
            let words: Vec<String> = phrase
                .phrase_terms()
                .iter()
                .filter(|t| t.field() == fields.text)
                .filter_map(|t| t.value().as_str().map(str::to_owned))
                .collect();
            if words.len() > 1 && !self.phrases.contains(&words) {
                self.phrases.push(words);
            }
        } else if let Some(term) = query.downcast_ref::<TermQuery>() {
            self.add(fields, term.term());
        } else {
            query.query_terms(&mut |term, _| self.add(fields, term));
        }
    }
}

/// A parsed query and the terms it looks for.
pub(crate) struct Parsed {
    pub(crate) query: Box<dyn Query>,
    pub(crate) terms: Terms,
}

/// Whether the index has an identifier term (so it can be searched exactly).
pub(crate) type IdentExists<'a> = &'a dyn Fn(&str) -> bool;

/// The words the index has that start with a prefix (a word still being typed).
pub(crate) type Expand<'a> = &'a dyn Fn(&str) -> Vec<String>;

/// Reads query text. Built once per index: the parser and its analyzers are reused.
pub(crate) struct QueryReader {
    parser: QueryParser,
    fields: Fields,
}

impl QueryReader {
    pub(crate) fn new(schema: Schema, fields: Fields) -> QueryReader {
        let mut parser = QueryParser::new(schema, vec![fields.text, fields.ident], for_queries());
        parser.set_conjunction_by_default();
        QueryReader { parser, fields }
    }

    /// Parses `text` (query syntax, or a literal when `literal`); with `expand`, its last word
    /// matches every word that starts with it.
    pub(crate) fn parse(
        &self,
        text: &str,
        literal: bool,
        exists: IdentExists<'_>,
        expand: Option<Expand<'_>>,
    ) -> Result<Parsed, SearchError> {
        if text.trim().is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        check_length(text)?;
        // The last word becomes the group of the words it starts: `rest (obsidian OR obsidians)`.
        let grouped = expand.filter(|_| !literal).and_then(|expand| {
            let (rest, word) = last_word(text)?;
            let mut words = expand(&word);
            words.retain(|w| w.chars().all(char::is_alphanumeric));
            if words.is_empty() {
                words.push(word);
            }
            Some(format!("{rest}({})", words.join(" OR ")))
        });
        let query = if literal {
            literal_query(&self.fields, text, exists)?
        } else {
            let prepared = protect_identifiers(grouped.as_deref().unwrap_or(text), exists);
            check_depth(&prepared)?;
            self.parser
                .parse_query(&prepared)
                .map_err(|err| SearchError::Syntax { query: text.to_owned(), reason: describe(text, &err) })?
        };
        let mut terms = Terms::default();
        terms.collect(&self.fields, query.as_ref());
        Ok(Parsed { query: guard_exclusions(query), terms })
    }
}

/// The query before its last word, and that word as the index writes it (lower-cased), when
/// the text ends in a plain word: not after a space, not an operator, a field or inside quotes.
fn last_word(text: &str) -> Option<(&str, String)> {
    let start = text
        .rfind(|c: char| !c.is_alphanumeric())
        .map_or(0, |at| at + text[at..].chars().next().map_or(1, char::len_utf8));
    let (rest, word) = text.split_at(start);
    let plain = !word.is_empty() && !matches!(word, "AND" | "OR" | "NOT");
    let before = rest.chars().next_back();
    let quoted = rest.matches('"').count() % 2 == 1;
    if !plain || quoted || !before.is_none_or(char::is_whitespace) {
        return None;
    }
    let mut tokens = Vec::new();
    let mut analyzer = words();
    analyzer.token_stream(word).process(&mut |token| tokens.push(token.text.clone()));
    match tokens.as_slice() {
        [one] => Some((rest, one.clone())),
        _ => None,
    }
}

/// The text searched as written: one identifier the index has, else the phrase of its words.
fn literal_query(
    fields: &Fields,
    text: &str,
    exists: IdentExists<'_>,
) -> Result<Box<dyn Query>, SearchError> {
    if let Some(ident) = ident_of_literal(text).filter(|ident| exists(ident)) {
        let term = Term::from_field_text(fields.ident, &ident);
        return Ok(Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)));
    }
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(text);
    let mut terms = Vec::new();
    stream
        .process(&mut |token| terms.push((token.position, Term::from_field_text(fields.text, &token.text))));
    match terms.len() {
        0 => Err(SearchError::EmptyQuery),
        1 => Ok(Box::new(TermQuery::new(terms.remove(0).1, IndexRecordOption::WithFreqs))),
        _ => Ok(Box::new(PhraseQuery::new_with_offset(terms))),
    }
}

/// One line on what is wrong with a query.
fn describe(text: &str, err: &QueryParserError) -> String {
    if text.chars().filter(|&c| c == '"').count() % 2 == 1 {
        return "a double quote is not closed".into();
    }
    let (open, close) = (text.matches('(').count(), text.matches(')').count());
    if open != close {
        return format!("{open} opening and {close} closing parentheses");
    }
    match err {
        QueryParserError::SyntaxError(_) => {
            "it is not valid query syntax (a dangling AND, OR or NOT?)".into()
        }
        QueryParserError::AllButQueryForbidden => "it only excludes terms; say what to find too".into(),
        QueryParserError::FieldDoesNotExist(field) => {
            format!("there is no field {field:?} (fields: {})", QUERY_FIELDS.join(", "))
        }
        other => one_line(other),
    }
}

/// Quotes the words of an unquoted query that are identifiers rather than syntax, and points
/// each at the `ident` field when the index has it, else at the `text` field as a phrase.
pub(crate) fn protect_identifiers(query: &str, exists: IdentExists<'_>) -> String {
    let mut out = String::with_capacity(query.len() + 8);
    let mut depth = 0usize;
    let mut rest = query;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        } else if (matches!(c, '-' | '+') && rest[1..].starts_with(['(', '"', '\'']))
            || (c == '(' && rest[1..].trim_start_matches(['(', '-', '+']).starts_with(['"', '\'']))
        {
            // A sign before a group or a phrase (`-(a OR b)`, `-"a b"`), a group opened before
            // a phrase (`("a b" OR c)`): copied, and what follows read as usual.
            depth += usize::from(c == '(');
            out.push(c);
            rest = &rest[1..];
        } else if c == '"' || c == '\'' {
            // A quoted phrase (and any suffix such as ~2, ^3 or the `)` closing a group) is
            // copied as typed.
            let end = quoted_end(rest, c);
            let suffix = rest[end..].find(char::is_whitespace).map_or(rest.len(), |n| end + n);
            depth = depth.saturating_sub(rest[end..suffix].matches(')').count());
            out.push_str(&rest[..suffix]);
            rest = &rest[suffix..];
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push_str(&protect_word(&rest[..end], &mut depth, exists));
            rest = &rest[end..];
        }
    }
    out
}

/// The end (exclusive) of the phrase opened by `quote` at the start of `text`, honouring
/// backslash escapes; the whole text when it is never closed (the parser then reports it).
pub(crate) fn quoted_end(text: &str, quote: char) -> usize {
    let mut escaped = false;
    for (offset, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if c == quote => return offset + c.len_utf8(),
            _ => {}
        }
    }
    text.len()
}

fn protect_word(word: &str, depth: &mut usize, exists: IdentExists<'_>) -> String {
    let body = word.trim_start_matches('(');
    let opened = word.len() - body.len();
    // Closing parentheses end groups only while groups are open: `foo(bar)` is an identifier.
    let trailing = body.len() - body.trim_end_matches(')').len();
    let closed = trailing.min(*depth + opened);
    let core = &body[..body.len() - closed];
    *depth = *depth + opened - closed;
    format!("{}{}{}", &word[..opened], protect_core(core, exists), &body[body.len() - closed..])
}

fn protect_core(core: &str, exists: IdentExists<'_>) -> String {
    if core.is_empty() || matches!(core, "AND" | "OR" | "NOT" | "*" | "&&" | "||") {
        return core.to_owned();
    }
    let plain_after =
        |rest: &str| rest.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '"' || c == '(');
    let (operator, body) = match core.chars().next() {
        Some(c @ ('+' | '-')) if plain_after(&core[1..]) => (c.to_string(), &core[1..]),
        _ => (String::new(), core),
    };
    if let Some((field, value)) = body.split_once(':') {
        // `error:` and `role:` take only their values; `error:ENOENT` pasted from a log is text.
        let valid = match field {
            "error" => matches!(value, "true" | "false"),
            "role" => matches!(value, "user" | "assistant" | "tool" | "system"),
            _ => QUERY_FIELDS.contains(&field) && !value.is_empty(),
        };
        if valid {
            if value.starts_with(['[', '{', '"', '\'']) {
                return core.to_owned();
            }
            return format!("{operator}{field}:{}", quote_if_needed(value));
        }
    }
    if body.chars().all(char::is_alphanumeric) {
        return core.to_owned();
    }
    match ident_of_literal(body) {
        Some(ident) if exists(&ident) => format!("{operator}ident:{}", quote_if_needed(body)),
        Some(_) => format!("{operator}text:{}", quote_if_needed(body)),
        None => format!("{operator}{}", quote_if_needed(body)),
    }
}

fn quote_if_needed(value: &str) -> String {
    if value.chars().all(char::is_alphanumeric) {
        return value.to_owned();
    }
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn everywhere(_: &str) -> bool {
        true
    }

    #[test]
    fn identifiers_are_quoted_and_syntax_is_kept() {
        let protect = |query: &str| protect_identifiers(query, &everywhere);
        assert_eq!(protect("--max-output"), r#"ident:"--max-output""#);
        assert_eq!(protect("ECONNRESET src/api/client.ts"), r#"ECONNRESET ident:"src/api/client.ts""#);
        assert_eq!(protect("-skip +keep"), "-skip +keep");
        assert_eq!(protect("(a OR v1.18.31) AND b"), r#"(a OR ident:"v1.18.31") AND b"#);
        assert_eq!(protect("foo(bar)"), r#""foo(bar)""#);
        assert_eq!(protect("role:user localhost:8080"), r#"role:user ident:"localhost:8080""#);
        assert_eq!(protect(r#""as typed" x"#), r#""as typed" x"#);
        assert_eq!(protect(r#"say"hi""#), r#""say\"hi\"""#);
        assert_eq!(protect("tool:Bash target:src/a.rs"), r#"tool:Bash target:"src/a.rs""#);
        assert_eq!(protect_identifiers("-src/a.rs", &|_| false), r#"-text:"src/a.rs""#);
        assert_eq!(protect("error:ENOENT error:true"), r#"ident:"error:ENOENT" error:true"#);
        assert_eq!(protect(r#"x -"a b" +'c d'"#), r#"x -"a b" +'c d'"#);
        assert_eq!(protect(r#"x NOT ("a b" OR -("c d")) v1.2"#), r#"x NOT ("a b" OR -("c d")) ident:"v1.2""#);
        assert_eq!(protect("x -(a OR b.c)"), r#"x -(a OR ident:"b.c")"#);
    }

    #[test]
    fn syntax_errors_are_one_line() {
        let (schema, fields) = crate::schema::schema();
        let reader = QueryReader::new(schema, fields);
        for bad in [r#""open quote"#, "a AND", "(a OR b", "-only"] {
            match reader.parse(bad, false, &everywhere, None) {
                Err(SearchError::Syntax { reason, .. }) => assert!(!reason.contains('\n'), "{reason}"),
                Err(other) => panic!("{bad}: {other}"),
                Ok(_) => panic!("{bad} parsed"),
            }
        }
        assert!(reader.parse("--max-output", false, &everywhere, None).is_ok());
    }

    #[test]
    fn terms_name_words_phrases_and_identifiers() {
        let (schema, fields) = crate::schema::schema();
        let query = r#"Reset src/API/client.ts -skipped "api client""#;
        let reader = QueryReader::new(schema, fields);
        let terms = reader.parse(query, false, &everywhere, None).map(|p| p.terms).map_err(|e| e.to_string());
        assert_eq!(
            terms,
            Ok(Terms {
                words: vec!["reset".into()],
                phrases: vec![vec!["api".into(), "client".into()]],
                idents: vec!["src/api/client.ts".into()],
            })
        );
    }
}
