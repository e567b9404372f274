//! How the binary fails: one clear line on stderr and a non-zero exit code for user errors,
//! exit code 2 for usage errors, and a quiet success when the reader closes stdout early.

use crate::support::status;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::support::Sandbox;

fn user(text: &str, id: &str) -> String {
    let record = serde_json::json!({
        "entryId": id, "role": "user", "blocks": [{"type": "text", "text": text}],
    });
    format!("{record}\n")
}

/// Asserts a failure with exit status `status` (its kind's), nothing on stdout, one line on
/// stderr; returns that line.
fn one_line_error(run: &crate::support::Run, status: i32) -> &str {
    assert_eq!(run.code, Some(status), "stdout: {} stderr: {}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{:?}", run.stderr);
    assert!(run.stderr.starts_with("annal: "), "{:?}", run.stderr);
    run.stderr.trim_end()
}

#[test]
fn stale_expect_is_a_conflict() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &format!("{}{}", user("a", "1"), user("b", "2"))).ok();
    let run = sandbox.annal(&["append", "s", "--expect", "1"], &user("c", "3"));
    let line = one_line_error(&run, status::CONFLICT);
    assert!(
        line.contains("conflict") && line.contains("--expect 1") && line.contains("has 2 records"),
        "{line}"
    );
    assert!(run.stdout.is_empty());
    let shown = sandbox.annal(&["show", "s", "--json"], "").ok();
    assert_eq!(shown.lines().len(), 2, "nothing was appended");
}

#[test]
fn malformed_line_names_stdin_and_line() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "other"], &user("z", "0")).ok();
    let input = format!(
        "{}\n{}{{\"role\": \"user\", \"blocks\": [{{\"type\": \"text\"}}]}}\n",
        user("a", "1"),
        user("b", "2")
    );
    let run = sandbox.annal(&["append", "s"], &input);
    let line = one_line_error(&run, status::BAD_INPUT);
    assert!(line.starts_with("annal: stdin:4: "), "{line}");
    assert!(line.contains("\"text\""), "{line}");
    let broken = sandbox.annal(&["append", "s"], "{\"role\": \"user\"\n");
    assert!(
        one_line_error(&broken, status::BAD_INPUT).starts_with("annal: stdin:1: not JSON"),
        "{}",
        broken.stderr
    );
    // Nothing was appended: the session does not exist.
    let shown = sandbox.annal(&["show", "s"], "");
    assert!(one_line_error(&shown, status::NOT_FOUND).contains("no session named \"s\""), "{}", shown.stderr);
}

#[test]
fn claimed_source_order_and_hash_are_checked() {
    let sandbox = Sandbox::new();
    let line = "{\"entryId\": \"x\", \"role\": \"user\", \"sourceOrder\": 3}\n";
    let run = sandbox.annal(&["append", "s"], line);
    let message = one_line_error(&run, status::BAD_INPUT);
    assert!(message.contains("stdin:1: sourceOrder 3 does not match 0"), "{message}");
    assert!(message.contains("nothing was appended"), "{message}");

    // A wrong hash on the second line refuses the whole batch, checked where it is written.
    let wrong = format!("{{\"entryId\": \"y\", \"role\": \"user\", \"hash\": \"{}\"}}\n", "ab".repeat(32));
    let run = sandbox.annal(&["append", "s"], &format!("{}{wrong}", user("first", "w")));
    let message = one_line_error(&run, status::BAD_INPUT);
    assert!(message.contains("stdin:2: hash abab"), "{message}");
    assert!(message.ends_with("nothing was appended"), "{message}");
    let shown = sandbox.annal(&["show", "s"], "");
    assert!(one_line_error(&shown, status::NOT_FOUND).contains("no session named \"s\""), "{}", shown.stderr);

    // The hash the store gives a line, claimed back, is accepted.
    sandbox.annal(&["append", "s"], &user("first", "w")).ok();
    let shown = sandbox.annal(&["show", "s", "--json"], "").ok();
    let stored: serde_json::Value = serde_json::from_str(shown.stdout.trim()).expect("one record");
    assert!(stored["hash"].is_string() && stored["sourceOrder"] == 0, "{stored}");
    assert_eq!(sandbox.annal(&["append", "s"], &format!("{stored}\n")).ok().lines(), ["0"]);
}

#[test]
fn same_entry_id_twice_in_a_batch() {
    let sandbox = Sandbox::new();
    let same = format!("{}{}", user("a", "d"), user("a", "d"));
    assert_eq!(sandbox.annal(&["append", "s"], &same).ok().lines(), ["0", "0"]);
    let different = format!("{}{}", user("b", "e"), user("c", "e"));
    let run = sandbox.annal(&["append", "s"], &different);
    let line = one_line_error(&run, status::BAD_INPUT);
    assert!(
        line.contains("stdin:2: entry \"e\" appears again with different content (first on line 1)"),
        "{line}"
    );
}

#[test]
fn unknown_session_is_one_line() {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "s"], &user("a", "1")).ok();
    let db = sandbox.db.display().to_string();
    for args in [&["show", "nope"][..], &["fork", "nope", "--at", "0"], &["verify", "nope"]] {
        let run = sandbox.annal(args, "");
        let line = one_line_error(&run, status::NOT_FOUND);
        assert!(line.contains("no session named \"nope\"") && line.contains(&db), "{line}");
    }
    let run = sandbox.annal(&["fork", "s", "--at", "5"], "");
    assert!(one_line_error(&run, status::BAD_INPUT).contains("it has 1 records"), "{}", run.stderr);
}

#[test]
fn reading_a_missing_store_does_not_create_it() {
    let sandbox = Sandbox::new();
    let run = sandbox.annal(&["sessions"], "");
    assert!(one_line_error(&run, status::NOT_FOUND).contains("no store at"), "{}", run.stderr);
    assert!(!sandbox.db.exists());
}

#[test]
fn usage_errors_exit_with_2() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.annal(&["show"], "").code, Some(2));
    assert_eq!(sandbox.annal(&["fork", "s"], "").code, Some(2));
    assert_eq!(sandbox.annal(&["append", "s", "--expect", "minus one"], "").code, Some(2));
}

#[test]
fn closed_stdout_is_not_an_error() {
    let sandbox = Sandbox::new();
    // Enough output to fill a pipe buffer many times over.
    let input: String = (0..400).map(|n| user(&"x".repeat(2000), &format!("e{n}"))).collect();
    sandbox.annal(&["append", "s"], &input).ok();
    for format in [&["show", "s"][..], &["show", "s", "--json"]] {
        let mut child = sandbox
            .command(format)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("annal starts");
        let mut first = String::new();
        let stdout = child.stdout.take().expect("a stdout pipe");
        BufReader::new(stdout).read_line(&mut first).expect("one line");
        assert!(!first.is_empty());
        // The reader is dropped here, closing the pipe while annal still has output to write.
        let output = child.wait_with_output().expect("annal exits");
        assert!(output.status.success(), "{:?}: {}", output.status, String::from_utf8_lossy(&output.stderr));
        assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    }
}
