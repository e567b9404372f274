//! The same five steps for every source that reads files (those that keep sessions in
//! project folders given the folder), each over a made-up home laid out as
//! its agent lays out its files: discovery (a survey finds the session and reads nothing), a
//! first sync, a second that reads nothing, the session grown or rewritten (only what is new is
//! stored), and a bad file beside it (reported, nothing else lost). The sources' own tests hold
//! what is particular to each; the databases' are in `sync_each_database`, the fixtures in
//! `source_cases`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::source_cases::cases;
use crate::sync_sources::{options, session_len, source, TestResult};
use annal::sync::{Agent, SyncOptions};
use annal::Annal;

fn write(home: &Path, relative: &str, text: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let path = home.join(relative);
    fs::create_dir_all(path.parent().ok_or("a folder")?)?;
    fs::write(&path, text)?;
    Ok(path)
}

#[test]
fn every_file_source_finds_syncs_grows_and_reports_bad_input() -> TestResult {
    for case in cases() {
        let name = case.agent.name();
        let home = tempfile::tempdir()?;
        let file = write(home.path(), case.file, &case.first)?;
        let annal = Annal::open(home.path().join("annal.redb"))?;
        let mut sync = options(home.path(), &[case.agent]);
        sync.projects.extend(case.project.map(|project| home.path().join(project)));

        let stored = first_steps(&annal, &sync, case.agent, case.session, name)?;

        match case.grown_file {
            Some(grown) => drop(write(home.path(), grown, &case.grown)?),
            None => fs::write(&file, &case.grown)?,
        }
        let grown = annal.sync(&sync)?;
        assert_eq!(source(&grown, case.agent).records_new, case.added, "{name}: {grown:?}");
        assert_eq!(session_len(&annal, case.session)?, stored + case.added, "{name}");

        write(home.path(), case.bad, "{\"cut\": \"short\n\u{0}\u{1b}[31m not JSON 解析\n")?;
        let bad = annal.sync(&sync)?;
        let report = source(&bad, case.agent);
        assert_eq!(report.records_new, 0, "{name}: {report:?}");
        let said = report.problems.iter().chain(&report.skipped).any(|line| line.contains("bad"));
        assert!(said, "{name}: the bad file is not named: {report:?}");
        assert_eq!(session_len(&annal, case.session)?, stored + case.added, "{name}");
        assert!(annal.verify(None)?.is_ok(), "{name}");
    }
    Ok(())
}

/// The first three of the five steps, shared with `sync_each_database`: a survey finds one unit
/// and reads nothing, a first sync stores the session whole, a second reads nothing. Returns
/// how many records the first sync stored.
pub(crate) fn first_steps(
    annal: &Annal,
    sync: &SyncOptions,
    agent: Agent,
    session: &str,
    name: &str,
) -> Result<u64, Box<dyn std::error::Error>> {
    let surveyed = annal.survey(sync)?;
    let units = surveyed.iter().find(|report| report.agent == agent).map_or(0, |report| report.units);
    assert_eq!(units, 1, "{name}: discovery");
    assert_eq!(annal.sessions()?.len(), 0, "{name}: a survey reads nothing");

    let first = annal.sync(sync)?;
    let report = source(&first, agent);
    assert!(report.problems.is_empty() && report.skipped.is_empty(), "{name}: {report:?}");
    assert!(report.records_new > 0, "{name}: {report:?}");
    assert_eq!(session_len(annal, session)?, report.records_new, "{name}");
    let stored = report.records_new;

    let again = annal.sync(sync)?;
    let report = source(&again, agent);
    assert_eq!((report.units_read, report.records_new), (0, 0), "{name}: {report:?}");
    Ok(stored)
}
