//! The sweep of deterministic-v1's constants (tail, evidence index, history target, headroom
//! after compaction) on the tuning seeds, never the report seeds, over the sweep's profiles and
//! the windows up to 200K, with a verdict per constant.
//!
//! Headroom is not a budget field: a variant reserves it by lowering the history target so that
//! history, tail and evidence leave that share of the trigger free after a compaction.

use annal_engine::Budget;

use super::drive::{drive, RunResult};
use super::engine_side::Annal;
use super::facts::FactClass;
use super::session::Profile;
use super::{parallel, synthetic, ExamConfig, Window};

/// One value of one constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant {
    /// The constant's name.
    pub constant: &'static str,
    /// The value, in tokens (or percent of the trigger for headroom).
    pub value: u32,
    /// Whether it is the engine's default.
    pub default: bool,
}

impl Variant {
    /// The budget this variant gives `window`.
    pub fn budget(&self, window: Window) -> Budget {
        let mut budget = window.budget();
        match self.constant {
            "tail tokens" => budget.tail_tokens = self.value,
            "evidence tokens" => budget.evidence_tokens = self.value,
            // 0 stands for the engine's default: three quarters of the trigger, at least 65,536, a
            // target that grows with the window instead of one number for all.
            "history tokens" if self.value == 0 => {}
            // 1 stands for half the trigger, at least 65,536: more room left after a compaction.
            "history tokens" if self.value == 1 => {
                let half = budget.trigger_tokens() / 2;
                budget.history_tokens = half.clamp(65_536, annal_engine::HISTORY_TOKENS_MAX);
            }
            "history tokens" => budget.history_tokens = self.value,
            _ if self.value == 0 => {}
            _ => {
                let trigger = u64::from(budget.trigger_tokens());
                let free = trigger * u64::from(self.value) / 100;
                let room =
                    trigger.saturating_sub(free + u64::from(budget.tail_tokens + budget.evidence_tokens));
                budget.history_tokens = budget.history_tokens.min(room.max(1_024) as u32);
            }
        }
        budget
    }

    /// The value as a table shows it.
    pub fn value_label(&self) -> String {
        if self.constant == "history tokens" && self.value == 0 {
            "¾ of the trigger, ≥ 65,536".into()
        } else if self.constant == "history tokens" && self.value == 1 {
            "half the trigger, ≥ 65,536".into()
        } else if self.constant == "headroom" {
            if self.value == 0 {
                "none reserved".into()
            } else {
                format!("{}% of trigger", self.value)
            }
        } else {
            super::report::thousands(u64::from(self.value))
        }
    }
}

/// The variants: each constant at its default, half and double (the history target also at a
/// quarter, 16,384, and at half the trigger; headroom: 0, 25%, 50%). The history target's
/// default was 32,768 (the published design's) until this sweep doubled it, and 65,536 for every
/// window until it showed large windows standing mostly empty; it is now three quarters of the
/// trigger (against half, on the tuning seeds).
pub const VARIANTS: [Variant; 15] = [
    Variant { constant: "tail tokens", value: 4_096, default: false },
    Variant { constant: "tail tokens", value: 8_192, default: true },
    Variant { constant: "tail tokens", value: 16_384, default: false },
    Variant { constant: "evidence tokens", value: 1_024, default: false },
    Variant { constant: "evidence tokens", value: 2_048, default: true },
    Variant { constant: "evidence tokens", value: 4_096, default: false },
    Variant { constant: "history tokens", value: 16_384, default: false },
    Variant { constant: "history tokens", value: 32_768, default: false },
    Variant { constant: "history tokens", value: 65_536, default: false },
    Variant { constant: "history tokens", value: 131_072, default: false },
    Variant { constant: "history tokens", value: 0, default: true },
    Variant { constant: "history tokens", value: 1, default: false },
    Variant { constant: "headroom", value: 0, default: true },
    Variant { constant: "headroom", value: 25, default: false },
    Variant { constant: "headroom", value: 50, default: false },
];

/// Whether the sweep runs at `window`: up to 200K (1M sessions compact about once, and would
/// add minutes).
pub fn runs_at(window: Window) -> bool {
    window.window_tokens < 1_000_000
}

