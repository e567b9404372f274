//! One `Annal` shared by many threads: the handle and what it returns are `Send + Sync`
//! (checked at compile time), many sessions are written at once while others project and
//! search, and optimistic appends to one session from many threads never lose or duplicate a
//! record.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread;

use annal::error::AppendError;
use annal::{
    Annal, Budget, Error, Hit, Original, ProjectOptions, Projection, Record, Role, SearchRequest,
    SessionInfo, Snapshot,
};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const THREADS: usize = 8;
const TURNS: usize = 40;

fn send_sync<T: Send + Sync>() {}

#[test]
fn the_handle_and_its_answers_cross_threads() {
    send_sync::<Annal>();
    send_sync::<Snapshot>();
    send_sync::<Error>();
    send_sync::<Projection<'static>>();
    send_sync::<Hit>();
    send_sync::<Original>();
    send_sync::<SessionInfo>();
    // Errors box into the error type thread pools and async runtimes expect.
    let _: fn(Error) -> Box<dyn std::error::Error + Send + Sync> = |e| Box::new(e);
}

#[test]
fn many_sessions_are_written_at_once_while_others_read() -> TestResult {
    let dir = tempfile::tempdir()?;
    let annal = Arc::new(Annal::open(dir.path().join("threads.redb"))?);
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let annal = Arc::clone(&annal);
            thread::spawn(move || -> Result<(), Error> {
                let session = format!("agent-{t}");
                for turn in 0..TURNS {
                    let text = format!("thread{t} turn{turn} checked the ledger");
                    let record = Record::text(format!("{t}-{turn}"), Role::Assistant, text);
                    // Each thread owns its session, so its expected position always holds.
                    let receipt = annal.append(&session, Some(turn as u64), vec![record])?;
                    assert_eq!(receipt.source_orders, vec![turn as u64]);
                    // And every thread also writes to one shared session, positions unchecked.
                    let shared = Record::text(format!("shared-{t}-{turn}"), Role::User, format!("from {t}"));
                    annal.append("shared", None, vec![shared])?;
                }
                Ok(())
            })
        })
        .collect();
    let reader = {
        let annal = Arc::clone(&annal);
        thread::spawn(move || -> Result<usize, Error> {
            let options = ProjectOptions::new(Budget::new(16_000, 2_000));
            let mut reads = 0;
            for _ in 0..20 {
                for session in annal.sessions()? {
                    let view = annal.project(&session.name, &options)?;
                    // Writers go on appending: bound the view by the length after it was made.
                    let len = annal.snapshot()?.session(&session.name)?.map_or(0, |s| s.len);
                    assert!(view.messages.len() as u64 <= len + 1);
                    reads += 1;
                }
                annal.search(&SearchRequest::new("ledger"))?;
            }
            Ok(reads)
        })
    };
    for writer in writers {
        writer.join().map_err(|_| "a writer panicked")??;
    }
    reader.join().map_err(|_| "the reader panicked")??;

    let sessions = annal.sessions()?;
    assert_eq!(sessions.len(), THREADS + 1);
    let snapshot = annal.snapshot()?;
    for t in 0..THREADS {
        let session = format!("agent-{t}");
        let mut orders = Vec::new();
        for guard in snapshot.records(&session, 0..u64::MAX)? {
            let guard = guard?;
            let view = guard.view()?;
            assert_eq!(view.entry_id(), format!("{t}-{}", guard.source_order()), "in order, none lost");
            orders.push(guard.source_order());
        }
        assert_eq!(orders, (0..TURNS as u64).collect::<Vec<_>>());
    }
    let shared: HashSet<String> = snapshot
        .records("shared", 0..u64::MAX)?
        .map(|guard| guard.and_then(|g| g.view().map(|v| v.entry_id().to_owned())))
        .collect::<Result<_, _>>()?;
    assert_eq!(shared.len(), THREADS * TURNS, "every shared append stored once");
    drop(snapshot);

    // Everything appended by every thread is searchable.
    let mut request = SearchRequest::new("ledger");
    request.limit = THREADS * TURNS;
    let hits = annal.search(&request)?;
    assert_eq!(hits.len(), THREADS * TURNS);
    assert!(annal.verify(None)?.is_ok());
    Arc::into_inner(annal).ok_or("a handle is still shared")?.close()?;
    Ok(())
}

#[test]
fn optimistic_appends_to_one_session_lose_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let annal = Arc::new(Annal::open(dir.path().join("race.redb"))?);
    let racers: Vec<_> = (0..THREADS)
        .map(|t| {
            let annal = Arc::clone(&annal);
            thread::spawn(move || -> Result<u64, Error> {
                let mut conflicts = 0;
                for turn in 0..10 {
                    loop {
                        // Read the session's length, then append at exactly that position.
                        let next = annal.sessions()?.iter().find(|s| s.name == "one").map_or(0, |s| s.len);
                        let record = Record::text(format!("{t}-{turn}"), Role::User, "hello");
                        match annal.append("one", Some(next), vec![record]) {
                            Ok(_) => break,
                            Err(Error::Append(AppendError::Conflict { .. })) => conflicts += 1,
                            Err(other) => return Err(other),
                        }
                    }
                }
                Ok(conflicts)
            })
        })
        .collect();
    for racer in racers {
        racer.join().map_err(|_| "a racer panicked")??;
    }
    let info = annal.sessions()?.into_iter().find(|s| s.name == "one").ok_or("no session")?;
    assert_eq!(info.len, (THREADS * 10) as u64, "each record once, none lost");
    assert!(annal.verify(Some("one"))?.is_ok());
    Ok(())
}

/// Threads of one process that open one store not created yet, at once, each get a handle
/// (one name for the file being created made them truncate each other's).
#[test]
fn threads_opening_a_new_store_at_once_each_get_a_handle() -> TestResult {
    for round in 0..10 {
        let dir = tempfile::tempdir()?;
        let path = Arc::new(dir.path().join(format!("新 {round}.redb")));
        let start = Arc::new(std::sync::Barrier::new(3));
        let opens: Vec<_> = (0..3)
            .map(|i| {
                let (path, start) = (Arc::clone(&path), Arc::clone(&start));
                thread::spawn(move || {
                    start.wait();
                    let annal = Annal::open(path.as_path())?;
                    annal.append(
                        &format!("s{i}"),
                        Some(0),
                        vec![Record::text(format!("e{i}"), Role::User, "ﾃｽﾄ ✅")],
                    )?;
                    Ok::<_, Error>(annal)
                })
            })
            .collect();
        let handles =
            opens.into_iter().map(|open| open.join().expect("thread")).collect::<Result<Vec<_>, _>>()?;
        drop(handles);
        let annal = Annal::open(path.as_path())?;
        assert_eq!(annal.snapshot()?.sessions()?.len(), 3, "round {round}");
    }
    Ok(())
}
