//! Model checks (loom) of the compaction claim protocol, run by `.ci/run` with
//! `RUSTFLAGS="--cfg loom"`: every interleaving of the registry's claim, commit and release is
//! explored (up to `LOOM_MAX_PREEMPTIONS`). The durable claims table applies the same
//! transitions inside serialised write transactions, so these results carry over to it.

use annal_engine::loom_model::{Outcome, Registry};
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

const KEY: u8 = 1;
const LEASE_MS: u64 = 100;

/// Compactions racing for one key before any lease expires: at most one owns it at any time,
/// exactly one commits, and every other one sees it held or committed.
#[test]
fn at_most_one_owner_per_key_and_one_commit() {
    loom::model(|| {
        let registry = Arc::new(Registry::new());
        let owners = Arc::new(AtomicUsize::new(0));
        let commits = Arc::new(AtomicUsize::new(0));
        let racers: Vec<_> = (1..=3u8)
            .map(|me| {
                let (registry, owners, commits) = (registry.clone(), owners.clone(), commits.clone());
                thread::spawn(move || match registry.claim(KEY, me, 0, LEASE_MS) {
                    Outcome::Granted { token } => {
                        assert_eq!(owners.fetch_add(1, SeqCst), 0, "two owners of one key at once");
                        let committed = registry.commit(KEY, me, token);
                        owners.fetch_sub(1, SeqCst);
                        assert!(committed, "the only owner's commit was refused");
                        commits.fetch_add(1, SeqCst);
                    }
                    Outcome::Held { owner, .. } => assert_ne!(owner, me),
                    Outcome::Committed => {}
                })
            })
            .collect();
        for racer in racers {
            racer.join().unwrap();
        }
        assert_eq!(commits.load(SeqCst), 1);
    });
}

/// An owner that gives up releases its claim; the next claim increments the token, the released
/// token is refused, and exactly one commit lands: the finisher retries while the key is held,
/// so it always ends up committing, with the token after the quitter's if the quitter had one.
#[test]
fn a_released_claim_passes_on_with_a_new_token() {
    loom::model(|| {
        let registry = Arc::new(Registry::new());
        let commits = Arc::new(AtomicUsize::new(0));
        let quitter = {
            let (registry, commits) = (registry.clone(), commits.clone());
            thread::spawn(move || {
                let Outcome::Granted { token } = registry.claim(KEY, 1, 0, LEASE_MS) else { return None };
                registry.release(KEY, 1, token);
                if registry.commit(KEY, 1, token) {
                    commits.fetch_add(1, SeqCst);
                }
                Some(token)
            })
        };
        let finisher = {
            let (registry, commits) = (registry.clone(), commits.clone());
            thread::spawn(move || loop {
                match registry.claim(KEY, 2, 1, LEASE_MS) {
                    Outcome::Granted { token } => {
                        assert!(registry.commit(KEY, 2, token), "the current owner's commit was refused");
                        commits.fetch_add(1, SeqCst);
                        return token;
                    }
                    Outcome::Held { owner, .. } => assert_eq!(owner, 1, "held by nobody that claimed"),
                    Outcome::Committed => panic!("the key was committed with the released token"),
                }
                thread::yield_now();
            })
        };
        let quitter_token = quitter.join().unwrap();
        let finisher_token = finisher.join().unwrap();
        assert_eq!(commits.load(SeqCst), 1, "commits landed (a released token committed?)");
        // A claim granted before the finisher's made it the token's second holder.
        assert_eq!(finisher_token, quitter_token.map_or(1, |t| t + 1), "the token did not grow by one");
    });
}

/// No claim is stolen before its lease expires: a second owner inside the lease is refused.
#[test]
fn no_claim_is_stolen_inside_its_lease() {
    loom::model(|| {
        let registry = Arc::new(Registry::new());
        let Outcome::Granted { token } = registry.claim(KEY, 1, 0, LEASE_MS) else { panic!("first claim") };
        let owner = {
            let registry = registry.clone();
            thread::spawn(move || assert!(registry.commit(KEY, 1, token)))
        };
        let thief = {
            let registry = registry.clone();
            thread::spawn(move || {
                let outcome = registry.claim(KEY, 2, LEASE_MS - 1, LEASE_MS);
                assert!(
                    matches!(outcome, Outcome::Held { owner: 1, .. } | Outcome::Committed),
                    "{outcome:?}"
                );
            })
        };
        owner.join().unwrap();
        thief.join().unwrap();
    });
}

/// A takeover after the lease fences the slow owner: whatever the interleaving, exactly one of
/// the two commits, the takeover's token is the next one, and the slow owner's commit is refused
/// whenever it comes after the takeover.
#[test]
fn a_fenced_owner_never_commits() {
    loom::model(|| {
        let registry = Arc::new(Registry::new());
        let Outcome::Granted { token: slow_token } = registry.claim(KEY, 1, 0, LEASE_MS) else {
            panic!("first claim")
        };
        assert_eq!(slow_token, 1, "a first claim's token");
        let slow = {
            let registry = registry.clone();
            thread::spawn(move || registry.commit(KEY, 1, slow_token))
        };
        let late = {
            let registry = registry.clone();
            thread::spawn(move || match registry.claim(KEY, 2, 2 * LEASE_MS, LEASE_MS) {
                Outcome::Granted { token } => {
                    assert_eq!(token, slow_token + 1, "a takeover increments the token");
                    (true, registry.commit(KEY, 2, token))
                }
                Outcome::Committed => (false, false),
                Outcome::Held { .. } => panic!("an expired claim held off a takeover"),
            })
        };
        let slow_committed = slow.join().unwrap();
        let (took_over, late_committed) = late.join().unwrap();
        assert!(!(took_over && slow_committed), "the owner taken over committed with its stale token");
        assert!(!took_over || late_committed, "the owner after the takeover could not commit");
        assert_eq!(u8::from(slow_committed) + u8::from(late_committed), 1, "commits landed");
    });
}

/// The token, not the owner, fences: an owner that claims again after its lease ran out (a
/// retry of the same compaction) gets the next token, and a commit still carrying the first one
/// is refused whenever it runs after that claim. Exactly one of the two commits lands.
#[test]
fn a_stale_token_of_the_same_owner_never_commits() {
    loom::model(|| {
        let registry = Arc::new(Registry::new());
        let Outcome::Granted { token: first } = registry.claim(KEY, 1, 0, LEASE_MS) else {
            panic!("first claim")
        };
        let stale = {
            let registry = registry.clone();
            thread::spawn(move || registry.commit(KEY, 1, first))
        };
        let retry = {
            let registry = registry.clone();
            thread::spawn(move || match registry.claim(KEY, 1, 2 * LEASE_MS, LEASE_MS) {
                Outcome::Granted { token } => {
                    assert!(token > first, "a new claim's token {token} did not grow past {first}");
                    (true, registry.commit(KEY, 1, token))
                }
                Outcome::Committed => (false, false),
                Outcome::Held { .. } => panic!("an owner's own expired claim held it off"),
            })
        };
        let stale_committed = stale.join().unwrap();
        let (claimed_again, retry_committed) = retry.join().unwrap();
        assert!(!(claimed_again && stale_committed), "a stale token committed after a newer claim");
        assert!(!claimed_again || retry_committed, "the newest token could not commit");
        assert_eq!(u8::from(stale_committed) + u8::from(retry_committed), 1, "commits landed");
    });
}
