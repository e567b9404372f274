//! The search target's reference matcher: which blocks of its fixed store a query must find,
//! computed from the originals with matching rules written out from `docs/search.md`, in code of
//! its own (never the query crate's tokenizers), for the query forms whose match set is well
//! defined: plain words, identifiers, phrases of plain words, `role:`/`tool:` fields, all joined
//! by AND (all written, or all implied), and literal searches; with every filter. Anything else
//! (OR, NOT, signs, groups, wildcards, whitespace other than a space, control text) is left to
//! the other checks.
//!
//! The fixture has multi-byte text (Unicode spaces, CJK, emoji, combining marks, right-to-left
//! text) but no backslash (no JSON escapes), which the checks below assert, so words and
//! identifiers follow the Unicode rules of `docs/search.md` and need no escape rules here. Words
//! are lower-cased a character at a time, identifiers as a whole string; the two differ only for
//! a word-final capital sigma, which the fixture does not have.

use std::collections::BTreeSet;

use annal_engine::{Block, Record, Role};
use annal_query::SearchRequest;

/// One indexed document: a block with text of a record, where the index files it.
#[derive(Debug)]
pub(crate) struct Doc {
    session: &'static str,
    order: u64,
    block: usize,
    role: Role,
    tool: Option<String>,
    error: bool,
    /// The block's words, in order.
    words: Vec<String>,
    /// The block's identifier terms.
    idents: BTreeSet<String>,
    /// What makes blocks copies of each other, which search lists once: role, kind, tool, text.
    pub(crate) copy: (Role, &'static str, Option<String>, String),
}

/// A document as a hit names it: session, sourceOrder, block.
pub(crate) type DocId = (String, u64, usize);

/// What one clause of a query asks of a block.
#[derive(Debug)]
enum Clause {
    /// These words, one after the other (one word: that word anywhere).
    Words(Vec<String>),
    /// This identifier term.
    Ident(String),
    Role(Role),
    Tool(String),
}

/// Words longer than this are not indexed (`docs/search.md`, words); the fixture has none.
const WORD_BYTES_MAX: usize = 100;
/// Identifier chunks this long or longer are not indexed.
const IDENT_BYTES_MAX: usize = 160;

/// The documents of `sessions` (each with the sourceOrder of its first record).
pub(crate) fn documents(sessions: &[(&'static str, u64, &[Record])]) -> Vec<Doc> {
    let mut docs = Vec::new();
    for &(session, first, records) in sessions {
        for (order, record) in (first..).zip(records) {
            for (block, content) in record.blocks.iter().enumerate() {
                let (text, tool, error, kind) = match content {
                    Block::Text { text } => (text, None, false, "text"),
                    Block::Thinking { text } => (text, None, false, "thinking"),
                    Block::ToolCall { input, tool, .. } => (input, Some(tool), false, "toolCall"),
                    Block::ToolResult { output, tool, is_error, .. } => {
                        (output, Some(tool), *is_error, "toolResult")
                    }
                    Block::Blob { .. } => continue,
                };
                assert!(!text.contains('\\'), "the oracle reads text without escapes: {text:?}");
                docs.push(Doc {
                    session,
                    order,
                    block,
                    role: record.role,
                    tool: tool.map(|t| t.to_ascii_lowercase()),
                    error,
                    words: words(text),
                    idents: idents(text),
                    copy: (record.role, kind, tool.cloned(), text.clone()),
                });
            }
        }
    }
    docs
}

/// The copy key of the document `id` names (every hit names an indexed document).
pub(crate) fn copy_of<'d>(docs: &'d [Doc], id: &DocId) -> &'d (Role, &'static str, Option<String>, String) {
    let doc = docs.iter().find(|d| d.session == id.0 && d.order == id.1 && d.block == id.2);
    &doc.unwrap_or_else(|| panic!("{id:?} is no document of the fixture")).copy
}

/// Runs of letters and digits (Unicode), lower-cased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && w.len() < WORD_BYTES_MAX)
        .map(lower_word)
        .collect()
}

