//! Reading a session in Chromium: an edit as a line diff folded with its result, failed calls
//! marked, records without text folded, the agent's added context labelled, the outline and the
//! keys that move between requests, and every page at the width of a phone.

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use crate::driver::Browser;
use crate::support::ui::{path_of, Server};
use crate::support::Sandbox;
use crate::TestResult;

/// Sixty lines of real-world text; an edit changes two of them, thirty lines apart.
fn edited_file() -> (String, String) {
    let old: String = (0..60)
        .map(|i| format!("    let línea_{i} = \"日本語\u{3000}テキスト 🦀 e\u{301}\"; // {i}\n"))
        .collect();
    let new = old.replace("línea_10 ", "renamed_10 ").replace("línea_40 ", "renamed_40 ");
    (old, new)
}

/// A Claude Code session: a request with a reminder the agent added, an edit and its result, a
/// record with nothing in it, a failed command, and three requests in all.
pub(crate) fn edit_session() -> String {
    let (old, new) = edited_file();
    let at = |s: u32| format!("2026-05-01T10:{:02}:{:02}Z", s / 60, s % 60);
    let lines = [
        json!({"entryId": "claude:u1", "role": "user", "timestamp": at(1), "blocks": [{"type": "text",
            "text": "<system-reminder>\nCLAUDE.md: keep answers short\n</system-reminder>\nrename the 変数 in parse.rs 🦀"}]}),
        json!({"entryId": "claude:a1", "role": "assistant", "timestamp": at(2), "blocks": [
            {"type": "text", "text": "Renaming."},
            {"type": "toolCall", "callId": "c1", "tool": "Edit",
             "input": {"file_path": "src/parse.rs", "old_string": old, "new_string": new}}]}),
        json!({"entryId": "claude:t1", "role": "tool", "timestamp": at(3), "blocks": [
            {"type": "toolResult", "callId": "c1", "tool": "Edit", "isError": false,
             "output": "The file src/parse.rs has been updated."}]}),
        json!({"entryId": "claude:m1", "role": "system", "timestamp": at(4), "blocks": [{"type": "text", "text": " "}]}),
        json!({"entryId": "claude:u2", "role": "user", "timestamp": at(5), "blocks": [{"type": "text", "text": "now run the tests"}]}),
        json!({"entryId": "claude:a2", "role": "assistant", "timestamp": at(6), "blocks": [
            {"type": "toolCall", "callId": "c2", "tool": "Bash", "input": {"command": "cargo test"}}]}),
        json!({"entryId": "claude:t2", "role": "tool", "timestamp": at(7), "blocks": [
            {"type": "toolResult", "callId": "c2", "tool": "Bash", "isError": true,
             "output": "error[E0425]: cannot find value `línea_10` in this scope"}]}),
        json!({"entryId": "claude:u3", "role": "user", "timestamp": at(8), "blocks": [{"type": "text", "text": "thanks — ありがとう"}]}),
    ];
    lines.iter().map(|line| format!("{line}\n")).collect()
}

async fn script(client: &Client, code: &str) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(client.execute(code, vec![]).await?)
}

/// Presses one key on the page (not in a field).
async fn press(client: &Client, key: &str) -> TestResult {
    client.find(Locator::Css("body")).await?.send_keys(key).await?;
    Ok(())
}

