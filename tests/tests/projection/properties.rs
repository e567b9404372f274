//! Property tests of projections, made through the facade (`annal::Annal::project`, `fork`),
//! over generated sessions (parallel and split parallel calls, huge outputs, user text past the
//! history target, a newest turn past the tail, pending calls, sessions under the trigger,
//! forks): every user text shown verbatim or marked under the capacity rule; no orphan call or
//! result; the total within the capacity; every omitted record named by a marker or covered by
//! the evidence index; the same input giving the same bytes; a fork projecting exactly as a
//! copied session.
//!
//! Cases per property: 32 by default; set PROPTEST_CASES for longer runs.
#![allow(clippy::unwrap_used)]

use annal::{Budget, ProjectOptions, Record, ViewSource};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use crate::projection_support::{annal, check_projection, check_verbatim, record_tokens, shaped, Shape};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32)
}

fn shapes() -> impl Strategy<Value = Shape> {
    (any::<u64>(), 1usize..14, 0usize..6, prop::collection::vec(any::<bool>(), 9)).prop_map(
        |(seed, turns, steps_max, f)| Shape {
            seed,
            turns,
            steps_max,
            parallel: f[0],
            split_parallel: f[1],
            huge_output: f[2] && f[3],
            huge_user: f[4] && f[5],
            big_newest_turn: f[6],
            pending_call: f[7],
            open_turn: f[3] && !f[7],
            system: f[8],
            thinking: f[0] ^ f[8],
        },
    )
}

fn budgets() -> impl Strategy<Value = Budget> {
    (
        prop_oneof![Just(16_000u32), Just(32_000), Just(64_000)],
        500u32..6_000,
        prop_oneof![Just(1_000u32), Just(2_000), Just(4_000)],
        prop_oneof![Just(512u32), Just(1_024), Just(2_048)],
        prop_oneof![Just(2_000u32), Just(4_000), Just(8_000), Just(16_000)],
    )
        .prop_map(|(window, output, tail, evidence, history)| Budget {
            tail_tokens: tail,
            evidence_tokens: evidence,
            history_tokens: history,
            ..Budget::new(window, output)
        })
}

fn orders(records: &[Record]) -> Vec<u64> {
    (0..records.len() as u64).collect()
}

proptest! {
    // Regressions are kept beside this file, as `<file>.proptest-regressions` (by default proptest
    // would put them in a folder parallel to the test binary's, away from the test).
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn projections_keep_what_they_must(shape in shapes(), budget in budgets()) {
        let records = shaped("s", &shape);
        let (_dir, history) = annal();
        history.append("s", Some(0), records.clone()).unwrap();
        let options = ProjectOptions::new(budget);
        let projection = history.project("s", &options).unwrap();
        check_projection(&records, &orders(&records), &projection, &budget).map_err(TestCaseError::fail)?;
        let again = history.project("s", &options).unwrap();
        prop_assert_eq!(&again, &projection);
        if record_tokens(&records) <= u64::from(budget.trigger_tokens()) {
            prop_assert_eq!(projection.source, ViewSource::Live);
            prop_assert!(!projection.compaction_due);
            check_verbatim(&records, &projection).map_err(TestCaseError::fail)?;
        } else {
            prop_assert_eq!(projection.source, ViewSource::Derived);
            prop_assert!(projection.compaction_due);
        }
        let (_other_dir, other) = annal();
        other.append("s", Some(0), records.clone()).unwrap();
        let copy = other.project("s", &options).unwrap();
        prop_assert_eq!(copy.hash, projection.hash);
    }

    #[test]
    fn a_fork_projects_as_its_copy(
        shape in shapes(),
        budget in budgets(),
        cuts in (0.0f64..1.0, 0.0f64..1.0),
        seed in any::<u64>(),
    ) {
        let records = shaped("s", &shape);
        let n = records.len();
        let (a, b) = {
            let x = (cuts.0 * n as f64) as usize;
            let y = (cuts.1 * n as f64) as usize;
            (x.min(y), x.max(y))
        };
        let detour = shaped("d", &Shape::plain(seed, 2));
        let (_dir, forked) = annal();
        let mut parent = records[..a].to_vec();
        parent.extend(detour.iter().take(5).cloned());
        forked.append("p", Some(0), parent).unwrap();
        forked.fork("p", a as u64, "mid").unwrap();
        let mut middle = records[a..b].to_vec();
        middle.extend(detour.iter().skip(5).cloned());
        forked.append("mid", Some(a as u64), middle).unwrap();
        forked.fork("mid", b as u64, "s").unwrap();
        forked.append("s", Some(b as u64), records[b..].to_vec()).unwrap();
        let (_copy_dir, copied) = annal();
        copied.append("s", Some(0), records.clone()).unwrap();
        let options = ProjectOptions::new(budget);
        let from_fork = forked.project("s", &options).unwrap();
        let from_copy = copied.project("s", &options).unwrap();
        prop_assert_eq!(&from_fork, &from_copy);
        check_projection(&records, &orders(&records), &from_fork, &budget).map_err(TestCaseError::fail)?;
    }
}
