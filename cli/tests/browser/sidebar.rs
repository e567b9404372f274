//! The sessions beside a session in Chromium: the sidebar stays in view while a long session
//! scrolls and leads to another session, folds behind one line at 400 px with nothing wider
//! than the window, and no page carries inline script or style. The list: the model each
//! session names, where its tokens come from, and sessions without timestamps placed as of when
//! they were written rather than last.

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use crate::driver::Browser;
use crate::reading::edit_session;
use crate::support::ui::Server;
use crate::support::Sandbox;
use crate::TestResult;

async fn script(client: &Client, code: &str) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(client.execute(code, vec![]).await?)
}

/// Elements a strict policy would refuse: inline scripts, style elements, style attributes.
const INLINE: &str = "return document.querySelectorAll('script:not([src]), style, [style]').length;";

/// The sidebar's box, whether it is shown, and the page's width against the window's.
const SIDEBAR: &str = "const bar = document.getElementById('sidebar'); const box = bar.getBoundingClientRect();
    return {shown: getComputedStyle(bar).display !== 'none', top: box.top, bottom: box.bottom, height: innerHeight,
            scroll: document.scrollingElement.scrollWidth, inner: innerWidth,
            current: [...bar.querySelectorAll('a[aria-current=page]')].map(a => a.textContent),
            links: bar.querySelectorAll('li a').length};";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_stay_beside_a_session_and_fold_on_a_phone() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "edits"], &edit_session()).ok();
    let long: Vec<String> = (0..300)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"entryId": format!("l-{i}"), "role": role, "timestamp": "2026-05-02T09:00:00Z",
                   "blocks": [{"type": "text", "text": format!("step {i}: 検索\u{3000}テキスト 🦀 e\u{301} {}", "長い行 ".repeat(40))}]})
            .to_string()
        })
        .collect();
    sandbox.annal(&["append", "long-read"], &format!("{}\n", long.join("\n"))).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    let base = format!("http://127.0.0.1:{}", server.port);
    client.goto(&format!("{base}/session?name=long-read")).await?;
    let bar = script(client, SIDEBAR).await?;
    assert_eq!((&bar["shown"], &bar["links"]), (&json!(true), &json!(2)), "{bar}");
    assert!(bar["current"][0].as_str().is_some_and(|t| t.starts_with("step 0: 検索")), "{bar}");
    // Kept while reading: at the end of a 200-record page the sidebar is still on the screen.
    script(client, "window.scrollTo(0, document.scrollingElement.scrollHeight); return 0;").await?;
    let bar = script(client, SIDEBAR).await?;
    let (top, bottom, height) = (
        bar["top"].as_f64().unwrap_or(-1.0),
        bar["bottom"].as_f64().unwrap_or(-1.0),
        bar["height"].as_f64().unwrap_or(0.0),
    );
    assert!(script(client, "return scrollY;").await?.as_f64().unwrap_or(0.0) > 1000.0, "the page scrolled");
    assert!((0.0..100.0).contains(&top) && bottom <= height + 1.0, "the sidebar left the screen: {bar}");
    assert_eq!(script(client, INLINE).await?, json!(0), "inline script or style on the session page");
    browser.screenshot("sidebar").await?;
    // It leads to the other session, and is there beside it, that one marked.
    client.find(Locator::Css("#sidebar a[href='/session?name=edits']")).await?.click().await?;
    client.wait().for_element(Locator::Id("claude:u1")).await?;
    let bar = script(client, SIDEBAR).await?;
    assert!(bar["current"][0].as_str().is_some_and(|t| t.contains("parse.rs")), "{bar}");
    client.goto(&format!("{base}/seen?name=edits&window=1M")).await?;
    let bar = script(client, SIDEBAR).await?;
    assert!(
        bar["shown"] == json!(true) && bar["current"][0].as_str().is_some_and(|t| t.contains("parse.rs")),
        "{bar}"
    );
    assert_eq!(script(client, INLINE).await?, json!(0), "inline script or style on what the model saw");

    // At 400 px the sidebar folds behind its label; opened, nothing is wider than the window.
    client.set_window_size(400, 800).await?;
    for (name, path) in
        [("session", "/session?name=long-read"), ("seen", "/seen?name=edits&window=1M"), ("list", "/")]
    {
        client.goto(&format!("{base}{path}")).await?;
        script(client, "document.querySelectorAll('details').forEach(d => d.open = true); return 0;").await?;
        let folded = script(client, if name == "list" { "return null;" } else { SIDEBAR }).await?;
        if name != "list" {
            assert_eq!(folded["shown"], json!(false), "{name}: the sidebar is folded at 400 px: {folded}");
            client.find(Locator::Css("label.sidebar-label")).await?.click().await?;
            let opened = script(client, SIDEBAR).await?;
            assert_eq!((&opened["shown"], &opened["links"]), (&json!(true), &json!(2)), "{name}: {opened}");
            browser.screenshot(&format!("400px-sidebar-{name}")).await?;
        }
        let widths = script(client, "return [document.scrollingElement.scrollWidth, innerWidth];").await?;
        let (scroll, inner) = (widths[0].as_u64().unwrap_or(u64::MAX), widths[1].as_u64().unwrap_or(0));
        assert!(
            inner <= 400 && scroll <= inner,
            "{name} ({path}) is {scroll} px wide in a {inner} px window"
        );
        assert_eq!(script(client, INLINE).await?, json!(0), "inline script or style on {path}");
    }
    browser.close().await
}

