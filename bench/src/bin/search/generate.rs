//! The generated data sets: agent-like records whose words follow Zipf's law over a 30,000-word
//! vocabulary (so document frequencies look like real text), with identifiers planted in them.

use std::collections::BTreeMap;

use annal_bench::records::hex_id;
use annal_engine::{Block, Record, Role};
use annal_support::rng::Rng;

use crate::data::Dataset;

fn thousands(n: u64) -> String {
    annal_bench::report::thousands(n)
}

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
        let mut out = String::with_capacity(len + 16);
        while out.len() < len {
            if !out.is_empty() {
                out.push(if rng.chance(50, 1000) { '\n' } else { ' ' });
            }
            out.push_str(self.word(rng));
        }
        out
    }
}

/// How much to generate.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Size {
    Records(usize),
    Blocks(usize),
}

/// Agent-like records with a Zipfian vocabulary of 30,000 words, in sessions of 2,000 records:
/// user text, assistant text with a tool call, tool output (5% failed, 1% of 8–16 KB); 50–1,500
/// bytes of text per block otherwise; one block in 200 carries a planted identifier.
pub(crate) fn generated(size: Size, seed: u64) -> Dataset {
    let vocabulary = Vocabulary::new(30_000);
    let mut rng = Rng::new(seed);
    let mut sessions = Vec::new();
    let (mut blocks, mut records, mut planted_count, mut session) = (0usize, 0usize, 0u64, Vec::new());
    let mut pending_call = None;
    let done = |blocks: usize, records: usize| match size {
        Size::Records(n) => records >= n,
        Size::Blocks(n) => blocks >= n,
    };
    while !done(blocks, records) {
        let index = session.len();
        let mut text = |rng: &mut Rng, low: usize, high: usize, big: bool| {
            let len =
                if big && rng.chance(10, 1000) { rng.between(8_000, 16_000) } else { rng.between(low, high) };
            let mut text = vocabulary.text(rng, len);
            if rng.chance(5, 1000) {
                planted_count += 1;
                let value = planted(rng, planted_count);
                let at = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .filter(|&i| text[..i].ends_with(' '))
                    .nth(3)
                    .unwrap_or(0);
                text.insert_str(at, &format!("{value} "));
            }
            text
        };
        let (role, record_blocks) = match (index % 3, pending_call.take()) {
            (_, Some(call_id)) => {
                let output = text(&mut rng, 100, 1_500, true);
                (
                    Role::Tool,
                    vec![Block::ToolResult {
                        call_id,
                        tool: "Bash".into(),
                        is_error: rng.chance(50, 1000),
                        output,
                    }],
                )
            }
            (0, None) => (Role::User, vec![Block::Text { text: text(&mut rng, 50, 400, false) }]),
            _ => {
                let call_id = format!("call_{:012x}", rng.next_u64() & 0xffff_ffff_ffff);
                pending_call = Some(call_id.clone());
                let said = text(&mut rng, 50, 400, false);
                let command = text(&mut rng, 20, 120, false);
                let input = serde_json::json!({ "command": command }).to_string();
                let call = Block::ToolCall { call_id, tool: "Bash".into(), input, target: String::new() };
                (Role::Assistant, vec![Block::Text { text: said }, call])
            }
        };
        blocks += record_blocks.len();
        records += 1;
        session.push(Record {
            entry_id: format!("g{}-{index}", sessions.len()),
            role,
            timestamp: None,
            blocks: record_blocks,
            meta: BTreeMap::new(),
        });
        if session.len() == 2_000 || done(blocks, records) {
            sessions.push((format!("gen-{:04}", sessions.len()), std::mem::take(&mut session)));
        }
    }
    let name = match size {
        Size::Records(n) => format!("generated, {} records", thousands(n as u64)),
        Size::Blocks(n) => format!("generated, {} blocks", thousands(n as u64)),
    };
    Dataset { name, sessions }
}
