//! What the kill drills share: their settings from the environment, a seeded source of kill
//! moments and batch shapes, kill moments that follow the pace of the process they kill, and
//! the minimum of kills that must land on a running process.

use std::process::Child;
use std::time::{Duration, Instant};

/// The shared seeded generator: kill moments and batch shapes replay from a printed seed.
// Every CLI test file compiles this module; only the kill drills draw from it.
#[allow(unused_imports)]
pub(crate) use annal_support::rng::Rng;

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name} must be a number")))
}

/// `ANNAL_KILL_DRILL_KILLS` (default 20, what CI runs) and `ANNAL_KILL_DRILL_SEED` (default:
/// the clock), printed under `name` so a failing drill can be replayed with the same choices.
pub(crate) fn settings(name: &str) -> (usize, u64) {
    let kills = env_number("ANNAL_KILL_DRILL_KILLS").unwrap_or(20) as usize;
    let seed = env_number("ANNAL_KILL_DRILL_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    println!("{name}: {kills} kills, seed {seed} (ANNAL_KILL_DRILL_SEED={seed} replays it)");
    (kills, seed)
}

/// Rounds a drill may run beyond its kills when some kills missed (the process had finished):
/// enough for the minimums to hold on a busy machine, bounded so a drill that cannot kill
/// anything still ends, and fails.
pub(crate) fn rounds_max(kills: usize) -> usize {
    kills * 3
}

/// Fails unless `got` reaches `least`, naming `what` and every count of the drill.
pub(crate) fn require(what: &str, got: usize, least: usize, counts: &str) {
    assert!(got >= least, "{what}: {got}, fewer than the {least} required; {counts}");
}

/// Kill moments within the duration of a run of the killed process, learnt from the runs that
/// ended on their own: a kill that comes after the process finished shrinks the window to the
/// time the process took, so kills keep landing inside runs however busy the machine is. A drill
/// that can tell a kill came before the process did any work (a process spends a while starting
/// and opening the store first) reports it, and later kills move past that start, towards the
/// moments where the work happens.
#[derive(Debug, Default)]
pub(crate) struct KillTimer {
    window: Option<Duration>,
    /// About when the work starts: kills before it found nothing done, kills after it found
    /// work done; it moves half way towards each such kill.
    start: Duration,
}

impl KillTimer {
    /// A timer whose window is the duration of one measured run.
    pub(crate) fn measured(run: Duration) -> KillTimer {
        KillTimer { window: Some(run), start: Duration::ZERO }
    }

    /// The window (about how long a run takes) and the estimated start of the work; the window
    /// is `None` before any run was measured.
    pub(crate) fn window(&self) -> (Option<Duration>, Duration) {
        (self.window, self.start)
    }

    /// When to kill the next run: a moment between the start of the work and the end of the
    /// window, drawn from `rng`; `None` while no run was measured (then the run is left to end
    /// and measured).
    pub(crate) fn next(&self, rng: &mut Rng) -> Option<Duration> {
        let window = self.window?;
        // A run that ended early shrinks the window below the start: kill in its second half.
        let from = self.start.min(window / 2);
        Some(from + Duration::from_micros(rng.below((window - from).as_micros().max(1) as u64)))
    }

    /// A run ended on its own after `took`: the window follows it.
    pub(crate) fn finished(&mut self, took: Duration) {
        self.window = Some(took);
    }

    /// A kill at `at` found no work done yet: the work starts later than thought, and when that
    /// passes half the window, runs take longer than the window says (it only shrinks when a run
    /// ends early), so it grows with it.
    pub(crate) fn before_work(&mut self, at: Duration) {
        if at > self.start {
            self.start += (at - self.start) / 2;
        }
        self.window = self.window.map(|window| window.max(self.start * 2));
    }

    /// A kill at `at` found work done: the work starts earlier than thought.
    pub(crate) fn after_work_started(&mut self, at: Duration) {
        if at < self.start {
            self.start -= (self.start - at) / 2;
        }
    }
}

/// How a run met its kill moment.
#[derive(Debug)]
pub(crate) enum Killed {
    /// It was running and got SIGKILL.
    MidRun,
    /// It had ended on its own, after this long.
    Finished(Duration),
}

/// Waits until `after` past `started`, watching `child`: if it ends before, reports when;
/// otherwise sends it SIGKILL (`Child::kill` sends SIGKILL on unix).
pub(crate) fn kill_at(child: &mut Child, started: Instant, after: Duration) -> Killed {
    loop {
        if child.try_wait().expect("waiting for a drilled process").is_some() {
            return Killed::Finished(started.elapsed());
        }
        let elapsed = started.elapsed();
        if elapsed >= after {
            let _ = child.kill();
            return Killed::MidRun;
        }
        std::thread::sleep((after - elapsed).min(Duration::from_micros(500)));
    }
}
