//! The retention exam (docs/design.md, "Evaluation"): seeded sessions with planted facts,
//! driven through annal's projections and through other agents' compaction rules (rules only,
//! and with the shared stand-in summarizer), scored closed book after every compaction and at
//! the end, open book, and per compaction, on report seeds; the sweep of deterministic-v1's
//! constants runs on other seeds. `report` writes the Markdown.

pub mod baselines;
pub mod corpus;
pub mod corpus_tables;
pub mod drive;
pub mod engine_side;
pub mod facts;
pub mod openbook;
pub mod opencode;
pub mod pooled;
pub mod report;
pub mod request;
pub mod score;
pub mod session;
pub mod summarizer;
pub mod sweep;
pub mod tables;
pub mod targets;
pub mod yoagent;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use annal_engine::{Algorithm, Budget};
use anyhow::anyhow;

use self::baselines::{Baseline, Rules, Slot};
use self::drive::{drive, RunResult};
use self::engine_side::{Annal, Strategy};
use self::openbook::OpenBook;
use self::session::{generate, ExamSpec, Profile, Session};

/// A model's window and output ceiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The label in tables.
    pub label: &'static str,
    /// `W`.
    pub window_tokens: u32,
    /// `O`: what such models may write in one reply.
    pub output_tokens: u32,
}

impl Window {
    /// The default budget for this window.
    pub fn budget(&self) -> Budget {
        Budget::new(self.window_tokens, self.output_tokens)
    }
}

impl Window {
    /// The `index`th of the engine's windows (`Budget::WINDOWS`, which the viewer offers too).
    const fn of(index: usize) -> Window {
        let (label, window_tokens, output_tokens) = Budget::WINDOWS[index];
        Window { label, window_tokens, output_tokens }
    }
}

/// The real corpus's second, smaller window (its sessions are short).
pub const WINDOW_16K: Window = Window::of(0);

/// The exam's windows, with output ceilings of models that have them.
pub const WINDOWS: [Window; 4] = [Window::of(1), Window::of(2), Window::of(3), Window::of(4)];

/// A strategy under exam.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    /// annal's deterministic-v1.
    Deterministic,
    /// annal's summarized-v1 with the shared stand-in summarizer.
    Summarized,
    /// Another agent's rules, with its summary slot empty or holding the stand-in's summary.
    Baseline(Rules, Slot),
}

impl Contender {
    /// All contenders, in run order.
    pub const ALL: [Contender; 9] = [
        Contender::Deterministic,
        Contender::Summarized,
        Contender::Baseline(Rules::Codex, Slot::Empty),
        Contender::Baseline(Rules::OpenCode, Slot::Empty),
        Contender::Baseline(Rules::Yoagent, Slot::Empty),
        Contender::Baseline(Rules::Codex, Slot::StandIn),
        Contender::Baseline(Rules::OpenCode, Slot::StandIn),
        Contender::Baseline(Rules::Yoagent, Slot::StandIn),
        Contender::Baseline(Rules::Naive, Slot::Empty),
    ];

    /// The rules-only table: every summary empty (naive has none).
    pub const RULES_ONLY: [Contender; 5] = [
        Contender::Deterministic,
        Contender::Baseline(Rules::Codex, Slot::Empty),
        Contender::Baseline(Rules::OpenCode, Slot::Empty),
        Contender::Baseline(Rules::Yoagent, Slot::Empty),
        Contender::Baseline(Rules::Naive, Slot::Empty),
    ];

    /// The table with the shared stand-in summarizer in every summary slot.
    pub const SUMMARIZER: [Contender; 6] = [
        Contender::Deterministic,
        Contender::Summarized,
        Contender::Baseline(Rules::Codex, Slot::StandIn),
        Contender::Baseline(Rules::OpenCode, Slot::StandIn),
        Contender::Baseline(Rules::Yoagent, Slot::StandIn),
        Contender::Baseline(Rules::Naive, Slot::Empty),
    ];