/// A session of one user request: `time` its timestamp (none when `None`), `meta` its metadata.
fn session(entry: &str, text: &str, time: Option<&str>, meta: Value) -> String {
    let mut line =
        json!({"entryId": entry, "role": "user", "blocks": [{"type": "text", "text": text}], "meta": meta});
    if let Some(time) = time {
        line["timestamp"] = json!(time);
    }
    format!("{line}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_names_models_and_places_sessions_without_times_as_written() -> TestResult {
    let sandbox = Sandbox::new();
    // Written in this order: dated, undated, dated later, undated again.
    let claude = json!({"message": {"model": "claude-opus-4-5", "usage": {"output_tokens": 12}}});
    sandbox
        .annal(
            &["append", "older"],
            &session("o1", "an old request 🦀", Some("2025-01-01T08:00:00Z"), claude),
        )
        .ok();
    let opencode = json!({"info": {"sessionID": "ses_x", "model": {"providerID": "openai", "modelID": "gpt-5.3-codex"}}});
    sandbox.annal(&["append", "undated-early"], &session("u1", "日本語\u{3000}の依頼", None, opencode)).ok();
    let codex = json!({"payload": {"model": "gpt-5.1-codex-max", "cwd": "/srv/app"}});
    sandbox
        .annal(
            &["append", "newer"],
            &session("codex:n:1", "a newer request", Some("2026-05-01T10:00:00Z"), codex),
        )
        .ok();
    let gemini = json!({"model": "gemini-2.5-pro"});
    sandbox.annal(&["append", "undated-late"], &session("g1", "e\u{301}crire le test", None, gemini)).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    let rows = script(
        client,
        "return [...document.querySelectorAll('table.sessions tbody tr')].map(r =>
            [r.querySelector('small.name').textContent, r.querySelector('td.model')?.textContent, r.querySelector('td.time').textContent.trim()]);",
    )
    .await?;
    // Each undated session sits beside the dated one written just before it, above it.
    assert_eq!(
        rows.as_array().map(|r| r.iter().map(|row| row[0].clone()).collect::<Vec<_>>()),
        Some(vec![json!("undated-late"), json!("newer"), json!("undated-early"), json!("older")]),
        "{rows}"
    );
    let models: Vec<&Value> =
        rows.as_array().map(|r| r.iter().map(|row| &row[1]).collect()).unwrap_or_default();
    assert_eq!(
        models,
        [
            &json!("gemini-2.5-pro"),
            &json!("gpt-5.1-codex-max"),
            &json!("gpt-5.3-codex"),
            &json!("claude-opus-4-5")
        ]
    );
    assert_eq!(rows[0][2], json!("no time recorded"), "{rows}");
    let tokens = script(client, "return document.querySelector('td[data-unit=tokens]').title;").await?;
    assert!(tokens.as_str().is_some_and(|t| t.contains("the store's estimate")), "{tokens}");
    browser.screenshot("list-models").await?;
    browser.close().await
}
