//! "What the model saw" in Chromium: its messages a page at a time, the chart and timeline with
//! their scales, and no page wider than a phone's screen.

use fantoccini::Locator;
use serde_json::json;

use crate::driver::Browser;
use crate::support::ui::Server;
use crate::support::Sandbox;
use crate::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_messages_sent_come_a_page_at_a_time_under_charts_with_scales() -> TestResult {
    let sandbox = Sandbox::new();
    let lines: Vec<String> = (0..450)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"entryId": format!("s-{i}"), "role": role, "timestamp": "2026-05-01T10:00:00Z",
                   "blocks": [{"type": "text", "text": format!("message {i}: 検索\u{3000}テキスト 🦀 e\u{301}")}]})
            .to_string()
        })
        .collect();
    sandbox.annal(&["append", "paged"], &format!("{}\n", lines.join("\n"))).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    for page in 0..3u64 {
        let path = format!("/seen?name=paged&window=1M&page={page}");
        client.goto(&format!("http://127.0.0.1:{}{path}", server.port)).await?;
        let shown = client.find_all(Locator::Css("article.message")).await?.len() as u64;
        assert_eq!(shown, 200.min(450 - page * 200), "{path}");
        let pager = client.find(Locator::Css("section.sent nav.pager span")).await?.text().await?;
        let first = page * 200;
        assert_eq!(pager, format!("messages {first}–{} of 450", first + shown - 1));
        let text = client.find(Locator::Css("article.message")).await?.text().await?;
        assert!(text.contains(&format!("message {first}: 検索")), "{text}");
        // The chart is drawn after the first page is answered; the page's script puts it in.
        client.wait().for_element(Locator::Css("figure.chart svg")).await?;
        assert!(client.find_all(Locator::Css("figure.chart[data-pending]")).await?.is_empty());
    }
    // The chart's scale: zero, the trigger and the room for the view; the requests' records below.
    let ticks = client
        .execute(
            "return [...document.querySelectorAll('figure.chart text.tick')].map(t => t.textContent);",
            vec![],
        )
        .await?;
    let ticks: Vec<String> = serde_json::from_value(ticks)?;
    assert!(ticks.contains(&"0".to_owned()) && ticks.contains(&"#448".to_owned()), "{ticks:?}");
    assert!(ticks.iter().any(|t| t.ends_with('K')), "{ticks:?}");
    let lanes = client
        .execute(
            "return [...document.querySelectorAll('figure.timeline text.tick')].map(t => t.textContent);",
            vec![],
        )
        .await?;
    assert_eq!(lanes, json!(["markers", "cut", "evidence", "tail", "#0", "#112", "#224", "#336", "#449"]));
    browser.screenshot("what-the-model-saw-paged").await?;
    browser.close().await
}
