//! The report's tables: closed book by window (rules only, and with the shared summarizer, with
//! the spread over seeds), user requests kept verbatim, open book, books and compactions per
//! session group and contender, drift, and the constants sweep with its verdicts.

use std::fmt::Write as _;

use super::pooled::{pool, rate, Pooled};
use super::report::{pct, share, thousands};
use super::sweep::{Sweep, VARIANTS};
use super::{Contender, Exam, SessionRun, Window};

/// Per report seed that ran at `window`, `pick` of `contender` pooled over the profiles.
fn per_seed(exam: &Exam, window: Window, contender: Contender, pick: fn(&Pooled) -> (u64, u64)) -> Vec<f64> {
    exam.config
        .seeds_at(window)
        .iter()
        .map(|&seed| {
            let runs = exam.sessions.iter().filter(|r| r.window == window && r.seed == seed);
            rate(pick(&pool(runs, contender)))
        })
        .collect()
}

/// `pooled% [min–max]` (no range for one seed).
fn spread(pooled: (u64, u64), seeds: &[f64]) -> String {
    let value = pct(pooled.0, pooled.1);
    if seeds.len() < 2 {
        return value;
    }
    let low = seeds.iter().copied().fold(f64::INFINITY, f64::min);
    let high = seeds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{value} [{:.1}–{:.1}]", 100.0 * low, 100.0 * high)
}

fn header(out: &mut String, exam: &Exam, first: &str) {
    let _ = write!(out, "| {first} |");
    for w in &exam.config.windows {
        let _ = write!(out, " {} |", w.label);
    }
    out.push_str("\n| --- |");
    for _ in &exam.config.windows {
        out.push_str(" --: |");
    }
    out.push('\n');
}

