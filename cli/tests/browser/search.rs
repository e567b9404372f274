//! Search as you type in Chromium: a half-typed word finds the words it starts, the results stay
//! while a query is being typed and the parser's message says what is wrong with it, hits are
//! grouped by session under its title, and a tool call's hit reads as text, not JSON.

use fantoccini::Locator;
use serde_json::{json, Value};

use crate::driver::Browser;
use crate::support::ui::Server;
use crate::support::Sandbox;
use crate::TestResult;

fn records(session: &str, request: &str, heading: &str) -> String {
    let lines = [
        json!({"entryId": format!("{session}-u"), "role": "user", "timestamp": "2026-05-01T10:00:00Z",
               "blocks": [{"type": "text", "text": request}]}),
        json!({"entryId": format!("{session}-a"), "role": "assistant", "timestamp": "2026-05-01T10:00:05Z",
               "blocks": [{"type": "toolCall", "callId": "c1", "tool": "Write", "input": {"file_path": "notes.md",
                 "content": format!("# {heading}\nfirst line\n\"quoted\" 日本語\u{3000}テキスト 🦀")}}]}),
    ];
    lines.iter().map(|line| format!("{line}\n")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_typed_word_finds_and_hits_are_grouped_by_session_as_text() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox
        .annal(
            &["append", "vault-a"],
            &records("vault-a", "set up Obsidian sync for my vault 🦀", "Obsidian sync"),
        )
        .ok();
    sandbox
        .annal(
            &["append", "vault-b"],
            &records("vault-b", "obsidian plugins, e\u{301}te\u{301} edition", "Obsidian plugins"),
        )
        .ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    let search = client.find(Locator::Id("q")).await?;
    search.send_keys("obsid").await?;
    client.wait().for_element(Locator::Css("section.hit-group")).await?;
    let groups = client
        .execute(
            "return [...document.querySelectorAll('section.hit-group')].map(g =>
               [g.querySelector('h2 a').textContent, g.querySelectorAll('li.hit').length]).sort();",
            vec![],
        )
        .await?;
    assert_eq!(
        groups,
        json!([
            ["obsidian plugins, e\u{301}te\u{301} edition", 2],
            ["set up Obsidian sync for my vault 🦀", 2]
        ])
    );
    let marked = client
        .execute(
            "return [...document.querySelectorAll('li.hit mark')].map(m => m.textContent.toLowerCase());",
            vec![],
        )
        .await?;
    assert!(
        marked.as_array().is_some_and(|m| !m.is_empty() && m.iter().all(|w| w == "obsidian")),
        "{marked}"
    );
    // The tool call's hit shows its text: line breaks and quotes, no JSON escapes.
    let call = client.execute("return [...document.querySelectorAll('li.hit')].filter(h => h.querySelector('.tool')).map(h => h.querySelector('p.snippet').textContent);", vec![]).await?;
    let call: Vec<String> = serde_json::from_value(call)?;
    assert!(
        !call.is_empty()
            && call.iter().all(|s| !s.contains("\\n") && !s.contains("\\\"") && !s.contains("{\"")),
        "{call:?}"
    );
    assert!(call.iter().any(|s| s.contains("\"quoted\"")), "{call:?}");
    browser.screenshot("search").await?;

    // Two words, the second half typed: only the session with both.
    search.send_keys("ian sy").await?;
    client.wait().for_element(Locator::XPath("//p[@class='count'][starts-with(text(), '2 hits')]")).await?;
    let sessions: Value = client.execute("return [...document.querySelectorAll('section.hit-group h2 small')].map(s => s.textContent.split(' ')[0]);", vec![]).await?;
    assert_eq!(sessions, json!(["vault-a"]));
    // An open quote: the parser's message, and the results of the query before it stay.
    search.send_keys(" \"unclosed").await?;
    let problem =
        client.wait().for_element(Locator::Css("#search-problem:not(:empty)")).await?.text().await?;
    assert!(problem.contains("a double quote is not closed"), "{problem}");
    assert_eq!(client.find_all(Locator::Css("li.hit")).await?.len(), 2, "the last results stay");
    browser.close().await
}
