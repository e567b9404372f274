//! The retention exam (DESIGN §8): seeded sessions with planted facts, driven through annal's
//! projections and through other agents' compaction rules, scored closed book, open book and
//! per compaction, with a sweep of deterministic-v1's constants. `report` writes the Markdown.

pub mod baselines;
#[cfg(feature = "corpus")]
pub mod corpus;
pub mod drive;
pub mod engine_side;
pub mod facts;
pub mod openbook;
pub mod pooled;
pub mod report;
pub mod request;
pub mod session;
pub mod sweep;
pub mod tables;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use annal_engine::{Algorithm, Budget};
use anyhow::anyhow;

use self::baselines::{Baseline, Rules};
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

/// The exam's windows, with output ceilings of models that have them.
pub const WINDOWS: [Window; 4] = [
    Window { label: "32K", window_tokens: 32_768, output_tokens: 4_096 },
    Window { label: "128K", window_tokens: 131_072, output_tokens: 16_384 },
    Window { label: "200K", window_tokens: 200_000, output_tokens: 32_000 },
    Window { label: "1M", window_tokens: 1_000_000, output_tokens: 65_536 },
];

/// A strategy under exam.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    /// annal's deterministic-v1.
    Deterministic,
    /// annal's summarized-v1 with the stand-in summarizer.
    Summarized,
    /// Another agent's rules.
    Baseline(Rules),
}

impl Contender {
    /// All contenders, in report order.
    pub const ALL: [Contender; 6] = [
        Contender::Deterministic,
        Contender::Summarized,
        Contender::Baseline(Rules::Codex),
        Contender::Baseline(Rules::OpenCode),
        Contender::Baseline(Rules::Yoagent),
        Contender::Baseline(Rules::Naive),
    ];

    /// The report label.
    pub fn label(self) -> &'static str {
        match self {
            Contender::Deterministic => "deterministic-v1",
            Contender::Summarized => "summarized-v1 (stand-in)",
            Contender::Baseline(rules) => rules.label(),
        }
    }

    fn strategy(self, budget: Budget) -> anyhow::Result<Box<dyn Strategy>> {
        Ok(match self {
            Contender::Deterministic => Box::new(Annal::open(Algorithm::DeterministicV1, budget)?),
            Contender::Summarized => Box::new(Annal::open(Algorithm::SummarizedV1, budget)?),
            Contender::Baseline(rules) => Box::new(Baseline::new(rules, budget)),
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
    /// The seed.
    pub seed: u64,
    /// Whether to run the constants sweep.
    pub sweep: bool,
    /// Worker threads.
    pub threads: usize,
}

impl Default for ExamConfig {
    fn default() -> ExamConfig {
        ExamConfig {
            profiles: Profile::WITH_TURNS.to_vec(),
            windows: WINDOWS.to_vec(),
            length_multiple: 3.0,
            length_multiple_1m: 1.25,
            facts: 200,
            decoys: 40,
            seed: 1,
            sweep: true,
            threads: 2,
        }
    }
}

/// One session at one window, under every contender.
#[derive(Debug)]
pub struct SessionRun {
    /// The session.
    pub session: Session,
    /// The window.
    pub window: Window,
    /// What search finds (the journal is the same for every contender).
    pub open: OpenBook,
    /// Per contender, in [`Contender::ALL`] order.
    pub runs: Vec<(Contender, RunResult)>,
}

/// Runs `session` at `window` under `contenders`, and the open-book questions on
/// deterministic-v1's store.
///
/// # Errors
/// What a contender or the index reports.
pub fn run_session(session: Session, window: Window, contenders: &[Contender]) -> anyhow::Result<SessionRun> {
    let budget = window.budget();
    let capacity = u64::from(budget.capacity_tokens());
    let mut runs = Vec::new();
    let mut open = None;
    for &contender in contenders {
        let mut strategy = contender.strategy(budget)?;
        let result = drive(&session, strategy.as_mut(), capacity)?;
        if open.is_none() {
            if let Some((store, name, folder)) = strategy.store() {
                open = Some(openbook::search(&store, &name, &folder, &session)?);
            }
        }
        runs.push((contender, result));
    }
    let open = open.ok_or_else(|| anyhow!("no contender with a store ran"))?;
    Ok(SessionRun { session, window, open, runs })
}

/// The synthetic session of `profile` for `window`.
pub fn synthetic(config: &ExamConfig, profile: Profile, window: Window) -> Session {
    let trigger = f64::from(window.budget().trigger_tokens());
    let multiple =
        if window.window_tokens >= 1_000_000 { config.length_multiple_1m } else { config.length_multiple };
    let spec = ExamSpec {
        profile,
        target_tokens: (trigger * multiple) as u64,
        facts: config.facts,
        decoys: config.decoys,
        seed: config
            .seed
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

/// The whole exam: every profile at every window under every contender, then the sweep.
///
/// # Errors
/// What a run reports.
pub fn run(config: &ExamConfig) -> anyhow::Result<Exam> {
    // The largest windows first, so the longest jobs do not start last; reversed back after.
    let jobs: Vec<(Profile, Window)> = config
        .windows
        .iter()
        .rev()
        .flat_map(|&w| config.profiles.iter().rev().map(move |&p| (p, w)))
        .collect();
    let mut sessions = parallel(&jobs, config.threads, |&(profile, window)| {
        let started = std::time::Instant::now();
        let run = run_session(synthetic(config, profile, window), window, &Contender::ALL);
        eprintln!("  {} at {}: {:.1} s", profile.label(), window.label, started.elapsed().as_secs_f64());
        run
    })?;
    sessions.reverse();
    let sweep = if config.sweep { Some(sweep::run(config)?) } else { None };
    Ok(Exam { config: config.clone(), sessions, sweep, corpus: Vec::new() })
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
    /// Real-corpus sessions (feature `corpus`), with the corpus's file names.
    pub corpus: Vec<SessionRun>,
}

#[cfg(test)]
mod tests;
