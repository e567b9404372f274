//! Token estimates: a pluggable counter, estimated once at append time and kept in the digests.

use std::fmt::Debug;

/// Counts the tokens a text costs a model.
///
/// Estimates are taken when a record is appended and stored in its digest, so projection
/// planning never re-reads text. Changing the counter affects records appended afterwards.
pub trait TokenCounter: Send + Sync + Debug {
    /// The estimated token count of `text`.
    fn count_tokens(&self, text: &str) -> u32;
}

/// The default estimate: one token per four characters, rounded up.
#[derive(Clone, Copy, Debug, Default)]
pub struct CharsPerFour;

impl TokenCounter for CharsPerFour {
    fn count_tokens(&self, text: &str) -> u32 {
        let chars = text.chars().count();
        u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
    }
}