    /// The report label.
    pub fn label(self) -> &'static str {
        match self {
            Contender::Deterministic => "deterministic-v1",
            Contender::Summarized => "summarized-v1 (stand-in)",
            Contender::Baseline(rules, Slot::Empty) => rules.label(),
            Contender::Baseline(Rules::Codex, Slot::StandIn) => "Codex-style (stand-in)",
            Contender::Baseline(Rules::OpenCode, Slot::StandIn) => "OpenCode-style (stand-in)",
            Contender::Baseline(Rules::Yoagent, Slot::StandIn) => "yoagent-style (stand-in)",
            Contender::Baseline(Rules::Naive, Slot::StandIn) => "naive",
        }
    }

    /// Whether this is another system (not annal, not the naive floor).
    pub fn is_other_system(self) -> bool {
        matches!(self, Contender::Baseline(rules, _) if rules.summarises())
    }

    fn strategy(self, budget: Budget) -> anyhow::Result<Box<dyn Strategy>> {
        Ok(match self {
            Contender::Deterministic => Box::new(Annal::open(Algorithm::DeterministicV1, budget)?),
            Contender::Summarized => Box::new(Annal::open(Algorithm::SummarizedV1, budget)?),
            Contender::Baseline(rules, slot) => Box::new(Baseline::new(rules, slot, budget)),
        })
    }
}

/// What the exam runs.
#[derive(Clone, Debug)]
pub struct ExamConfig {
    /// Profiles of the synthetic set.
    pub profiles: Vec<Profile>,
    /// Windows.
    pub windows: Vec<Window>,
    /// Session length as a multiple of the window's trigger (windows up to 200K).
    pub length_multiple: f64,
    /// The same for the 1M window (kept smaller so the exam stays within minutes).
    pub length_multiple_1m: f64,
    /// Facts planted per session.
    pub facts: usize,
    /// Decoys per session.
    pub decoys: usize,
    /// The report seeds: every table is over these.
    pub seeds: Vec<u64>,
    /// How many of the report seeds the 1M window runs on (its sessions are the longest).
    pub seeds_1m: usize,
    /// The seeds the sweep tunes constants on, apart from the report seeds.
    pub tuning_seeds: Vec<u64>,
    /// The profiles the sweep runs.
    pub sweep_profiles: Vec<Profile>,
    /// Whether to run the constants sweep.
    pub sweep: bool,
    /// The windows the real corpus runs at (when it runs).
    pub corpus_windows: Vec<Window>,
    /// Worker threads.
    pub threads: usize,
    /// Open book: each contender's search leaves out the records its final request carries.
    pub hide_seen: bool,
    /// Open book: each question carries the ask of the turn that stated its fact as `context`
    /// (an oracle: an upper bound for the signal, off in the published run).
    pub context: bool,
}

impl Default for ExamConfig {
    fn default() -> ExamConfig {
        ExamConfig {
            profiles: Profile::EXAM.to_vec(),
            windows: WINDOWS.to_vec(),
            length_multiple: 3.0,
            length_multiple_1m: 1.25,
            facts: 200,
            decoys: 40,
            seeds: vec![1, 2, 3],
            seeds_1m: 1,
            tuning_seeds: vec![101, 102],
            sweep_profiles: vec![Profile::Chat, Profile::Coding, Profile::Paste],
            sweep: true,
            corpus_windows: vec![WINDOW_16K, WINDOWS[0]],
            threads: 2,
            hide_seen: true,
            context: false,
        }
    }
}

impl ExamConfig {
    /// The report seeds `window` runs on.
    pub fn seeds_at(&self, window: Window) -> &[u64] {
        if window.window_tokens >= 1_000_000 {
            &self.seeds[..self.seeds_1m.min(self.seeds.len())]
        } else {
            &self.seeds
        }
    }
}

/// One session at one window, under every contender.
#[derive(Debug)]
pub struct SessionRun {
    /// The session.
    pub session: Session,
    /// Its seed (0 for a corpus session).
    pub seed: u64,
    /// The window.
    pub window: Window,
    /// What search finds (the journal is the same for every contender).
    pub open: OpenBook,
    /// Per contender, in [`Contender::ALL`] order.
    pub runs: Vec<(Contender, RunResult)>,
}

