//! `annal sync --watch`: a pass, then another whenever an agent's files change (file-system
//! events through `notify`) or the rescan interval passes, whichever comes first. Each pass
//! prints a line for every source where something happened; the search index is brought up to
//! date after each pass that stored records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use annal::sync::{may_hold_sessions, SyncOptions};
use annal::Annal;
use anyhow::Context;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use super::{pass, write_report, SyncArgs};
use crate::output::Out;
use crate::store::StoreLocation;

/// How long to let a burst of events settle: an agent writes a turn as several appends.
const SETTLE: Duration = Duration::from_millis(100);

/// How soon a pass runs again after one that read a database still being written: once its
/// files have been still long enough for the sources to count them settled.
const UNSETTLED_RETRY: Duration = Duration::from_millis(2_500);

pub(super) fn run(
    location: &StoreLocation,
    store: &Annal,
    options: &SyncOptions,
    args: &SyncArgs,
    out: &mut Out,
) -> anyhow::Result<()> {
    let (sender, events) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // The receiver lives as long as the loop below; nothing to do once it is gone.
        let _ = sender.send(event);
    })
    .context("cannot watch the file system for changes")?;
    let mut watched = BTreeSet::new();
    let rescan = Duration::from_secs(args.rescan_secs.max(1));
    let mut first = true;
    let mut relay = args.publish.as_ref().map(|urls| crate::store::Relay::new(urls, &args.connection));
    loop {
        let report = pass(location, store, options)?;
        let mut added = false;
        // An agent annal cannot read has nothing to wake a pass for.
        for source in report.sources.iter().filter(|source| source.agent.not_readable().is_none()) {
            for place in &source.locations {
                added |= watch(&mut watcher, &mut watched, place);
            }
        }
        write_report(&report, args.json, !first, out)?;
        first = false;
        if let Some(relay) = &mut relay {
            if let Err(line) = relay.step(store, false) {
                eprintln!("annal: {line}; publishing again after the next pass");
            }
        }
        // What changed in a newly found place between the pass and its watch raised no
        // event: one more pass picks it up (it reads only what changed).
        if !added {
            // A database read while a commit may still have been landing is read again soon,
            // even if nothing wakes the watch (the commit's last step changes no file).
            let unsettled = report.sources.iter().any(|source| source.units_unsettled > 0);
            wait(&events, if unsettled { rescan.min(UNSETTLED_RETRY) } else { rescan }, location.path());
        }
    }
}

/// Starts watching `place` (once); whether it is newly watched. A place that cannot be
/// watched is still rescanned.
fn watch(watcher: &mut RecommendedWatcher, watched: &mut BTreeSet<PathBuf>, place: &Path) -> bool {
    if watched.contains(place) {
        return false;
    }
    match watcher.watch(place, RecursiveMode::Recursive) {
        Ok(()) => watched.insert(place.to_owned()),
        Err(err) => {
            eprintln!("annal: cannot watch {} ({err}); it is rescanned instead", place.display());
            // Tried once: a place that cannot be watched is not tried on every pass.
            watched.insert(place.to_owned());
            false
        }
    }
}

/// Whether `path` is one of the store's own files (the store, its log, its index folder, all
/// named after the store file): a store kept inside an agent's folder must not wake its own
/// watch.
fn is_own(path: &Path, store: &Path) -> bool {
    let (Some(folder), Some(name)) = (store.parent(), store.file_name()) else { return false };
    let first = path.strip_prefix(folder).ok().and_then(|rest| rest.components().next());
    first.is_some_and(|c| c.as_os_str().as_encoded_bytes().starts_with(name.as_encoded_bytes()))
}

/// Returns after a relevant change has settled, or when `rescan` has passed.
fn wait(events: &mpsc::Receiver<notify::Result<notify::Event>>, rescan: Duration, store: &Path) {
    let deadline = Instant::now() + rescan;
    let relevant = |event: &notify::Result<notify::Event>| match event {
        Ok(event) => {
            !event.kind.is_access() && event.paths.iter().any(|p| !is_own(p, store) && may_hold_sessions(p))
        }
        // A lost event (an overflowing queue): rescan now rather than miss a change.
        Err(_) => true,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(event) if relevant(&event) => break,
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => return,
            // The watcher stopped: only the rescans are left, so wait for the next one.
            Err(mpsc::RecvTimeoutError::Disconnected) => return std::thread::sleep(left),
        }
    }
    // Let the burst settle: an agent writes a turn as several appends, and a pass reads a
    // changed transcript whole.
    std::thread::sleep(SETTLE);
    while events.try_recv().is_ok() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stores_own_files_are_told_apart() {
        let store = Path::new("/d/annal.redb");
        for own in ["/d/annal.redb", "/d/annal.redb-log", "/d/annal.redb.index/seg.idx"] {
            assert!(is_own(Path::new(own), store), "{own}");
        }
        for other in ["/d/s1.jsonl", "/d/x/annal.redb", "/e/annal.redb"] {
            assert!(!is_own(Path::new(other), store), "{other}");
        }
    }
}
