//! Fork and retry: an attempt goes wrong, so the agent forks the session just before it (O(1),
//! nothing copied) and tries another way on the fork. Both histories stay in the journal; each
//! session's projection and searches see only its own line.
//!
//! `cargo run -p annal --example fork_and_retry`

use std::error::Error;

use annal::{Annal, Block, Budget, ProjectOptions, Record, Role, SearchRequest};

fn call(id: &str, command: &str) -> Block {
    Block::tool_call(id, "Bash", format!("{{\"command\":{command:?}}}"))
}

fn result(id: &str, is_error: bool, output: &str) -> Block {
    Block::tool_result(id, "Bash", is_error, output)
}

/// Prints what a model would be sent for `session`.
fn show(annal: &Annal, session: &str) -> Result<(), Box<dyn Error>> {
    let view = annal.project(session, &ProjectOptions::new(Budget::new(200_000, 32_000)))?;
    println!("{session}: {} messages, {} tokens", view.messages.len(), view.stats.tokens.total);
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let annal = Annal::open(dir.path().join("retry.redb"))?;
    let session = "flaky-auth";

    // The first attempt: a sleep papers over the race, and the test still fails.
    annal.append(
        session,
        Some(0),
        vec![
            Record::text("u1", Role::User, "test_user_auth fails one run in ten. Fix it."),
            Record::new(
                "a1",
                Role::Assistant,
                vec![Block::text("The token expiry races the clock."), call("c1", "rg expires_at")],
            ),
            Record::new(
                "t1",
                Role::Tool,
                vec![result("c1", false, "src/auth.rs:42: if token.expires_at <= now()")],
            ),
        ],
    )?;
    let before_attempt = annal.sessions()?.iter().find(|s| s.name == session).map_or(0, |s| s.len);
    annal.append(
        session,
        Some(before_attempt),
        vec![
            Record::new(
                "a2",
                Role::Assistant,
                vec![Block::text("Adding a 500 ms sleep before the check."), call("c2", "cargo test")],
            ),
            Record::new(
                "t2",
                Role::Tool,
                vec![result("c2", true, "test_user_auth ... FAILED (token expired)")],
            ),
        ],
    )?;
    println!("attempt 1 failed; forking {session} at sourceOrder {before_attempt}, before the sleep");

    // The retry: a fork that shares records [0, before_attempt) and goes another way.
    let retry = annal.fork(session, before_attempt, "flaky-auth-retry")?;
    annal.append(
        &retry.name,
        Some(retry.len),
        vec![
            Record::new(
                "a2-retry",
                Role::Assistant,
                vec![Block::text("Injecting a fake clock instead."), call("c2r", "cargo test")],
            ),
            Record::new(
                "t2-retry",
                Role::Tool,
                vec![result("c2r", false, "test_user_auth ... ok (100 runs)")],
            ),
        ],
    )?;

    for info in annal.sessions()? {
        match (&info.parent, info.fork_at) {
            (Some(parent), Some(at)) => {
                println!("{}: {} records, forked from {parent} at {at}", info.name, info.len)
            }
            _ => println!("{}: {} records", info.name, info.len),
        }
    }
    show(&annal, session)?;
    show(&annal, &retry.name)?;

    // Searches follow a session's line: the fork inherits the diagnosis, not the failed attempt.
    for name in [session, retry.name.as_str()] {
        let mut request = SearchRequest::new("test_user_auth");
        request.session = Some(name.to_owned());
        let ids: Vec<String> = annal.search(&request)?.iter().map(|hit| hit.id()).collect();
        println!("search test_user_auth in {name}: {}", ids.join(", "));
    }
    let mut failures = SearchRequest::new("FAILED");
    failures.errors_only = true;
    let failed = annal.search(&failures)?;
    println!(
        "failed tool results anywhere: {}",
        failed.iter().map(|h| h.id()).collect::<Vec<_>>().join(", ")
    );
    assert_eq!(failed.len(), 1);

    // Both lines stay verifiable; the fork copied nothing.
    assert!(annal.verify(None)?.is_ok());
    println!("verified: every session's hash chain holds");
    annal.close()?;
    Ok(())
}