/// Runs `session` at `window` under `contenders`, then the open-book questions on
/// deterministic-v1's store, once per contender: each search leaves out what that contender's
/// final request already carries (unless `hide_seen` is off), so every contender is asked with
/// the same search.
///
/// # Errors
/// What a contender or the index reports.
pub fn run_session(
    session: Session,
    seed: u64,
    window: Window,
    contenders: &[Contender],
    hide_seen: bool,
    context: bool,
) -> anyhow::Result<SessionRun> {
    let budget = window.budget();
    let capacity = u64::from(budget.capacity_tokens());
    let mut runs = Vec::new();
    let mut journal = None;
    for &contender in contenders {
        let mut strategy = contender.strategy(budget)?;
        let result = drive(&session, strategy.as_mut(), capacity)?;
        if journal.is_none() {
            // The journal is the same for every contender: the first store serves them all.
            journal = strategy.store().map(|store| (store, strategy));
        }
        runs.push((contender, result));
    }
    let ((store, name, folder), _strategy) =
        journal.ok_or_else(|| anyhow!("no contender with a store ran"))?;
    let empty = std::collections::BTreeSet::new();
    let seen: Vec<_> = runs.iter().map(|(_, r)| if hide_seen { &r.seen } else { &empty }).collect();
    let open = openbook::search(&store, &name, &folder, &session, &seen, context)?;
    for ((_, result), rank) in runs.iter_mut().zip(&open.rank) {
        result.open_rank.clone_from(rank);
    }
    Ok(SessionRun { session, seed, window, open, runs })
}

/// The synthetic session of `profile` for `window` from `seed`.
pub fn synthetic(config: &ExamConfig, seed: u64, profile: Profile, window: Window) -> Session {
    let trigger = f64::from(window.budget().trigger_tokens());
    let multiple =
        if window.window_tokens >= 1_000_000 { config.length_multiple_1m } else { config.length_multiple };
    let spec = ExamSpec {
        profile,
        target_tokens: (trigger * multiple) as u64,
        facts: config.facts,
        decoys: config.decoys,
        seed: seed
            .wrapping_mul(1_000_003)
            .wrapping_add(profile as u64 * 7919 + u64::from(window.window_tokens)),
    };
    generate(&spec)
}

/// Runs `jobs` on `threads` workers; results come back in job order, whatever finished first.
///
/// # Errors
/// The first job error, in job order.
pub fn parallel<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    work: impl Fn(&J) -> anyhow::Result<R> + Sync,
) -> anyhow::Result<Vec<R>> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<anyhow::Result<R>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= jobs.len() {
                    break;
                }
                let outcome = work(&jobs[i]);
                if let Ok(mut slots) = slots.lock() {
                    slots[i] = Some(outcome);
                }
            });
        }
    });
    let slots = slots.into_inner().map_err(|_| anyhow!("a worker panicked"))?;
    slots.into_iter().map(|s| s.unwrap_or_else(|| Err(anyhow!("a job did not run")))).collect()
}

/// The whole exam: every profile at every window on every report seed under every contender,
/// then the sweep on the tuning seeds.
///
/// # Errors
/// What a run reports.
pub fn run(config: &ExamConfig) -> anyhow::Result<Exam> {
    // The largest windows first, so the longest jobs do not start last; put back in order after.
    let mut jobs: Vec<(u64, Profile, Window)> = Vec::new();
    for &window in config.windows.iter().rev() {
        for &seed in config.seeds_at(window) {
            jobs.extend(config.profiles.iter().rev().map(|&p| (seed, p, window)));
        }
    }
    let mut sessions = parallel(&jobs, config.threads, |&(seed, profile, window)| {
        let started = std::time::Instant::now();
        let run = run_session(
            synthetic(config, seed, profile, window),
            seed,
            window,
            &Contender::ALL,
            config.hide_seen,
            config.context,
        );
        eprintln!(
            "  {} at {}, seed {seed}: {:.1} s",
            profile.label(),
            window.label,
            started.elapsed().as_secs_f64()
        );
        run
    })?;
    sessions.sort_by_key(|r| {
        let w = config.windows.iter().position(|w| *w == r.window);
        let p = config.profiles.iter().position(|p| p.label() == r.session.label);
        (w, r.seed, p)
    });
    let sweep = if config.sweep { Some(sweep::run(config)?) } else { None };
    Ok(Exam { config: config.clone(), sessions, sweep, corpus: None })
}

/// The exam's results.
#[derive(Debug)]
pub struct Exam {
    /// What ran.
    pub config: ExamConfig,
    /// Synthetic sessions.
    pub sessions: Vec<SessionRun>,
    /// The constants sweep.
    pub sweep: Option<sweep::Sweep>,
    /// The real corpus, when it ran.
    pub corpus: Option<corpus::CorpusRun>,
}

#[cfg(test)]
mod tests;
