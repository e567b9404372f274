//! The filler text every session generator is made of: words from a profile's own list (or a
//! Zipfian vocabulary), joined in one of the two ways the generators have always drawn them.
//!
//! The order of draws is part of each benchmark's published data, so the two builders keep
//! exactly the draws of the generators they replaced: a change here changes every figure.

use crate::rng::Rng;

/// Words each followed by a number and a separator, as the projection, crash and projection
/// benchmark sessions draw them: per word, the word, then the number, then (if `newline` is
/// set) whether the separator is a line break.
#[derive(Clone, Copy, Debug)]
pub struct Numbered {
    /// The words.
    pub words: &'static [&'static str],
    /// Numbers are drawn below this.
    pub numbers_below: u64,
    /// `(numerator, denominator)`: the chance of a line break instead of a space; `None` means
    /// always a space, without drawing.
    pub newline: Option<(u64, u64)>,
}

impl Numbered {
    /// Words until the text is at least `len` bytes long (it may run a word past).
    pub fn at_least(&self, rng: &mut Rng, len: usize) -> String {
        let mut out = String::with_capacity(len + 16);
        while out.len() < len {
            out.push_str(self.words[rng.index(self.words.len())]);
            out.push_str(&rng.below(self.numbers_below).to_string());
            let newline =
                self.newline.is_some_and(|(numerator, denominator)| rng.chance(numerator, denominator));
            out.push(if newline { '\n' } else { ' ' });
        }
        out
    }

    /// Exactly `len` bytes (the words are ASCII, so any cut is a character boundary).
    pub fn exactly(&self, rng: &mut Rng, len: usize) -> String {
        let mut out = self.at_least(rng, len);
        out.truncate(len);
        out
    }
}

/// Words from `word` joined by spaces, a line break with probability `newline_per_mille`/1000
/// drawn before every word but the first, until the text is at least `len` bytes long: the
/// agent workload's and the Zipfian search sets' text.
pub fn joined<'a>(
    rng: &mut Rng,
    len: usize,
    newline_per_mille: u64,
    mut word: impl FnMut(&mut Rng) -> &'a str,
) -> String {
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        if !out.is_empty() {
            out.push(if rng.chance(newline_per_mille, 1000) { '\n' } else { ' ' });
        }
        out.push_str(word(rng));
    }
    out
}

/// An id shaped like a version-4 UUID, as agents name their records.
pub fn hex_id(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}
