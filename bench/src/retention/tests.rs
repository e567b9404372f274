//! A tiny exam (one profile, one window, a short session) run twice: the report is the same
//! bytes both times, and deterministic-v1 keeps its invariants.

use super::pooled::pool;
use super::report::render;
use super::session::Profile;
use super::{run, Contender, ExamConfig, WINDOWS};

fn tiny() -> ExamConfig {
    ExamConfig {
        profiles: vec![Profile::Records],
        windows: vec![WINDOWS[0]],
        length_multiple: 1.5,
        facts: 40,
        decoys: 10,
        sweep: false,
        ..ExamConfig::default()
    }
}

#[test]
fn tiny_exam_is_deterministic_and_keeps_its_invariants() -> anyhow::Result<()> {
    let config = tiny();
    let first = run(&config)?;
    let second = run(&config)?;
    let report = render(&first, "real corpus: not run.");
    assert_eq!(report, render(&second, "real corpus: not run."), "two runs of one exam differ");
    assert!(report.contains("## Targets"));

    let det = pool(first.sessions.iter(), Contender::Deterministic);
    assert!(det.compactions > 0, "the session must compact to test anything");
    assert_eq!(det.closed[0].0, det.closed[0].1, "user facts are kept verbatim");
    assert_eq!((det.task_lost, det.ask_lost, det.orphans, det.marker_only), (0, 0, 0, 0));
    assert_eq!(det.open.0, det.open.1, "every missing fact is found by search");
    assert!(det.prefix_between.0 >= det.prefix_between.1 as f64 - 1e-9, "prefix stable between compactions");
    for contender in Contender::ALL {
        let p = pool(first.sessions.iter(), contender);
        assert_eq!(p.decoys, 0, "{} found a decoy", contender.label());
        if matches!(contender, Contender::Baseline(_)) {
            assert!(
                det.closed[3].0 > p.closed[3].0,
                "{} kept as many facts as deterministic-v1",
                contender.label()
            );
        }
    }
    Ok(())
}
