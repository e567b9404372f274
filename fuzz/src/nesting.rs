//! Query text built to break a recursive parser, for `search_query`: groups and `NOT`s nested
//! up to ten thousand deep, terms of thousands of characters, every operator and field of the
//! syntax; and the small stack each search runs on, so a nesting that slips past the query
//! crate's limits overflows it at once instead of passing unnoticed on the main thread's 8 MiB.

use arbitrary::Arbitrary;

/// Every piece of syntax tantivy's query grammar reads, and look-alikes of them.
const OPERATORS: [&str; 34] = [
    "AND", "OR", "NOT", "&&", "||", "+", "-", "*", "^2", "~1", "\"", "'", "\\", "(", ")", "text:", "ident:",
    "role:", "tool:", "error:", ":", "[a TO b]", "{a TO b}", "[* TO z]", "IN [a b]", "/re.*/", "NOT(",
    "\"a (b\"", "a\\(", "'((('", "*:*", "-(", "+(", "\u{202e}",
];

/// What long terms are made of: one huge word, many words, or runs of syntax.
const UNITS: [&str; 14] =
    ["x", "日", "🦀", "e\u{301}", "a ", "\u{3000}", "(", ")", "NOT ", "(NOT ", "-(", "+(", "\"", "\\"];

/// Words a nested group wraps.
const INNER: [&str; 6] =
    ["deploy", "ledger", "ECONNRESET", "src/api/client.ts", "日本語", "\"deploy ledger\""];

/// The stack each search runs on: deep enough for any query the limits let through (32 levels),
/// too shallow for the thousands a missed nesting would reach.
pub const SEARCH_STACK_BYTES: usize = 512 * 1024;

/// A piece of query text made to strain the parser.
#[derive(Arbitrary, Debug)]
pub enum Hostile {
    /// `depth` groups (or `NOT (` groups) around a word.
    Nested {
        /// How deep, up to 10,000.
        depth: u16,
        /// `NOT (` instead of `(`.
        nots: bool,
        /// Which word.
        inner: u8,
    },
    /// One unit repeated up to 20,000 times.
    Long {
        /// Which unit.
        unit: u8,
        /// How many times.
        times: u16,
    },
    /// One operator.
    Operator(u8),
}

impl Hostile {
    /// The text of the piece.
    pub fn text(&self) -> String {
        match *self {
            Hostile::Nested { depth, nots, inner } => {
                let depth = usize::from(depth) % 10_001;
                let open = if nots { "NOT (" } else { "(" };
                let word = INNER[usize::from(inner) % INNER.len()];
                format!("{}{word}{}", open.repeat(depth), ")".repeat(depth))
            }
            Hostile::Long { unit, times } => {
                UNITS[usize::from(unit) % UNITS.len()].repeat(usize::from(times) % 20_001)
            }
            Hostile::Operator(i) => OPERATORS[usize::from(i) % OPERATORS.len()].to_owned(),
        }
    }
}

/// Runs `work` on a thread of [`SEARCH_STACK_BYTES`], passing its panic on.
pub fn on_a_small_stack(work: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn_scoped(scope, work)
            .unwrap_or_else(|err| panic!("cannot start the search thread: {err}"));
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    });
}