/// A variant at a window, summed over the profiles.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// Facts kept / total, all classes.
    pub all: (u64, u64),
    /// Assistant facts kept / total.
    pub assistant: (u64, u64),
    /// User facts kept / total.
    pub user: (u64, u64),
    /// Requests made.
    pub requests: u64,
    /// Compactions.
    pub compactions: u64,
    /// Sum of tokens after compaction.
    pub tokens_after: u64,
    /// Prefix shares (sum, count).
    pub prefix: (f64, u64),
}

impl Cell {
    fn add(&mut self, run: &RunResult) {
        let plus = |a: &mut (u64, u64), b: (u64, u64)| {
            a.0 += b.0;
            a.1 += b.1;
        };
        // Scored as the report scores: every request after a compaction and the final one.
        let mean = run.mean_score();
        plus(&mut self.all, mean[3]);
        plus(&mut self.assistant, mean[FactClass::Assistant as usize]);
        plus(&mut self.user, mean[FactClass::User as usize]);
        self.requests += run.requests;
        self.compactions += run.compactions.len() as u64;
        self.tokens_after += run.compactions.iter().map(|c| c.tokens).sum::<u64>();
        self.prefix.0 += run.prefix_all.0;
        self.prefix.1 += run.prefix_all.1;
    }
}

/// The sweep's results: per variant, per window.
#[derive(Debug)]
pub struct Sweep {
    /// The windows, in order.
    pub windows: Vec<Window>,
    /// Per variant (in [`VARIANTS`] order), per window; `None` where it did not run.
    pub cells: Vec<Vec<Option<Cell>>>,
}

/// Runs every variant on every sweep profile's session of every tuning seed at every swept
/// window.
///
/// # Errors
/// What the engine reports.
pub fn run(config: &ExamConfig) -> anyhow::Result<Sweep> {
    let windows: Vec<Window> = config.windows.iter().copied().filter(|w| runs_at(*w)).collect();
    // The largest windows first, so the longest jobs do not start last.
    let mut jobs: Vec<(u64, Profile, Window)> = Vec::new();
    for &window in windows.iter().rev() {
        for &seed in &config.tuning_seeds {
            jobs.extend(config.sweep_profiles.iter().map(|&p| (seed, p, window)));
        }
    }
    let per_job = parallel(&jobs, config.threads, |&(seed, profile, window)| {
        let session = synthetic(config, seed, profile, window);
        let capacity = u64::from(window.budget().capacity_tokens());
        let mut runs = Vec::new();
        for variant in &VARIANTS {
            let mut annal = Annal::open(annal_engine::Algorithm::DeterministicV1, variant.budget(window))?;
            runs.push(drive(&session, &mut annal, capacity)?);
        }
        eprintln!("  sweep: {} at {}, seed {seed} done", profile.label(), window.label);
        Ok(runs)
    })?;
    let mut cells: Vec<Vec<Option<Cell>>> = vec![vec![None; windows.len()]; VARIANTS.len()];
    for ((_, _, window), runs) in jobs.iter().zip(&per_job) {
        let w = windows.iter().position(|x| x == window).unwrap_or(0);
        for (v, run) in runs.iter().enumerate() {
            cells[v][w].get_or_insert_with(Cell::default).add(run);
        }
    }
    Ok(Sweep { windows, cells })
}

