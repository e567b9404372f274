//! `annal fleet` and `annal append --fleet` as processes, against a real 3-node JetStream
//! cluster: a follower killed at random moments, two processes racing on one shared session,
//! servers that cannot be reached, a follower that trusts one host's key.

use std::process::Stdio;
use std::time::Duration;

use annal_engine::{Record, Store, StoreOptions};
use annal_support::nats::{Cluster, Sync};
use annal_support::rng::Rng;
use annal_support::sessions::{Profile, SessionSpec};

use crate::support::{status, Sandbox};

fn chain(path: &std::path::Path, session: &str) -> Vec<(String, [u8; 32])> {
    let store = Store::open(path, StoreOptions::default()).expect("store");
    let snapshot = store.snapshot().expect("snapshot");
    if snapshot.session(session).expect("session").is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for guard in snapshot.records(session, 0..u64::MAX).expect("records") {
        let guard = guard.expect("record");
        let view = guard.view().expect("view");
        out.push((view.entry_id().to_owned(), view.hash()));
    }
    out
}

#[test]
fn a_follower_killed_at_random_moments_resumes_with_no_gap_and_no_duplicate() {
    let cluster = Cluster::start(3, Sync::Default, None);
    let urls = cluster.urls();
    let origin = Sandbox::new();
    let names: Vec<String> = (0..12).map(|i| format!("session {i} 日本")).collect();
    {
        let store = Store::open(&origin.db, StoreOptions::default()).expect("origin");
        for (i, name) in names.iter().enumerate() {
            let records: Vec<Record> = SessionSpec { profile: Profile::Coding, seed: i as u64 }
                .records()
                .take(400)
                .map(|mut r| {
                    r.entry_id = format!("{name}/{}", r.entry_id);
                    r
                })
                .collect();
            store.append(name, Some(0), records).expect("append");
        }
    }
    origin.annal(&["fleet", "publish", "--to", &urls], "").ok();

    let follower = Sandbox::new();
    let mut rng = Rng::new(24);
    for _ in 0..20 {
        let mut child = follower
            .command(&["fleet", "follow", &urls])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("follow starts");
        std::thread::sleep(Duration::from_millis(rng.between(30, 400) as u64));
        // SIGKILL: no chance to finish a batch or write a cursor.
        let _ = child.kill();
        let _ = child.wait();
    }
    let last = follower.annal(&["fleet", "follow", &urls, "--json"], "").ok();
    let report: serde_json::Value = serde_json::from_str(last.stdout.trim()).expect("a JSON report");
    assert_eq!(report["stopped"], serde_json::json!([]), "{}", last.stdout);
    for name in &names {
        assert_eq!(chain(&follower.db, name), chain(&origin.db, name), "{name}");
    }
    follower.annal(&["verify"], "").ok();
    let status = follower.annal(&["fleet", "status", &urls, "--json"], "").ok();
    for line in status.stdout.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!((row["lag"].as_u64(), row["unpublished"].as_u64()), (Some(0), Some(0)), "{line}");
    }
}

#[test]
fn two_processes_racing_on_a_shared_session_each_win_distinct_positions() {
    let cluster = Cluster::start(3, Sync::Default, None);
    let urls = cluster.urls();
    let wins = 6;
    let racers: Vec<_> = (0..2)
        .map(|host| {
            let urls = urls.clone();
            std::thread::spawn(move || {
                let sandbox = Sandbox::new();
                let (mut won, mut conflicts) = (0, 0);
                while won < wins {
                    sandbox.annal(&["fleet", "follow", &urls], "").ok();
                    let next = chain(&sandbox.db, "shared").len().to_string();
                    let line = serde_json::json!({
                        "entryId": format!("p{host}-{won}"), "role": "user",
                        "blocks": [{"type": "text", "text": format!("process {host}, turn {won}: 日本語 🚀")}],
                    });
                    let run = sandbox.annal(&["append", "shared", "--fleet", &urls, "--expect", &next], &line.to_string());
                    match run.code {
                        Some(0) => won += 1,
                        Some(status::CONFLICT) => {
                            assert!(run.stderr.starts_with("annal: ") && run.stderr.contains("conflict"), "{}", run.stderr);
                            conflicts += 1;
                        }
                        other => panic!("append --fleet exited {other:?}: {}", run.stderr),
                    }
                }
                conflicts
            })
        })
        .collect();
    for racer in racers {
        racer.join().expect("racer");
    }
    let follower = Sandbox::new();
    follower.annal(&["fleet", "follow", &urls], "").ok();
    let held = chain(&follower.db, "shared");
    assert_eq!(held.len(), 2 * wins, "one record per won append, no gap");
    let ids: std::collections::BTreeSet<_> = held.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), held.len());
    follower.annal(&["verify"], "").ok();
}