/// Whitespace (Unicode: a thin or ideographic space too), the quotes, brackets and list
/// punctuation around values, and the arrows, box drawing and bullets of tool output.
fn is_chunk_separator(c: char) -> bool {
    c.is_whitespace()
        || "\"'`()[]{}<>,;|\u{2022}\u{2026}\u{b7}".contains(c)
        || matches!(c, '\u{2190}'..='\u{21ff}' | '\u{2500}'..='\u{257f}')
}

/// Sentence punctuation and path anchors, trimmed from both ends of a chunk.
fn trimmed(text: &str) -> &str {
    text.trim_matches(|c: char| ".:!?/\\*=&".contains(c))
}

/// A letter or digit, and something else.
fn is_compound(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric) && !text.chars().all(char::is_alphanumeric)
}

/// Identifier terms of `text`: each compound chunk (trailing `:N`/`=N` numbers cut off), its
/// pieces at `:` and `=`, and of each of those its tails after `/`, `\` or `::`, up to three.
fn idents(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for chunk in text.split(is_chunk_separator) {
        // The length limit is on the text as written: lower-casing can change it.
        let whole = trimmed(chunk);
        if whole.is_empty() || whole.len() >= IDENT_BYTES_MAX {
            continue;
        }
        let whole = whole.to_lowercase();
        let mut core = whole.as_str();
        while let Some(cut) = core.rfind([':', '=']) {
            let number = &core[cut + 1..];
            if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                break;
            }
            core = &core[..cut];
        }
        with_tails(trimmed(core), &mut out);
        if whole.contains([':', '=']) {
            for piece in whole.split([':', '=']).map(trimmed).filter(|p| p.len() < whole.len()) {
                with_tails(piece, &mut out);
            }
        }
    }
    out
}

fn with_tails(term: &str, out: &mut BTreeSet<String>) {
    if !is_compound(term) {
        return;
    }
    out.insert(term.to_owned());
    let mut starts = Vec::new();
    for (at, c) in term.char_indices() {
        if c == '/' || c == '\\' {
            starts.push(at + 1);
        } else if term[at..].starts_with("::") {
            starts.push(at + 2);
        }
    }
    for &start in starts.iter().rev().take(3) {
        let tail = trimmed(&term[start.min(term.len())..]);
        if is_compound(tail) && !tail.starts_with(':') {
            out.insert(tail.to_owned());
        }
    }
}

/// What an identifier typed in a query searches: the identifier term when the index holds it
/// anywhere, else the phrase of its words (also when it is no single chunk, like `foo(bar)`).
fn identifier(text: &str, docs: &[Doc]) -> Option<Clause> {
    let written = trimmed(text.trim());
    let term = written.to_lowercase();
    let single = !text.trim().is_empty() && !text.trim().contains(is_chunk_separator);
    if single
        && is_compound(&term)
        && written.len() < IDENT_BYTES_MAX
        && docs.iter().any(|d| d.idents.contains(&term))
    {
        return Some(Clause::Ident(term));
    }
    let words = words(text);
    (!words.is_empty()).then_some(Clause::Words(words))
}

/// A word of letters and digits (Unicode) short enough to be indexed, and no operator.
fn is_plain_word(token: &str) -> bool {
    token.chars().all(char::is_alphanumeric)
        && (1..WORD_BYTES_MAX).contains(&token.len())
        && !matches!(token, "AND" | "OR" | "NOT" | "TO" | "IN")
}

