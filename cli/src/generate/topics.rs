//! What the generated sessions talk about: the user's requests, and the assistant's reasoning
//! and prose for each phase of a turn, as templates filled from the turn's topic.

use super::Phase;

/// One user request and the facts the turn's text refers to.
#[derive(Debug)]
pub(super) struct Topic {
    /// The user's message, verbatim.
    pub(super) ask: &'static str,
    /// What the user wants, as a phrase.
    pub(super) goal: &'static str,
    /// The file the work centres on, relative to the project root.
    pub(super) file: &'static str,
    pub(super) function: &'static str,
    /// The test that fails along the way.
    pub(super) test: &'static str,
    /// What the assistant finds, as a phrase following the function's name.
    pub(super) finding: &'static str,
    /// The assistant's closing message.
    pub(super) summary: &'static str,
    /// Whether the turn profiles a long run (and so produces a long log).
    pub(super) slow: bool,
}

pub(super) const TOPICS: [Topic; 8] = [
    Topic {
        ask: "`ledger report --monthly` panics on amounts with thousands separators like \
            `1,234.56`:\n\n    thread 'main' panicked at src/amount.rs:88:41:\n    called \
            `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }\n\nCan you \
            find out why and fix it? Keep the public API of `Amount` as it is.",
        goal: "amounts with thousands separators to parse",
        file: "src/amount.rs",
        function: "parse_amount",
        test: "amount::tests::parses_thousands_separator",
        finding: "hands the raw token to `str::parse::<i64>` after splitting on '.', so the ',' \
            reaches the integer parser",
        summary: "Fixed. `parse_amount` now strips thousands separators (`,` and the narrow \
            no-break space) before splitting off the cents, and rejects a separator in the wrong \
            place (`1,23.00`) with `AmountError::Separator` instead of panicking. `Amount`'s \
            public API is unchanged. Added `parses_thousands_separator` and \
            `rejects_misplaced_separator`; all 342 tests pass.",
        slow: false,
    },
    Topic {
        ask: "Nice. Can you also accept negative amounts written in parentheses, like `(45.00)`? \
            Our accountants export them that way from the spreadsheet.",
        goal: "parenthesised negative amounts",
        file: "src/lexer.rs",
        function: "lex_number",
        test: "lexer::tests::negative_in_parentheses",
        finding: "treats '(' as the start of a comment group, so `(45.00)` never reaches the number lexer",
        summary: "Done: the lexer now reads `(45.00)` and `(1,204.50 EUR)` as negative amounts when \
            the parentheses hold nothing but an amount, so comment groups like `(see invoice \
            4411)` still lex as before. I added four lexer tests, including one for an unbalanced \
            `(45.00`, which reports the column.",
        slow: false,
    },
    Topic {
        ask: "Run the full test suite and fix whatever is failing. Don't touch anything under fixtures/.",
        goal: "a green test suite without touching the fixtures",
        file: "src/report.rs",
        function: "Report::monthly",
        test: "report::tests::monthly_totals_balance",
        finding: "buckets postings by the local date, so a posting at 23:30 UTC lands in the next \
            month in CET",
        summary: "Two failures, one cause: `Report::monthly` bucketed postings by local time, so \
            postings near midnight on the last day of a month landed in the next one. It now \
            buckets by the ledger's own date, which is what the fixtures assume. Nothing under \
            fixtures/ changed; the suite is green (342 passed).",
        slow: false,
    },
    Topic {
        ask: "The monthly report takes almost 13 seconds on fixtures/big.ledger (200k postings). \
            Can you profile it and see what's going on? It used to be under a second.",
        goal: "the monthly report on the big fixture to be fast again",
        file: "src/report.rs",
        function: "Report::add_posting",
        test: "report::tests::monthly_report_big_fixture",
        finding: "re-sorts the whole bucket vector on every insert, which is quadratic in the \
            number of postings",
        summary: "The slowdown came from `Report::add_posting`, which re-sorted every month's \
            bucket on each insert (quadratic; 200k postings meant about 4·10¹⁰ comparisons). \
            Buckets are now a `BTreeMap<(Month, AccountId), Cents>` filled in one pass. On \
            fixtures/big.ledger the report takes 0.41 s instead of 12.84 s, and the output is \
            byte-identical (checked with `diff`).",
        slow: true,
    },
    Topic {
        ask: "Please make `--currency` default to the `default_currency` in ledger.toml when the \
            file has one, and keep EUR as the fallback.",
        goal: "the default currency to come from ledger.toml",
        file: "src/config.rs",
        function: "Config::load",
        test: "config::tests::default_currency_from_file",
        finding: "only reads the `[paths]` table and ignores everything else",
        summary: "`--currency` now defaults to `default_currency` from ledger.toml, then to EUR. An \
            unknown code in the file is an error that names the file and line (`ledger.toml:3: \
            unknown currency \"EUU\"`). Added tests for the three cases.",
        slow: false,
    },
    Topic {
        ask: "Add a regression test for the thousands-separator panic from this morning, using the \
            exact line from the bug report.",
        goal: "a regression test for the separator panic",
        file: "tests/parse.rs",
        function: "parse_ledger",
        test: "regression_thousands_separator_report",
        finding: "is the entry point the report command uses, so the test should go through it \
            rather than `parse_amount`",
        summary: "Added `tests/parse.rs::regression_thousands_separator_report`, which runs the \
            exact posting from the report (`2026-02-27 * Rent  Expenses:Rent  1,234.56 EUR`) \
            through `parse_ledger` and the monthly report. It fails on the commit before the fix \
            and passes now.",
        slow: false,
    },
    Topic {
        ask: "Clippy complains about a few things in amount.rs. Clean those up, but no behaviour \
            changes please.",
        goal: "a clean clippy run on amount.rs",
        file: "src/amount.rs",
        function: "Amount::checked_add",
        test: "amount::tests::checked_add_overflow",
        finding: "uses `as` casts that clippy flags as possibly truncating",
        summary: "Clippy is clean: replaced the truncating `as` casts with `i64::try_from`, used \
            `checked_add` where the old code wrapped silently (a test pins the overflow \
            behaviour), and removed a redundant clone. No behaviour changes; tests pass.",
        slow: false,
    },
    Topic {
        ask: "Great work. Write a short summary of everything we changed today for the PR description.",
        goal: "a PR description of today's changes",
        file: "CHANGELOG.md",
        function: "parse_amount",
        test: "amount::tests::parses_thousands_separator",
        finding: "is where most of today's changes meet",
        summary: "## Parsing and report fixes\n\n- Amounts with thousands separators (`1,234.56`) \
            parse instead of panicking; misplaced separators are a clear error.\n- Negative \
            amounts in parentheses (`(45.00)`) are accepted.\n- Monthly buckets use the ledger \
            date, fixing two month-boundary test failures.\n- The monthly report is ~30× faster \
            on large ledgers (12.84 s → 0.41 s on 200k postings).\n- `--currency` defaults to \
            `default_currency` in ledger.toml.\n- Regression test for the separator panic; clippy \
            clean.",
        slow: false,
    },
];