fn book_table(out: &mut String, exam: &Exam, contenders: &[Contender]) {
    header(out, exam, "contender: mean / final");
    for &contender in contenders {
        let _ = write!(out, "| {} |", contender.label());
        for &w in &exam.config.windows {
            let p = pool(exam.sessions.iter().filter(|r| r.window == w), contender);
            let mean = per_seed(exam, w, contender, |p| p.mean[3]);
            let last = per_seed(exam, w, contender, |p| p.last[3]);
            let _ = write!(out, " {} / {} |", spread(p.mean[3], &mean), spread(p.last[3], &last));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Closed book by window: rules only, then with the shared stand-in summarizer.
pub fn books(out: &mut String, exam: &Exam) {
    out.push_str("## Closed book by window: rules only\n\nAll facts, all synthetic profiles and report seeds pooled; every baseline's summary empty. Each cell: the mean over the requests right after each compaction and the final request, then the final request alone; in brackets the lowest and highest value over the report seeds.\n\n");
    book_table(out, exam, &Contender::RULES_ONLY);
    out.push_str("## Closed book by window: with the shared stand-in summarizer\n\nThe same sessions, every summary slot holding the stand-in's summary (naive has none and runs once).\n\n");
    book_table(out, exam, &Contender::SUMMARIZER);
}

/// The share of requests carrying every short user request verbatim, on `paste` and `resumed`.
pub fn user_requests(out: &mut String, exam: &Exam) {
    out.push_str("## User requests under 2,000 tokens kept verbatim\n\nThe share of requests (every request, every report seed) in which every user request under 2,000 tokens appended before it is still there byte for byte; `paste` / `resumed`.\n\n");
    header(out, exam, "contender");
    for contender in Contender::ALL {
        let _ = write!(out, "| {} |", contender.label());
        for &w in &exam.config.windows {
            let of = |label: &str| {
                let p = pool(
                    exam.sessions.iter().filter(|r| r.window == w && r.session.label == label),
                    contender,
                );
                pct(p.short_verbatim.0, p.short_verbatim.1)
            };
            let _ = write!(out, " {} / {} |", of("paste"), of("resumed"));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Open book, top 1 and top 5, per contender and window.
pub fn open_book(out: &mut String, exam: &Exam) {
    out.push_str("## Open book\n\nOf the facts missing from a contender's final request, the share whose record search ranks first (top 1) and among the first five (top 5), asked with the fact's area and noun only, the records the final request carries left out of the search; all profiles and report seeds pooled.\n\n");
    header(out, exam, "contender: top 1 / top 5");
    for contender in Contender::ALL {
        let _ = write!(out, "| {} |", contender.label());
        for &w in &exam.config.windows {
            let p = pool(exam.sessions.iter().filter(|r| r.window == w), contender);
            let _ = write!(
                out,
                " {} / {} |",
                pct(p.open_top1.0, p.open_top1.1),
                pct(p.open_top5.0, p.open_top5.1)
            );
        }
        out.push('\n');
    }
    // What no order of hits can pass without a context: facts asking the same question share
    // one list of hits.
    let _ = write!(out, "| {}: the most any order reaches |", Contender::Deterministic.label());
    for &w in &exam.config.windows {
        let p = pool(exam.sessions.iter().filter(|r| r.window == w), Contender::Deterministic);
        let _ = write!(
            out,
            " {} / {} |",
            pct(p.ceiling_top1.0, p.ceiling_top1.1),
            pct(p.ceiling_top5.0, p.ceiling_top5.1)
        );
    }
    out.push_str("\n\nThe last row is a bound, not a search: facts asked by the same question (the same area and noun) get the same list of hits, so of the records stating such facts missing from a request only one can be first and five in the top five. A question's context is what tells them apart.\n\n");
}

/// The two tables of one group of runs: books, then compactions and stability; per session
/// label when `per_label`, then all pooled.
pub fn detail(out: &mut String, title: &str, runs: &[&SessionRun], per_label: bool) {
    let _ = writeln!(out, "## {title}\n");
    let mut labels: Vec<&str> = Vec::new();
    for run in runs {
        if !labels.contains(&run.session.label.as_str()) {
            labels.push(&run.session.label);
        }
    }
    let mut rows = Vec::new();
    for label in labels.iter().filter(|_| per_label) {
        for contender in Contender::ALL {
            let group = runs.iter().copied().filter(|r| r.session.label == *label);
            rows.push((label.to_string(), contender, pool(group, contender)));
        }
    }
    for contender in Contender::ALL {
        rows.push(("**all**".into(), contender, pool(runs.iter().copied(), contender)));
    }
    out.push_str("| session | contender | final: user | assistant | tool | all | mean: all | mean: user | open book top 1 / 5 | decoy false hits |\n| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |\n");
    for (label, contender, p) in &rows {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} |",
            contender.label(),
            pct(p.last[0].0, p.last[0].1),
            pct(p.last[1].0, p.last[1].1),
            pct(p.last[2].0, p.last[2].1),
            pct(p.last[3].0, p.last[3].1),
            pct(p.mean[3].0, p.mean[3].1),
            pct(p.mean[0].0, p.mean[0].1),
            pct(p.open_top1.0, p.open_top1.1),
            pct(p.open_top5.0, p.open_top5.1),
            p.decoys
        );
    }
    compactions(out, &rows);
}

fn compactions(out: &mut String, rows: &[(String, Contender, Pooled)]) {
    out.push_str("\n| session | contender | requests | compactions | per 100 requests | tokens after (mean) | task lost | ask lost | orphans | marker-only | over capacity | turns in full detail | prefix stability: all / between |\n| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- |\n");
    for (label, contender, p) in rows {
        let mean_after = p.tokens_after.checked_div(p.compactions).map_or_else(|| "—".into(), thousands);
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            contender.label(),
            thousands(p.requests),
            thousands(p.compactions),
            100.0 * p.compactions as f64 / p.requests.max(1) as f64,
            mean_after,
            pct(p.task_lost, p.compactions),
            pct(p.ask_lost, p.compactions),
            p.orphans,
            p.marker_only,
            p.over_capacity,
            pct(p.full_turns.0, p.full_turns.1),
            share(p.prefix_all.0, p.prefix_all.1),
            share(p.prefix_between.0, p.prefix_between.1)
        );
    }
    out.push('\n');
}

/// Recall of the early facts after successive compactions.
pub fn drift(out: &mut String, exam: &Exam) {
    out.push_str("## Drift over successive compactions\n\nClosed-book recall of the facts stated before a session's first compaction, in the request right after its 1st, 2nd, 3rd and last (4th or later) compaction; mean over the sessions that reached that compaction. A chain must not compound losses: annal re-derives every checkpoint from the originals.\n\n| window | contender | after 1st | after 2nd | after 3rd | after the last (4th+) |\n| --- | --- | --: | --: | --: | --: |\n");
    for &w in &exam.config.windows {
        for contender in Contender::ALL {
            let p = pool(exam.sessions.iter().filter(|r| r.window == w), contender);
            let _ = write!(out, "| {} | {} |", w.label, contender.label());
            for (sum, n) in p.drift {
                let _ = write!(out, " {} |", share(sum, n));
            }
            out.push('\n');
        }
    }
    out.push('\n');
}

/// The sweep's table and verdicts.
pub fn sweep_section(out: &mut String, sweep: &Sweep, exam: &Exam) {
    let c = &exam.config;
    let _ = write!(
        out,
        "## Sweep of deterministic-v1's constants\n\nOn the tuning seeds ({}), never the report seeds: each constant at its default, half and double (the history target, by default three quarters of the trigger and at least 65,536, against half the trigger and fixed targets of 16,384, 32,768, 65,536 and 131,072; headroom: none reserved, or 25% or 50% of the trigger kept free after a compaction by lowering the history target), the others at their defaults; the {} profiles' sessions at each window up to 200K, pooled. Closed book is the mean over the requests after each compaction and the final one, as in the report.\n\n| constant | value | window | closed book: all | assistant | user | compactions per 100 requests | tokens after compaction (mean) | prefix stability |\n| --- | --- | --- | --: | --: | --: | --: | --: | --: |\n",
        c.tuning_seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        c.sweep_profiles.iter().map(|p| format!("`{}`", p.label())).collect::<Vec<_>>().join(", ")
    );
    for (v, variant) in VARIANTS.iter().enumerate() {
        for (w, window) in sweep.windows.iter().enumerate() {
            let Some(cell) = &sweep.cells[v][w] else { continue };
            let mark = if variant.default { " (default)" } else { "" };
            let mean_after =
                cell.tokens_after.checked_div(cell.compactions).map_or_else(|| "—".into(), thousands);
            let _ = writeln!(
                out,
                "| {} | {}{mark} | {} | {} | {} | {} | {:.1} | {} | {} |",
                variant.constant,
                variant.value_label(),
                window.label,
                pct(cell.all.0, cell.all.1),
                pct(cell.assistant.0, cell.assistant.1),
                pct(cell.user.0, cell.user.1),
                100.0 * cell.compactions as f64 / cell.requests.max(1) as f64,
                mean_after,
                share(cell.prefix.0, cell.prefix.1)
            );
        }
    }
    out.push_str("\n### Verdicts\n\nRule: over the swept windows pooled (the mean of the windows' closed-book rates, so a variant that compacts more often is not weighed more), the value with the best closed book (all facts) among those that compact at most 1.5× as often as the default at every window wins; the default is confirmed when it is within one point of that value. A verdict that says *changed* is a recommendation, not yet applied.\n\n");
    for verdict in super::sweep::verdicts(sweep) {
        let _ = writeln!(out, "- {verdict}");
    }
    out.push('\n');
}