/// The clauses of a query the oracle can read, or `None`. `identifiers`: the words the target
/// types that are identifiers, searched as written.
fn clauses(text: &str, literal: bool, identifiers: &[&str], docs: &[Doc]) -> Option<Vec<Clause>> {
    // Words are split at spaces only: other whitespace (a thin or ideographic space) and
    // control characters are left to the other checks, as are escapes.
    if !text.chars().all(|c| c == ' ' || !(c.is_whitespace() || c.is_control())) || text.contains('\\') {
        return None;
    }
    if literal {
        return Some(vec![identifier(text, docs)?]);
    }
    let mut out = Vec::new();
    let mut tokens = text.split(' ').filter(|t| !t.is_empty()).peekable();
    // Whether the previous token was AND: a clause must follow it, and none may start the query.
    let mut after_and = false;
    // Clauses joined by a written AND, and clauses joined by nothing. Mixed, the parser reads
    // `a AND b c` as `(a AND b) OR c` (see fuzz/README.md), so the oracle reads one or the other.
    let (mut written, mut implied) = (false, false);
    while let Some(token) = tokens.next() {
        implied |= !out.is_empty() && !after_and && token != "AND";
        let clause = match token {
            "AND" if !out.is_empty() && !after_and => {
                after_and = true;
                written = true;
                continue;
            }
            "\"" => {
                let mut phrase = Vec::new();
                loop {
                    match tokens.next()? {
                        "\"" => break,
                        word if is_plain_word(word) => phrase.push(lower_word(word)),
                        _ => return None,
                    }
                }
                Clause::Words((!phrase.is_empty()).then_some(phrase)?)
            }
            word if is_plain_word(word) => Clause::Words(vec![lower_word(word)]),
            word if identifiers.contains(&word) => identifier(word, docs)?,
            _ => field(token)?,
        };
        after_and = false;
        out.push(clause);
    }
    let mixed = written && implied;
    (!out.is_empty() && !after_and && !mixed).then_some(out)
}

/// A word lower-cased as the index does: a character at a time.
fn lower_word(word: &str) -> String {
    word.chars().flat_map(char::to_lowercase).collect()
}

/// `role:R` for a role, `tool:T` for a plain (ASCII) tool name.
fn field(token: &str) -> Option<Clause> {
    let (name, value) = token.split_once(':')?;
    match name {
        "role" => [Role::User, Role::Assistant, Role::Tool, Role::System]
            .into_iter()
            .find(|role| role_name(*role) == value)
            .map(Clause::Role),
        "tool" if is_plain_word(value) && value.is_ascii() => Some(Clause::Tool(value.to_ascii_lowercase())),
        _ => None,
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::System => "system",
    }
}

fn matches(doc: &Doc, clause: &Clause) -> bool {
    match clause {
        Clause::Words(words) => doc.words.windows(words.len()).any(|run| run == words.as_slice()),
        Clause::Ident(term) => doc.idents.contains(term),
        Clause::Role(role) => doc.role == *role,
        Clause::Tool(tool) => doc.tool.as_ref() == Some(tool),
    }
}

/// Whether `doc` passes the request's filters; `fork` is the fork session and its fork point
/// in `parent` (a fork's filter admits the parent's records below it).
fn passes(doc: &Doc, request: &SearchRequest, fork: (&str, &str, u64)) -> Option<bool> {
    let tool = match &request.tool {
        None => true,
        // A filter the oracle has no rule for (empty, non-ASCII): left to the other checks.
        Some(tool) if tool.is_empty() || !tool.is_ascii() => return None,
        Some(tool) => doc.tool.as_deref() == Some(tool.to_ascii_lowercase().as_str()),
    };
    let session = match request.session.as_deref() {
        None => true,
        Some(name) if name == fork.0 => {
            doc.session == fork.0 || (doc.session == fork.1 && doc.order < fork.2)
        }
        Some(name) => doc.session == name,
    };
    Some(
        tool && session
            && request.role.is_none_or(|role| doc.role == role)
            && (!request.errors_only || doc.error)
            && request.source_orders.contains(&doc.order),
    )
}

/// Every document `request` must find, or `None` when its query is not a form the oracle reads.
pub(crate) fn expected(
    docs: &[Doc],
    request: &SearchRequest,
    identifiers: &[&str],
    fork: (&str, &str, u64),
) -> Option<BTreeSet<DocId>> {
    let clauses = clauses(&request.query, request.literal, identifiers, docs)?;
    let mut found = BTreeSet::new();
    for doc in docs {
        if passes(doc, request, fork)? && clauses.iter().all(|clause| matches(doc, clause)) {
            found.insert((doc.session.to_owned(), doc.order, doc.block));
        }
    }
    Some(found)
}