#[test]
fn servers_that_cannot_be_reached_are_one_line_and_local_appends_go_on() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let url = format!("nats://user:pa55word@127.0.0.1:{port}");
    let sandbox = Sandbox::new();
    let line = r#"{"entryId": "e0", "role": "user", "blocks": [{"type": "text", "text": "hi 日本"}]}"#;
    let run = sandbox.annal(&["append", "s", "--fleet", &url, "--timeout", "2"], line);
    assert_eq!(run.code, Some(status::IO), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(&format!("cannot reach nats://***@127.0.0.1:{port}")), "{}", run.stderr);
    assert!(!run.stderr.contains("pa55word"));
    let run = sandbox.annal(&["fleet", "publish", "--to", &url, "--timeout", "2"], "");
    assert_eq!(run.code, Some(status::IO), "{}", run.stderr);
    sandbox.annal(&["append", "s"], line).ok();
    assert_eq!(chain(&sandbox.db, "s").len(), 1);
}

#[test]
fn mcp_with_a_fleet_finds_what_another_host_published() {
    let cluster = Cluster::start(3, Sync::Default, None);
    let urls = cluster.urls();
    let origin = Sandbox::new();
    let line = r#"{"entryId": "q1", "role": "user", "blocks": [{"type": "text", "text": "the quokka migration 日本 🚀"}]}"#;
    origin.annal(&["append", "elsewhere"], line).ok();
    origin.annal(&["fleet", "publish", "--to", &urls], "").ok();

    let host = Sandbox::new();
    let mut client =
        crate::support::mcp::Client::start_with(&host, &["mcp", "--fleet", &urls]).expect("server");
    let mut found = String::new();
    for _ in 0..100 {
        let (texts, error) =
            client.call("history_search", serde_json::json!({"query": "quokka"})).expect("call");
        found = texts.concat();
        if !error && found.contains("q1#0") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(found.contains("q1#0 [elsewhere #0 user]"), "{found}");
    client.finish().expect("the server exits");
}

#[test]
fn sync_publishing_to_servers_that_cannot_be_reached_keeps_what_it_stored() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let sandbox = Sandbox::new();
    let url = format!("nats://127.0.0.1:{port}");
    let run = sandbox.annal(&["sync", "--only", "codex", "--publish", &url, "--timeout", "2"], "");
    assert_eq!(run.code, Some(status::IO), "{}", run.stderr);
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("sync stored everything, but") && last.contains(&url), "{}", run.stderr);
    sandbox.annal(&["sessions"], "").ok();
}

