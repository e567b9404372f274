//! `annal history search`, `annal history get` and `annal reindex` through the real binary:
//! hits with ids that `get` takes, `--json` shapes, a fork's inherited records, identifiers that
//! look like flags, and one-line errors with a non-zero exit.

use crate::support::status;
use crate::support::Sandbox;
use serde_json::Value;

const RECORDS: &str = r#"{"entryId":"u1","role":"user","blocks":[{"type":"text","text":"Why does the client fail with ECONNRESET?"}]}
{"entryId":"a1","role":"assistant","blocks":[{"type":"text","text":"Reading it."},{"type":"toolCall","callId":"c1","tool":"Read","input":{"file_path":"src/api/client.ts"}}]}
{"entryId":"t1","role":"tool","blocks":[{"type":"toolResult","callId":"c1","tool":"Read","isError":true,"output":"line one\nError: read ECONNRESET\nrun with --max-output=5\nline four\n"}]}
"#;

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], RECORDS).ok();
    sandbox.annal(&["fork", "s", "--at", "2", "--name", "s-alt"], "").ok();
    sandbox
}

fn json(run: &crate::support::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout))
}

#[test]
fn search_hits_carry_ids_that_get_takes() {
    let sandbox = sandbox();
    let run = sandbox.annal(&["history", "search", "ECONNRESET", "--json"], "").ok();
    let hits = json(&run);
    let hits = hits.as_array().map(Vec::as_slice).unwrap_or_default();
    assert_eq!(hits.len(), 2, "{hits:?}");
    for hit in hits {
        for key in ["session", "entryId", "blockIndex", "sourceOrder", "role", "tool", "score", "snippet"] {
            assert!(hit.get(key).is_some(), "{key} missing from {hit}");
        }
    }
    let failed = hits.iter().find(|h| h["entryId"] == "t1").unwrap_or_else(|| panic!("{hits:?}"));
    assert_eq!(failed["tool"], "Read");
    let id = format!("{}#{}", failed["entryId"].as_str().unwrap_or_default(), failed["blockIndex"]);
    let got = sandbox.annal(&["history", "get", &id, "--raw"], "").ok();
    assert_eq!(got.stdout, "line one\nError: read ECONNRESET\nrun with --max-output=5\nline four\n");
    let lines = sandbox.annal(&["history", "get", &id, "--lines", "2:3"], "").ok();
    assert!(lines.stdout.ends_with("Error: read ECONNRESET\nrun with --max-output=5\n"), "{}", lines.stdout);
    assert!(lines.stdout.contains("lines 2–3 of 4"), "{}", lines.stdout);
    // Readable output marks the match and names the id.
    let readable = sandbox.annal(&["history", "search", "ECONNRESET", "--errors"], "").ok();
    assert!(
        readable.stdout.contains("t1#0") && readable.stdout.contains("**ECONNRESET**"),
        "{}",
        readable.stdout
    );
}

#[test]
fn identifiers_that_look_like_flags_are_searched_as_written() {
    let sandbox = sandbox();
    let run = sandbox.annal(&["history", "search", "--max-output", "--json"], "").ok();
    let hits = json(&run);
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    assert_eq!(hits[0]["entryId"], "t1");
    let run = sandbox.annal(&["history", "search", "src/api/client.ts", "--json"], "").ok();
    assert_eq!(json(&run)[0]["entryId"], "a1");
}

#[test]
fn a_fork_searches_what_it_inherits() {
    let sandbox = sandbox();
    let run = sandbox.annal(&["history", "search", "ECONNRESET", "--session", "s-alt", "--json"], "").ok();
    let hits = json(&run);
    let ids: Vec<&str> =
        hits.as_array().into_iter().flatten().filter_map(|h| h["entryId"].as_str()).collect();
    assert_eq!(ids, vec!["u1"], "t1 is past the fork point");
}

