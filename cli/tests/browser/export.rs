//! The HTML export in Chromium, opened from a file as whoever receives it would: the session
//! page's own folds and diffs, no markup shown as text, a phone's viewport, secrets masked on
//! request, and no script.

use fantoccini::Locator;
use serde_json::json;

use crate::driver::Browser;
use crate::support::ui::Server;
use crate::support::Sandbox;
use crate::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_export_reads_like_the_page_and_shows_no_tags_as_text() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.annal(&["append", "edits"], &crate::reading::edit_session()).ok();
    let secret = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789";
    let line = json!({"entryId": "claude:u9", "role": "user", "timestamp": "2026-05-01T10:09:00Z",
                      "blocks": [{"type": "text", "text": format!("use the key {secret} — 鍵 🔑")}]});
    sandbox.annal(&["append", "edits"], &format!("{line}\n")).ok();
    let server = Server::start(&sandbox);
    let folder = tempfile::tempdir()?;
    let mut files = Vec::new();
    for (name, path) in
        [("plain", "/export?name=edits&format=html"), ("redacted", "/export?name=edits&format=html&redact=1")]
    {
        let answer = server.get(path);
        assert_eq!(answer.status, 200, "{path}");
        let file = folder.path().join(format!("{name}.html"));
        std::fs::write(&file, &answer.body)?;
        files.push(file);
    }
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&format!("file://{}", files[0].display())).await?;
    let facts = client
        .execute(
            "const text = document.body.innerText;
             return {tags: /<\\/?(sub|details|summary|span|div)\\b/.test(text),
                     viewport: document.querySelector('meta[name=viewport]')?.content,
                     records: document.querySelectorAll('article.record').length,
                     added: Number(document.querySelector('details.call pre.diff')?.dataset.added),
                     removed: Number(document.querySelector('details.call pre.diff')?.dataset.removed),
                     folds: document.querySelectorAll('details.block').length,
                     open: document.querySelectorAll('details.block[open]').length,
                     scripts: document.scripts.length,
                     styled: getComputedStyle(document.querySelector('article.record')).borderTopStyle};",
            vec![],
        )
        .await?;
    assert_eq!(facts["tags"], json!(false), "markup shown as text: {facts}");
    assert_eq!(facts["viewport"], json!("width=device-width, initial-scale=1"));
    assert_eq!(facts["records"], json!(9));
    assert_eq!((&facts["added"], &facts["removed"]), (&json!(2), &json!(2)), "{facts}");
    // Folded as on the page: only the short edit is open.
    assert!(facts["folds"].as_u64().is_some_and(|n| n >= 3) && facts["open"] == json!(1), "{facts}");
    assert_eq!(facts["scripts"], json!(0));
    assert_eq!(facts["styled"], json!("solid"), "the stylesheet is inside the file");
    let text = client.find(Locator::Id("claude:u9")).await?.text().await?;
    assert!(text.contains(secret), "{text}");
    browser.screenshot("export").await?;
    // Redacted: the same page, the key masked.
    client.goto(&format!("file://{}", files[1].display())).await?;
    let text = client.find(Locator::Id("claude:u9")).await?.text().await?;
    assert!(
        !text.contains(secret) && text.contains("[redacted:openai-key]") && text.contains("鍵 🔑"),
        "{text}"
    );
    client.set_window_size(400, 800).await?;
    let width = client.execute("return document.scrollingElement.scrollWidth;", vec![]).await?;
    assert!(width.as_u64().is_some_and(|w| w <= 400), "the export is {width} px wide at 400");
    browser.screenshot("400px-export").await?;
    browser.close().await
}
