//! The turn profiles' filler text: prose, shell output, source lines, codenames.
//!
//! Filler never contains a digit run longer than three, so the values the retention exam plants
//! (four digits or more, or an uppercase id) cannot occur in it by accident.

use crate::rng::Rng;

const WORDS: &[&str] = &[
    "the",
    "ledger",
    "parser",
    "config",
    "schema",
    "window",
    "budget",
    "journal",
    "report",
    "value",
    "handler",
    "request",
    "response",
    "module",
    "branch",
    "index",
    "record",
    "session",
    "export",
    "import",
    "field",
    "column",
    "migration",
    "retry",
    "cache",
    "worker",
    "queue",
    "latency",
    "owner",
    "review",
    "invoice",
    "account",
    "balance",
    "release",
    "rollback",
    "feature",
    "flag",
    "service",
    "client",
    "timeout",
    "payload",
    "header",
    "format",
    "encoder",
    "decoder",
    "batch",
    "stream",
    "we",
    "should",
    "keep",
    "check",
    "then",
    "after",
    "before",
    "because",
    "so",
    "and",
    "with",
];

const VERBS: &[&str] = &[
    "updated",
    "checked",
    "moved",
    "renamed",
    "verified",
    "measured",
    "split",
    "merged",
    "traced",
    "reviewed",
    "fixed",
    "added",
    "removed",
    "simplified",
    "documented",
];

/// A sentence of 8–18 filler words.
pub fn sentence(rng: &mut Rng) -> String {
    let count = rng.between(8, 18);
    let mut out = String::new();
    for i in 0..count {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(if i == 2 { rng.pick(VERBS) } else { rng.pick(WORDS) });
    }
    let mut chars = out.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('T');
    format!("{first}{}.", chars.as_str())
}

/// `sentences` filler sentences joined into one paragraph.
pub fn paragraph(rng: &mut Rng, sentences: usize) -> String {
    (0..sentences).map(|_| sentence(rng)).collect::<Vec<_>>().join(" ")
}

/// Prose of `paragraphs` paragraphs of 2–6 sentences.
pub fn prose(rng: &mut Rng, paragraphs: usize) -> String {
    (0..paragraphs)
        .map(|_| {
            let n = rng.between(2, 6);
            paragraph(rng, n)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// One line of shell output (build, test or log lines).
pub fn shell_line(rng: &mut Rng) -> String {
    let (a, b) = (rng.pick(WORDS), rng.pick(WORDS));
    match rng.between(0, 4) {
        0 => format!("test {a}::{b}_{} ... ok", rng.pick(VERBS)),
        1 => format!("   Compiling {a}-{b} v0.{}.{}", rng.between(0, 99), rng.between(0, 99)),
        2 => format!(
            "[{:03}] INFO {a} {b} {} in {} ms",
            rng.between(0, 999),
            rng.pick(VERBS),
            rng.between(1, 999)
        ),
        3 => {
            format!("warning: unused {a} `{b}` in src/{a}.rs:{}:{}", rng.between(1, 999), rng.between(1, 99))
        }
        _ => format!("{a}/{b}.rs | {} +{} -{}", rng.between(1, 99), rng.between(0, 99), rng.between(0, 99)),
    }
}

/// One line of source code.
pub fn source_line(rng: &mut Rng) -> String {
    let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
    match rng.between(0, 3) {
        0 => format!("    let {a}_{b} = {c}({});", rng.between(0, 999)),
        1 => format!("    if {a}.{b}() > {} {{ return Err({c}); }}", rng.between(0, 999)),
        2 => format!("    // {}", sentence(rng)),
        _ => format!("fn {a}_{b}(&self, {c}: u32) -> Result<(), Error> {{"),
    }
}

/// `lines` lines of `line` joined with newlines.
pub fn lines(rng: &mut Rng, count: usize, line: fn(&mut Rng) -> String) -> String {
    (0..count).map(|_| line(rng)).collect::<Vec<_>>().join("\n")
}

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ves", "tor", "an", "quin", "dra", "pel", "zu", "bar", "nix", "ost", "rem", "sol",
    "fy", "gan", "hul", "jex", "wim",
];

/// A pronounceable codename of three syllables (8,000 possible), used to name a fact's subject.
pub fn codename(rng: &mut Rng) -> String {
    (0..3).map(|_| rng.pick(SYLLABLES)).collect()
}

/// An uppercase alphanumeric run of `len` characters without the look-alikes 0/O and 1/I.
pub fn id_chars(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    (0..len).map(|_| ALPHABET[rng.index(ALPHABET.len())] as char).collect()
}
