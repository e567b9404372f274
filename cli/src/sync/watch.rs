//! `annal sync --watch`: a pass, then another whenever an agent's files change (file-system
//! events through `notify`) or the rescan interval passes, whichever comes first. Each pass
//! prints a line for every source where something happened; the search index is brought up to
//! date after each pass that stored records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use annal::{Annal, SyncOptions};
use anyhow::Context;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use super::{pass, write_report, SyncArgs};
use crate::location::StoreLocation;
use crate::output::Out;

/// How long to let a burst of events settle: an agent writes a turn as several appends.
const SETTLE: Duration = Duration::from_millis(100);

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
    let own = own_files(location.path());
    let mut first = true;
    loop {
        let report = pass(location, store, options)?;
        let mut added = false;
        for source in &report.sources {
            for place in &source.locations {
                added |= watch(&mut watcher, &mut watched, place);
            }
        }
        write_report(&report, args.json, !first, out)?;
        first = false;
        // What changed in a newly found place between the pass and its watch raised no
        // event: one more pass picks it up (it reads only what changed).
        if !added {
            wait(&events, rescan, &own);
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

/// The store's own files: a store kept inside an agent's folder must not wake its own watch.
fn own_files(store: &Path) -> Vec<PathBuf> {
    let mut out = vec![store.to_owned()];
    if let Some(parent) = store.parent() {
        out.push(parent.join("annal-index"));
    }
    out.push(PathBuf::from(format!("{}.log", store.display())));
    out
}

/// Returns after a relevant change has settled, or when `rescan` has passed.
fn wait(events: &mpsc::Receiver<notify::Result<notify::Event>>, rescan: Duration, own: &[PathBuf]) {
    let deadline = Instant::now() + rescan;
    let relevant = |event: &notify::Result<notify::Event>| match event {
        Ok(event) => {
            !event.kind.is_access() && event.paths.iter().any(|p| !own.iter().any(|o| p.starts_with(o)))
        }
        // A lost event (an overflowing queue): rescan now rather than miss a change.
        Err(_) => true,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(event) if relevant(&event) => break,
            Ok(_) => {}
            Err(_) => return,
        }
    }
    std::thread::sleep(SETTLE);
    while events.try_recv().is_ok() {}
}
