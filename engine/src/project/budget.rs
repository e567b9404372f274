//! The token budget of a projection (window, output ceiling, margin, trigger, capacity and the
//! part budgets) and the names of the projection algorithms.
//!
//! `margin = min(2048, W/16)`, `capacity = W − O − margin` (what can be sent), and
//! `trigger = min(floor(0.8·W), capacity)`: a view at or under the trigger is sent as it is.

use std::fmt;

/// The most a history target may be configured to.
pub const HISTORY_TOKENS_MAX: u32 = 4_194_304;
/// The least default history target: three quarters of the trigger, but at least this (the
/// retention sweep's earlier pick for every window, `docs/evaluation.md`).
const HISTORY_TOKENS_DEFAULT_MIN: u32 = 65_536;
/// The smallest capacity a projection is planned for: below it even the framing of a compacted
/// view (the task prompt, a marker, the evidence label) would not fit.
pub const CAPACITY_TOKENS_MIN: u32 = 1_024;

/// The token budget of a projection. Build it with [`Budget::new`] and adjust the part budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Budget {
    /// The model's context window `W`.
    pub window_tokens: u32,
    /// The most the model may write in its reply, `O`.
    pub max_output_tokens: u32,
    /// The recent tail kept verbatim (default 8,192). The newest turn is kept whole even when
    /// larger, up to the capacity.
    pub tail_tokens: u32,
    /// The evidence index (default 2,048).
    pub evidence_tokens: u32,
    /// The compacted history: user text, assistant text, markers and a summary (default three
    /// quarters of the trigger and at least 65,536; at most [`HISTORY_TOKENS_MAX`]). User text is
    /// kept past it, up to the capacity. Scaling with the window keeps a large window's compacted
    /// view from standing mostly empty, while a fresh view still leaves a quarter of the trigger
    /// free before the next compaction (the retention sweep's pick on its tuning seeds against
    /// half the trigger and fixed targets, `docs/evaluation.md`).
    pub history_tokens: u32,
    /// The longest summary `summarized-v1` accepts (default 4,096); a longer one falls back.
    pub summary_tokens: u32,
}

/// Why a budget cannot be planned for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// `W − O − margin` is too small.
    #[error(
        "window {window} minus output {output} and margin {margin} leaves {capacity} tokens; at least {min} are needed"
    )]
    TooSmall {
        /// The window.
        window: u32,
        /// The output ceiling.
        output: u32,
        /// The margin.
        margin: u32,
        /// What is left (negative values shown as 0).
        capacity: u32,
        /// The least a projection is planned for.
        min: u32,
    },
    /// The history target is above [`HISTORY_TOKENS_MAX`].
    #[error("history target {0} tokens is above the most allowed, {HISTORY_TOKENS_MAX}")]
    HistoryTooLarge(u32),
}