/// One verdict line per constant (see the rule in the report).
pub fn verdicts(sweep: &Sweep) -> Vec<String> {
    let mut constants: Vec<&str> = Vec::new();
    for v in &VARIANTS {
        if !constants.contains(&v.constant) {
            constants.push(v.constant);
        }
    }
    let mut lines = Vec::new();
    for constant in constants {
        let pooled: Vec<(usize, Cell)> = VARIANTS
            .iter()
            .enumerate()
            .filter(|(_, v)| v.constant == constant)
            .map(|(i, _)| {
                // Closed book pools as the mean of the windows' rates: summing counts would weigh
                // a window by how often a variant compacts there (every compaction is scored).
                let mut total = Cell::default();
                let cells: Vec<&Cell> = sweep.cells[i].iter().filter_map(Option::as_ref).collect();
                for cell in &cells {
                    let rate = cell.all.0 as f64 / cell.all.1.max(1) as f64;
                    total.all.0 += (rate * 1e6).round() as u64;
                    total.all.1 += 1_000_000;
                    total.requests += cell.requests;
                    total.compactions += cell.compactions;
                    total.tokens_after += cell.tokens_after;
                }
                (i, total)
            })
            .collect();
        let rate = |c: &Cell| c.all.0 as f64 / c.all.1.max(1) as f64;
        let freq = |c: &Cell| 100.0 * c.compactions as f64 / c.requests.max(1) as f64;
        let after = |c: &Cell| c.tokens_after / c.compactions.max(1);
        let Some((d, default)) = pooled.iter().find(|(i, _)| VARIANTS[*i].default) else { continue };
        // At most 1.5× the default's compactions at every window, not pooled: pooling would hide
        // a window where a variant compacts far more often behind one with many requests.
        let frequent = |i: usize| {
            let at = |v: usize, w: usize| sweep.cells[v][w].as_ref().map(freq);
            (0..sweep.windows.len()).any(|w| match (at(i, w), at(*d, w)) {
                (Some(f), Some(base)) => f > 1.5 * base + 1e-9,
                _ => false,
            })
        };
        let mut best = (*d, default);
        for (i, cell) in &pooled {
            if !frequent(*i) && rate(cell) > rate(best.1) + 1e-12 {
                best = (*i, cell);
            }
        }
        let others: Vec<String> = pooled
            .iter()
            .filter(|(i, _)| i != d)
            .map(|(i, c)| {
                format!(
                    "{}: {:.1}%, {:.1} compactions per 100 requests",
                    VARIANTS[*i].value_label(),
                    100.0 * rate(c),
                    freq(c)
                )
            })
            .collect();
        let notes = window_notes(sweep, constant);
        if rate(best.1) - rate(default) <= 0.01 {
            lines.push(format!(
                "**{constant}: confirmed** at {}: closed book {:.1}%, {:.1} compactions per 100 requests, {} tokens after compaction (against {}).",
                VARIANTS[*d].value_label(),
                100.0 * rate(default),
                freq(default),
                super::report::thousands(after(default)),
                others.join("; ")
            ) + &notes);
        } else {
            lines.push(format!(
                "**{constant}: changed to {}** (recommended): closed book {:.1}% → {:.1}% ({:+.1} points), compactions per 100 requests {:.1} → {:.1}, tokens after compaction {} → {}.",
                VARIANTS[best.0].value_label(),
                100.0 * rate(default),
                100.0 * rate(best.1),
                100.0 * (rate(best.1) - rate(default)),
                freq(default),
                freq(best.1),
                super::report::thousands(after(default)),
                super::report::thousands(after(best.1))
            ) + &notes);
        }
    }
    lines
}

/// Per window, where another value of `constant` beats the default by more than a point under
/// the same rule (at most 1.5× the default's compactions): " At 200K: …".
fn window_notes(sweep: &Sweep, constant: &str) -> String {
    let mut notes = Vec::new();
    for (w, window) in sweep.windows.iter().enumerate() {
        let cells: Vec<(usize, &Cell)> = VARIANTS
            .iter()
            .enumerate()
            .filter(|(_, v)| v.constant == constant)
            .filter_map(|(i, _)| sweep.cells[i][w].as_ref().map(|c| (i, c)))
            .collect();
        let rate = |c: &Cell| c.all.0 as f64 / c.all.1.max(1) as f64;
        let freq = |c: &Cell| 100.0 * c.compactions as f64 / c.requests.max(1) as f64;
        let Some(&(d, default)) = cells.iter().find(|(i, _)| VARIANTS[*i].default) else { continue };
        let best = cells
            .iter()
            .filter(|(_, c)| freq(c) <= 1.5 * freq(default) + 1e-9)
            .fold((d, default), |best, &(i, c)| if rate(c) > rate(best.1) + 1e-12 { (i, c) } else { best });
        if rate(best.1) - rate(default) > 0.01 {
            notes.push(format!(
                "at {}: {} keeps {:.1}% against {:.1}% ({:.1} against {:.1} compactions per 100 requests)",
                window.label,
                VARIANTS[best.0].value_label(),
                100.0 * rate(best.1),
                100.0 * rate(default),
                freq(best.1),
                freq(default)
            ));
        }
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" Per window, the rule picks otherwise {}.", notes.join("; "))
    }
}