const EXPLORE_THINKING: &[&str] = &[
    "The user wants {goal}. Before changing anything I should find where `{function}` is defined \
        and who calls it; the backtrace points at {file}, but the cause may be upstream in the \
        lexer.",
    "I have not looked at {file} yet. Reading it whole is cheaper than guessing from grep hits, and \
        I need to see how errors are propagated there.",
    "So `{function}` {finding}. Let me check the callers before deciding where the fix belongs: if \
        several callers rely on the current behaviour, the fix should be local.",
    "There are more call sites than I expected. Let me see the test module too, so I know what \
        behaviour is pinned.",
];

const CHANGE_THINKING: &[&str] = &[
    "Plan: fix it inside `{function}` so every caller benefits, keep the signature, and return a \
        typed error instead of unwrapping.",
    "The build error says the match is not exhaustive: I added a variant to the error enum but not \
        to its Display impl. Easy fix.",
    "My first edit did not apply because the file changed since I read it. Re-reading the exact \
        lines before editing again.",
    "The type mismatch is because the helper returns u64 and the field is i64. A negative amount is \
        legitimate here, so the helper should return i64.",
];

const CHECK_THINKING: &[&str] = &[
    "`{test}` still fails. The assertion shows the old value, so either my change is not reached or \
        the test builds its input another way. Reading the test.",
    "Tests pass locally. CI also runs clippy with -D warnings, so I should run that before saying \
        it is done.",
    "The failure is in a test I did not touch. It could be flaky, but it is more likely my change \
        altered an order the test depends on. Checking the diff.",
    "Everything is green. Let me look at the whole diff once more for leftovers (debug prints, \
        commented code) before summarising.",
];

const EXPLORE_PROSE: &[&str] = &[
    "Let me look at how `{function}` works first.",
    "I'll search for the callers of `{function}`.",
    "Found it: `{function}` {finding}.",
    "Reading {file} to see the surrounding code.",
];

const CHANGE_PROSE: &[&str] = &[
    "I'll make the change in `{function}` so every caller gets it.",
    "Building to check the change compiles.",
    "The build failed; fixing the call sites.",
    "Updating the error type and its message.",
];

const CHECK_PROSE: &[&str] = &[
    "Running the full test suite.",
    "`{test}` still fails; looking at what it expects.",
    "Checking clippy, since CI denies warnings.",
    "Reviewing the diff before wrapping up.",
];

/// Thinking templates for a phase.
pub(super) fn thinking(phase: Phase) -> &'static [&'static str] {
    match phase {
        Phase::Explore => EXPLORE_THINKING,
        Phase::Change => CHANGE_THINKING,
        Phase::Check => CHECK_THINKING,
    }
}

/// One-line prose templates for a phase.
pub(super) fn prose(phase: Phase) -> &'static [&'static str] {
    match phase {
        Phase::Explore => EXPLORE_PROSE,
        Phase::Change => CHANGE_PROSE,
        Phase::Check => CHECK_PROSE,
    }
}

/// Fills a template's `{goal}`, `{file}`, `{function}`, `{test}` and `{finding}`.
pub(super) fn fill(template: &str, topic: &Topic) -> String {
    template
        .replace("{goal}", topic.goal)
        .replace("{file}", topic.file)
        .replace("{function}", topic.function)
        .replace("{test}", topic.test)
        .replace("{finding}", topic.finding)
}
