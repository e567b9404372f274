//! The search-zipf profile: the search benchmark's generated sets. Agent-like records whose
//! words follow Zipf's law over a 30,000-word vocabulary (so document frequencies look like real
//! text), with identifiers planted in them: user text, assistant text with a tool call, tool
//! output (5% failed, 1% of 8–16 KB); 50–1,500 bytes of text per block otherwise; one block in
//! 200 carries a planted identifier. Records come in sessions of [`SESSION_RECORDS`].

use annal_engine::{Block, Record, Role};

use super::record;
use super::text::{hex_id, joined};
use crate::rng::Rng;

/// Records per session: record `n` is `g{n / SESSION_RECORDS}-{n % SESSION_RECORDS}`.
pub const SESSION_RECORDS: usize = 2_000;

/// An identifier planted in the generated data: unique, of one of the shapes people search for.
fn planted(rng: &mut Rng, n: u64) -> String {
    let word = ["auth", "cache", "ledger", "parser", "retry", "config"][(n % 6) as usize];
    match n % 7 {
        0 => format!("ERR_{:06X}", rng.next_u64() & 0xff_ffff),
        1 => format!("src/{word}/mod_{n}.rs"),
        2 => format!("v{}.{}.{}", n % 9 + 1, n % 31, n),
        3 => format!("--{word}-limit-{n}"),
        4 => hex_id(rng),
        5 => format!("0x{:08x}", rng.next_u64() & 0xffff_ffff),
        _ => format!("test_{word}_case_{n}"),
    }
}

/// The most common English words, then made-up words: a vocabulary whose words are drawn with
/// Zipf's law, so document frequencies look like real text (a few words everywhere, most rare).
#[derive(Debug)]
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

const COMMON: &[&str] = &[
    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "with", "as", "was", "on", "be", "this",
    "are", "by", "not", "or", "from", "at", "which", "but", "have", "an", "they", "you", "we", "can", "all",
    "there", "if", "will", "one", "so", "when", "what", "error", "file", "test", "function", "value",
    "return", "line", "build", "run", "type", "should", "now", "then", "check",
];
const SYLLABLES: &[&str] = &[
    "ka", "ro", "mi", "ten", "sul", "ver", "dan", "lo", "pri", "mex", "tor", "ba", "zin", "qua", "fel",
    "gor", "hup", "jas", "nel", "ost", "pay", "rin", "sev", "tul", "vom", "wex", "yar", "cal", "dre", "fin",
    "gla", "hem", "ilo", "jun", "kre", "lum",
];

impl Vocabulary {
    fn new(size: usize) -> Vocabulary {
        let mut words: Vec<String> = COMMON.iter().map(|w| (*w).to_owned()).collect();
        let mut n = 0usize;
        while words.len() < size {
            let (a, b, c) = (
                n % SYLLABLES.len(),
                (n / SYLLABLES.len()) % SYLLABLES.len(),
                n / (SYLLABLES.len() * SYLLABLES.len()),
            );
            let mut word = format!("{}{}", SYLLABLES[a], SYLLABLES[b]);
            if c > 0 {
                word.push_str(SYLLABLES[c % SYLLABLES.len()]);
                if c >= SYLLABLES.len() {
                    word.push_str(&c.to_string());
                }
            }
            words.push(word);
            n += 1;
        }
        let mut cumulative = Vec::with_capacity(size);
        let mut total = 0.0;
        for rank in 1..=size {
            total += 1.0 / rank as f64;
            cumulative.push(total);
        }
        Vocabulary { words, cumulative }
    }

    fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = rng.unit() * total;
        let rank = self.cumulative.partition_point(|&c| c < x).min(self.words.len() - 1);
        &self.words[rank]
    }

    fn text(&self, rng: &mut Rng, len: usize) -> String {
        joined(rng, len, 50, |rng| self.word(rng))
    }
}

/// The endless stream of the search-zipf profile's records, session after session.
#[derive(Debug)]
pub struct SearchZipf {
    vocabulary: Vocabulary,
    rng: Rng,
    produced: usize,
    planted: u64,
    /// The call the next record answers.
    pending_call: Option<String>,
}

impl SearchZipf {
    /// The records of `seed`.
    pub fn new(seed: u64) -> SearchZipf {
        SearchZipf {
            vocabulary: Vocabulary::new(30_000),
            rng: Rng::new(seed),
            produced: 0,
            planted: 0,
            pending_call: None,
        }
    }

    /// Text of `low..=high` bytes (with `big`, 1% of 8–16 KB), now and then with an
    /// identifier planted after its third word.
    fn text(&mut self, low: usize, high: usize, big: bool) -> String {
        let rng = &mut self.rng;
        let len =
            if big && rng.chance(10, 1000) { rng.between(8_000, 16_000) } else { rng.between(low, high) };
        let mut text = self.vocabulary.text(rng, len);
        if rng.chance(5, 1000) {
            self.planted += 1;
            let value = planted(rng, self.planted);
            let at =
                text.char_indices().map(|(i, _)| i).filter(|&i| text[..i].ends_with(' ')).nth(3).unwrap_or(0);
            text.insert_str(at, &format!("{value} "));
        }
        text
    }
}

impl Iterator for SearchZipf {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        let (session, index) = (self.produced / SESSION_RECORDS, self.produced % SESSION_RECORDS);
        self.produced += 1;
        let (role, blocks) = match (index % 3, self.pending_call.take()) {
            (_, Some(call_id)) => {
                let output = self.text(100, 1_500, true);
                let is_error = self.rng.chance(50, 1000);
                (Role::Tool, vec![Block::ToolResult { call_id, tool: "Bash".into(), is_error, output }])
            }
            (0, None) => (Role::User, vec![Block::Text { text: self.text(50, 400, false) }]),
            _ => {
                let call_id = format!("call_{:012x}", self.rng.next_u64() & 0xffff_ffff_ffff);
                self.pending_call = Some(call_id.clone());
                let said = self.text(50, 400, false);
                let command = self.text(20, 120, false);
                let input = serde_json::json!({ "command": command }).to_string();
                let call = Block::ToolCall { call_id, tool: "Bash".into(), input, target: String::new() };
                (Role::Assistant, vec![Block::Text { text: said }, call])
            }
        };
        Some(record(format!("g{session}-{index}"), role, blocks))
    }
}
