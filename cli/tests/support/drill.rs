//! What the kill drills share: their settings from the environment and a seeded source of
//! kill moments and batch shapes.

/// SplitMix64: a seeded, dependency-free source of kill moments and batch shapes.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

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