impl Budget {
    /// The context windows annal's retention exam measures and its viewer offers, with the
    /// output ceilings of models that have them: label, window and output ceiling in tokens.
    pub const WINDOWS: [(&'static str, u32, u32); 5] = [
        ("16K", 16_384, 2_048),
        ("32K", 32_768, 4_096),
        ("128K", 131_072, 16_384),
        ("200K", 200_000, 32_000),
        ("1M", 1_000_000, 65_536),
    ];

    /// The default part budgets for window `window_tokens` and output ceiling `max_output_tokens`.
    pub fn new(window_tokens: u32, max_output_tokens: u32) -> Budget {
        let mut budget = Budget {
            window_tokens,
            max_output_tokens,
            tail_tokens: 8_192,
            evidence_tokens: 2_048,
            history_tokens: HISTORY_TOKENS_DEFAULT_MIN,
            summary_tokens: 4_096,
        };
        let three_quarters = budget.trigger_tokens() / 4 * 3;
        budget.history_tokens = three_quarters.clamp(HISTORY_TOKENS_DEFAULT_MIN, HISTORY_TOKENS_MAX);
        budget
    }

    /// `min(2048, W/16)`: room for what token estimates miss.
    pub fn margin_tokens(&self) -> u32 {
        (self.window_tokens / 16).min(2_048)
    }

    /// `W − O − margin`: the most a request may carry (0 when the output ceiling eats the window).
    pub fn capacity_tokens(&self) -> u32 {
        self.window_tokens.saturating_sub(self.max_output_tokens).saturating_sub(self.margin_tokens())
    }

    /// `min(floor(0.8·W), W − O − margin)`: a view above it is compacted.
    pub fn trigger_tokens(&self) -> u32 {
        let four_fifths = (u64::from(self.window_tokens) * 4 / 5) as u32;
        four_fifths.min(self.capacity_tokens())
    }

    /// Checks that the budget can be planned for.
    ///
    /// # Errors
    /// [`BudgetError`] naming what is out of range.
    pub fn check(&self) -> Result<(), BudgetError> {
        if self.history_tokens > HISTORY_TOKENS_MAX {
            return Err(BudgetError::HistoryTooLarge(self.history_tokens));
        }
        if self.capacity_tokens() < CAPACITY_TOKENS_MIN {
            return Err(BudgetError::TooSmall {
                window: self.window_tokens,
                output: self.max_output_tokens,
                margin: self.margin_tokens(),
                capacity: self.capacity_tokens(),
                min: CAPACITY_TOKENS_MIN,
            });
        }
        Ok(())
    }

    /// The budget's fields in a fixed order: what checkpoint keys and receipts record.
    pub(crate) fn fields(&self) -> [u32; 6] {
        [
            self.window_tokens,
            self.max_output_tokens,
            self.tail_tokens,
            self.evidence_tokens,
            self.history_tokens,
            self.summary_tokens,
        ]
    }

    pub(crate) fn from_fields(fields: [u32; 6]) -> Budget {
        let [window_tokens, max_output_tokens, tail_tokens, evidence_tokens, history_tokens, summary_tokens] =
            fields;
        Budget {
            window_tokens,
            max_output_tokens,
            tail_tokens,
            evidence_tokens,
            history_tokens,
            summary_tokens,
        }
    }
}

/// A projection algorithm; its version string is part of every checkpoint key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Originals under a budget, no model call (docs/projection.md, "deterministic-v1").
    DeterministicV1,
    /// `deterministic-v1` plus a handoff summary written by a host-supplied summarizer.
    SummarizedV1,
}

impl Algorithm {
    /// Every algorithm this build knows; a checkpoint naming any other version is retired.
    pub const ALL: [Algorithm; 2] = [Algorithm::DeterministicV1, Algorithm::SummarizedV1];

    /// The version string: `deterministic-v1` or `summarized-v1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::DeterministicV1 => "deterministic-v1",
            Algorithm::SummarizedV1 => "summarized-v1",
        }
    }

    /// Parses a version string; `None` for an unknown or retired version.
    pub fn parse(version: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.as_str() == version)
    }

    pub(crate) fn tag(self) -> u8 {
        match self {
            Algorithm::DeterministicV1 => 1,
            Algorithm::SummarizedV1 => 2,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.tag() == tag)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl BudgetError {
    /// What kind of failure this is: a budget is the caller's input.
    pub fn kind(&self) -> crate::ErrorKind {
        match self {
            BudgetError::TooSmall { .. } | BudgetError::HistoryTooLarge(_) => crate::ErrorKind::BadInput,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_formulas() {
        let budget = Budget::new(200_000, 32_000);
        assert_eq!(budget.margin_tokens(), 2_048);
        assert_eq!(budget.capacity_tokens(), 165_952);
        assert_eq!(budget.trigger_tokens(), 160_000);
        let small = Budget::new(16_000, 8_000);
        assert_eq!(small.margin_tokens(), 1_000);
        assert_eq!(small.capacity_tokens(), 7_000);
        assert_eq!(small.trigger_tokens(), 7_000);
        assert!(Budget::new(1_000, 500).check().is_err());
        assert_eq!(Budget::new(32_000, 4_000).history_tokens, 65_536);
        assert_eq!(budget.history_tokens, 120_000, "three quarters of the trigger");
        assert_eq!(Budget::new(1_000_000, 65_536).history_tokens, 600_000);
        assert!(Budget { history_tokens: HISTORY_TOKENS_MAX + 1, ..budget }.check().is_err());
        assert_eq!(Budget::from_fields(budget.fields()), budget);
    }

    #[test]
    fn algorithm_names() {
        for algorithm in Algorithm::ALL {
            assert_eq!(Algorithm::parse(algorithm.as_str()), Some(algorithm));
            assert_eq!(Algorithm::from_tag(algorithm.tag()), Some(algorithm));
        }
        assert_eq!(Algorithm::parse("deterministic-v0"), None);
    }
}
