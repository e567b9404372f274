//! What the kill drills share: their settings from the environment and a seeded source of
//! kill moments and batch shapes.

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