async fn current_turn(client: &Client) -> Result<Value, Box<dyn std::error::Error>> {
    script(client, "const t = document.querySelector('article.turn.current'); return t ? t.id : null;").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_a_line_diff_folded_with_its_result_and_keys_move_between_requests() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "edits"], &edit_session()).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    client.goto(&format!("http://127.0.0.1:{}/session?name=edits", server.port)).await?;

    // The edit: two lines removed, two added, three lines of context around each, in two hunks.
    let diff = script(
        client,
        "const d = document.querySelector('#claude\\\\:a1 details.call'); d.open = true; const pre = d.querySelector('pre.diff');
         const count = (c) => pre.querySelectorAll('span.' + c).length;
         return {added: count('add'), removed: count('del'), context: count('ctx'), hunks: count('hunk'),
                 lineHeight: pre.getBoundingClientRect().height / pre.querySelectorAll('span').length,
                 fontSize: parseFloat(getComputedStyle(pre).fontSize), label: d.querySelector('summary').textContent,
                 result: d.querySelector('div.outcome').textContent};",
    )
    .await?;
    assert_eq!(
        (&diff["added"], &diff["removed"], &diff["context"], &diff["hunks"]),
        (&json!(2), &json!(2), &json!(12), &json!(2)),
        "{diff}"
    );
    // Single-spaced: each line of the diff is one line of text high, no blank line between.
    let (height, font) =
        (diff["lineHeight"].as_f64().unwrap_or(0.0), diff["fontSize"].as_f64().unwrap_or(0.0));
    assert!(height > 0.0 && height <= font * 1.6, "{diff}");
    assert!(
        diff["label"].as_str().is_some_and(|l| l.contains("Edit src/parse.rs") && l.contains("+2 \u{2212}2")),
        "{diff}"
    );
    assert!(
        diff["result"].as_str().is_some_and(|r| r.contains("has been updated")),
        "the result is in the call's fold: {diff}"
    );
    browser.screenshot("diff").await?;

    // The failed command: its call's fold is marked and holds the error.
    let failed = script(
        client,
        "const d = document.querySelector('#claude\\\\:a2 details.call.failed');
         return d ? [d.querySelector('summary').textContent, d.querySelector('div.outcome').textContent] : null;",
    )
    .await?;
    assert!(failed[0].as_str().is_some_and(|s| s.contains("failed")), "{failed}");
    assert!(failed[1].as_str().is_some_and(|s| s.contains("cannot find value `línea_10`")), "{failed}");

    // Records with nothing of their own fold into one line per run: the edit's result with the
    // blank record after it, and the failed result.
    let quiet = script(client, "return [...document.querySelectorAll('details.quiet')].map(d => [...d.querySelectorAll('article')].map(a => a.id));").await?;
    assert_eq!(quiet, json!([["claude:t1", "claude:m1"], ["claude:t2"]]));
    // The reminder the agent added is folded and labelled; the request reads as the user wrote it.
    let first = client.find(Locator::Id("claude:u1")).await?;
    let context = first.find(Locator::Css("details.context > summary")).await?.text().await?;
    assert!(context.contains("context the agent added"), "{context}");
    assert!(first
        .find(Locator::Css("div.md"))
        .await?
        .text()
        .await?
        .contains("rename the 変数 in parse.rs 🦀"));
    let outline = script(
        client,
        "return [...document.querySelectorAll('details.outline li')].map(l => l.textContent);",
    )
    .await?;
    assert_eq!(
        outline,
        json!(["#0 rename the 変数 in parse.rs 🦀", "#4 now run the tests", "#7 thanks — ありがとう"])
    );

    // Keys: j and k move between requests, e opens every fold of the current one.
    press(client, "j").await?;
    assert_eq!(current_turn(client).await?, json!("claude:u1"));
    press(client, "j").await?;
    press(client, "j").await?;
    assert_eq!(current_turn(client).await?, json!("claude:u3"));
    press(client, "k").await?;
    press(client, "k").await?;
    assert_eq!(current_turn(client).await?, json!("claude:u1"));
    let closed = "return [...document.querySelectorAll('#claude\\\\:a2 details')].every(d => !d.open);";
    press(client, "j").await?;
    press(client, "e").await?;
    let opened = script(
        client,
        "return [...document.querySelectorAll('#claude\\\\:a2 details, details.quiet')].map(d => d.open);",
    )
    .await?;
    // In page order: the first request's quiet run stays closed, the second's call and run open.
    assert_eq!(opened, json!([false, true, true]));
    press(client, "e").await?;
    assert_eq!(script(client, closed).await?, json!(true));
    press(client, "/").await?;
    let focused = script(client, "return document.activeElement.id;").await?;
    assert_eq!(focused, json!("q"));
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_400_pixels_nothing_scrolls_sideways() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "edits"], &edit_session()).ok();
    let long_name = format!("session-{}", "長い名前🦀".repeat(30));
    let request = format!("a request with one very long word: {}", "x".repeat(500));
    let line = json!({"entryId": "w1", "role": "user", "timestamp": "2026-05-01T10:00:00Z",
                      "blocks": [{"type": "text", "text": request}], "meta": {"cwd": format!("/home/dev/{}", "深い/".repeat(40))}});
    sandbox.annal(&["append", &long_name], &format!("{line}\n")).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    client.set_window_size(400, 800).await?;
    let pages = [
        ("list", "/".to_owned()),
        ("session", "/session?name=edits".to_owned()),
        ("long-name", path_of("/session", &[("name", &long_name)])),
        ("seen", "/seen?name=edits&window=16K".to_owned()),
        ("search", "/search?q=tests".to_owned()),
    ];
    for (name, path) in pages {
        client.goto(&format!("http://127.0.0.1:{}{path}", server.port)).await?;
        script(client, "document.querySelectorAll('details').forEach(d => d.open = true);").await?;
        let widths =
            script(client, "return [document.scrollingElement.scrollWidth, window.innerWidth];").await?;
        let (scroll, inner) = (widths[0].as_u64().unwrap_or(u64::MAX), widths[1].as_u64().unwrap_or(0));
        assert!(
            inner <= 400 && scroll <= inner,
            "{name} ({path}) is {scroll} px wide in a {inner} px window"
        );
        browser.screenshot(&format!("400px-{name}")).await?;
    }
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_page_of_a_session_takes_records_appended_while_it_is_open() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "edits"], &edit_session()).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    client.goto(&format!("http://127.0.0.1:{}/session?name=edits", server.port)).await?;
    let line = json!({"entryId": "claude:u4", "role": "user", "timestamp": "2026-05-01T10:10:00Z",
                      "blocks": [{"type": "text", "text": "one more thing — もう一つ 🦀"}]});
    sandbox.annal(&["append", "edits"], &format!("{line}\n")).ok();
    let arrived = client
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::Id("claude:u4"))
        .await?
        .text()
        .await?;
    assert!(arrived.contains("one more thing — もう一つ 🦀"), "{arrived}");
    // Once: the records before it are not added again.
    assert_eq!(client.find_all(Locator::Css("article.record")).await?.len(), 9);
    browser.close().await
}