#[test]
fn errors_are_one_line_with_a_failing_exit() {
    let sandbox = sandbox();
    for (args, status) in [
        (&["history", "search", "\"unclosed"][..], status::BAD_INPUT),
        (&["history", "search", "x", "--session", "nope"], status::NOT_FOUND),
        (&["history", "get", "nope"], status::NOT_FOUND),
        (&["history", "get", "u1#5"], status::NOT_FOUND),
        (&["history", "get", "a1", "--raw"], status::BAD_INPUT),
    ] {
        let run = sandbox.annal(args, "");
        assert_eq!(run.code, Some(status), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {:?}", run.stderr);
        assert!(run.stderr.starts_with("annal: "), "{args:?}: {:?}", run.stderr);
    }
}

/// Queries nested or sized to overflow the parser's stack: one line of bad input each, the
/// store untouched, the next search as before.
#[test]
fn a_query_nested_thousands_deep_is_one_line_of_bad_input() {
    let sandbox = sandbox();
    let groups = format!("{}ECONNRESET{}", "(".repeat(10_000), ")".repeat(10_000));
    let under_the_length_limit = format!("{}ECONNRESET{}", "(".repeat(5_000), ")".repeat(5_000));
    let nots = format!("ECONNRESET {}Reading", "NOT ".repeat(3_000));
    for (query, says) in [
        (&groups, "the query is 20010 bytes long, over the limit of 16384"),
        (&under_the_length_limit, "the query nests groups and NOTs 5000 deep, over the limit of 32"),
        (&nots, "the query nests groups and NOTs 3000 deep, over the limit of 32"),
    ] {
        for literal in [false, true] {
            let mut args = vec!["history", "search", query.as_str()];
            if literal {
                args.push("--literal");
            }
            let run = sandbox.annal(&args, "");
            if literal && query.len() <= 16_384 {
                // Searched as written (a phrase that is in no record): nothing nests there.
                assert_eq!(run.code, Some(0), "{run:?}");
                continue;
            }
            assert_eq!(run.code, Some(status::BAD_INPUT), "{}: {}", &query[..12], run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "{:?}", run.stderr);
            assert!(run.stderr.starts_with(&format!("annal: {says}")), "{:?}", run.stderr);
        }
    }
    let fits = format!("{}ECONNRESET{}", "(".repeat(32), ")".repeat(32));
    let run = sandbox.annal(&["history", "search", &fits, "--json"], "").ok();
    assert_eq!(json(&run).as_array().map(Vec::len), Some(2));
    sandbox.annal(&["verify"], "").ok();
}

#[test]
fn reindex_rebuilds_the_index() {
    let sandbox = sandbox();
    let run = sandbox.annal(&["reindex", "--json"], "").ok();
    let summary = json(&run);
    assert_eq!(summary["records"], 3);
    assert_eq!(summary["blocks"], 4);
    let hits = sandbox.annal(&["history", "search", "ECONNRESET", "--json"], "").ok();
    assert_eq!(json(&hits).as_array().map(Vec::len), Some(2));
}

#[test]
fn an_import_leaves_the_index_up_to_date() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir().join("exported.jsonl");
    let header = r#"{"format":"annal-jsonl","version":1,"session":"imported"}"#;
    std::fs::write(&file, format!("{header}\n{RECORDS}")).unwrap_or_else(|e| panic!("{e}"));
    sandbox.annal(&["import", file.to_str().unwrap_or_default()], "").ok();
    // Opened right after, before its indexer thread has looked at the journal, the index
    // already covers every record the import stored.
    let db = sandbox.dir().join("store.redb");
    let store = std::sync::Arc::new(
        annal_engine::Store::open(&db, annal_engine::StoreOptions::default())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let end = store.snapshot().and_then(|s| s.position_end()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(end, 3);
    let index =
        annal_query::SearchIndex::open(std::sync::Arc::clone(&store), annal_query::IndexOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
    let status = index.status();
    assert_eq!((status.searchable, status.documents), (end, 4), "{status:?}");
    index.close().unwrap_or_else(|e| panic!("{e}"));
}

/// Two records say "billing ticket" alike, thirty records apart; `--context` names what is being
/// worked on, and the one stated where that was discussed comes first. The context is never
/// searched for itself, and an exact identifier is still found alone.
#[test]
fn the_context_lifts_the_hits_near_where_it_was_discussed() {
    let line = |id: &str, role: &str, text: &str| {
        let block = serde_json::json!({"type": "text", "text": text});
        format!("{}\n", serde_json::json!({"entryId": id, "role": role, "blocks": [block]}))
    };
    let filler = |from: usize| -> String {
        (from..from + 30)
            .map(|i| line(&format!("f{i}"), "assistant", "We checked the ledger\u{3000}again."))
            .collect()
    };
    let mut records = line("ask-a", "user", "Fix the invoice export for the Zürich office, 東京 too");
    records += &line("fact-a", "assistant", "The billing ticket for Kestrel is TKT-7Q2ZK9.");
    records += &filler(0);
    records += &line("ask-b", "user", "Now the upload retry 🦀 and its cafe\u{301} timeout");
    records += &line("fact-b", "assistant", "The billing ticket for Osprey is TKT-4M8XW1.");
    records += &filler(30);
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "work"], &records).ok();
    let ids = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["history", "search", "billing ticket", "--session", "work", "--json"];
        args.extend_from_slice(extra);
        let hits = json(&sandbox.annal(&args, "").ok());
        hits.as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h["entryId"].as_str())
            .map(str::to_owned)
            .collect()
    };
    // Same words, same length, same score: the newest first.
    assert_eq!(ids(&[]), ["fact-b", "fact-a"]);
    assert_eq!(ids(&["--context", "the invoice export for Zürich"]), ["fact-a", "fact-b"]);
    assert_eq!(ids(&["--context", "upload retry timeout 🦀"]), ["fact-b", "fact-a"]);
    // Blank or unshared context changes nothing; without --session it still ranks.
    assert_eq!(ids(&["--context", "\u{3000} \n"]), ["fact-b", "fact-a"]);
    assert_eq!(ids(&["--context", "ニュース 😀"]), ["fact-b", "fact-a"]);
    let run = sandbox.annal(&["history", "search", "billing ticket", "--context", "invoice Zürich"], "").ok();
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.contains("fact-a#0"), "{}", run.stdout);
    // The context is not searched for itself, and an identifier is found alone.
    let run =
        sandbox.annal(&["history", "search", "TKT-4M8XW1", "--context", "invoice Zürich", "--json"], "").ok();
    let hits = json(&run);
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    assert_eq!(hits[0]["entryId"], "fact-b");
}