/// `annal fleet key` and `annal fleet trust`: a follower that trusts one host's key applies that
/// host's sessions and stops another host's with one line (exit 9); `status` names the signer.
#[test]
fn a_follower_trusting_one_key_applies_its_records_and_refuses_anothers() {
    let cluster = Cluster::start(3, Sync::Default, None);
    let urls = cluster.urls();
    let lines = |prefix: &str| -> String {
        (0..3)
            .map(|i| {
                let text = format!("turn {i}: 日本語のテキスト\u{3000}🚀 e\u{301}");
                let line = serde_json::json!({"entryId": format!("{prefix}-{i}"), "role": "user",
                    "blocks": [{"type": "text", "text": text}]});
                format!("{line}\n")
            })
            .collect()
    };
    let (origin, other) = (Sandbox::new(), Sandbox::new());
    let (mine, theirs) = ("会話 🚀", "other e\u{301}");
    origin.annal(&["append", mine], &lines("o")).ok();
    other.annal(&["append", theirs], &lines("x")).ok();
    origin.annal(&["fleet", "publish", "--to", &urls], "").ok();
    other.annal(&["fleet", "publish", "--to", &urls], "").ok();

    let key = origin.annal(&["fleet", "key"], "").ok().stdout.trim().to_owned();
    assert_eq!(key.len(), 64, "{key}");
    assert_eq!(origin.annal(&["fleet", "key"], "").ok().stdout.trim(), key, "made once");
    let key_file = origin.dir().join("store.redb-fleet-key");
    let secret = std::fs::read_to_string(&key_file).expect("the key file");
    assert!(!secret.contains(&key), "the file holds the secret seed, the command the public key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file).expect("key file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    let follower = Sandbox::new();
    let bad = follower.annal(&["fleet", "trust", "add", "origin", "not-a-key"], "");
    assert_eq!(bad.code, Some(status::BAD_INPUT), "{}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("is not a host's public key"), "{}", bad.stderr);
    follower.annal(&["fleet", "trust", "add", "origin 東京", &key], "").ok();
    let listed = follower.annal(&["fleet", "trust", "list"], "").ok();
    assert_eq!(listed.stdout, format!("origin 東京\t{key}\n"));

    let run = follower.annal(&["fleet", "follow", &urls], "");
    assert_eq!(run.code, Some(status::CORRUPTED), "{}", run.stderr);
    let stopped = run.stderr.lines().find(|line| line.contains(&format!("session {theirs:?} stopped")));
    let stopped = stopped.unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(stopped.contains("a key this store does not trust"), "{stopped}");
    assert_eq!(chain(&follower.db, mine), chain(&origin.db, mine));
    assert!(chain(&follower.db, theirs).is_empty());
    let status_run = follower.annal(&["fleet", "status", &urls], "").ok();
    let row = status_run.stdout.lines().find(|line| line.starts_with(&format!("{mine:?}")));
    let row = row.unwrap_or_else(|| panic!("{}", status_run.stdout));
    assert!(row.contains("signed by origin 東京 (3)"), "{row}");
    follower.annal(&["verify"], "").ok();

    // The session rewritten with other text, its chain recomputed, under the kept signatures:
    // `annal verify` fails on the first record, naming it.
    let rewritten = Sandbox::new();
    rewritten.annal(&["append", mine], &lines("o").replace("turn", "altered turn")).ok();
    {
        let kept =
            Store::open(&follower.db, StoreOptions::default()).expect("follower").cursors("fleet-sig:");
        let rows = kept.expect("rows").into_iter().map(|(name, value)| (name, Some(value))).collect();
        let store = Store::open(&rewritten.db, StoreOptions::default()).expect("rewritten");
        store.put_cursors(rows).expect("copy the signatures");
    }
    let run = rewritten.annal(&["verify"], "");
    assert_eq!(run.code, Some(status::CORRUPTED), "{}", run.stdout);
    let problem = format!(
        "problem: session {mine:?}, sourceOrder 0: the record does not match the signature kept for it"
    );
    assert!(run.stdout.contains(&problem), "{}", run.stdout);

    let gone = follower.annal(&["fleet", "trust", "remove", "nobody"], "");
    assert_eq!(gone.code, Some(status::NOT_FOUND), "{}", gone.stderr);
    follower.annal(&["fleet", "trust", "remove", "origin 東京"], "").ok();
    assert_eq!(follower.annal(&["fleet", "trust", "list", "--json"], "").ok().stdout, "");
}
