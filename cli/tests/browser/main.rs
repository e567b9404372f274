//! `annal ui` in a real browser: headless Chromium driven over WebDriver (chromedriver), against
//! `annal ui` processes on stores the tests fill. Needs Debian's `chromium` and
//! `chromium-driver` (CI installs both; `ANNAL_CHROMIUM` and `ANNAL_CHROMEDRIVER` name other
//! binaries) and the corpus (`ANNAL_CORPUS`). Screenshots of each page at 1280×800 are written
//! to `target/ui-screenshots/`.
//!
//! `cargo test -p annal-cli --test browser`

#[path = "../support/mod.rs"]
mod support;

mod driver;

use std::path::PathBuf;

use fantoccini::Locator;
use serde_json::{json, Value};

use driver::Browser;
use support::ui::Server;
use support::Sandbox;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Text that runs script if a page ever treats it as markup.
const HOSTILE: &str = "<script>window.__ran = 1</script> <img src=x onerror=\"window.__ran = 2\"> \
                       <a href=\"javascript:window.__ran=3\" id=\"evil\">click</a> [md](javascript:window.__ran=4) \
                       \u{1b}[31mred\u{1b}[0m 日本語\u{3000}テキスト 🦀 e\u{301}";

fn line(entry: &str, role: &str, text: &str) -> String {
    json!({"entryId": entry, "role": role, "timestamp": "2026-05-01T10:00:00Z",
           "blocks": [{"type": "text", "text": text}]})
    .to_string()
}

fn corpus() -> PathBuf {
    let corpus =
        PathBuf::from(std::env::var_os("ANNAL_CORPUS").expect("ANNAL_CORPUS names the corpus folder"));
    assert!(corpus.is_dir(), "ANNAL_CORPUS={} is not a folder", corpus.display());
    corpus
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_leads_to_a_search_hit_and_its_record() -> TestResult {
    let sandbox = Sandbox::new();
    let claude = corpus().join("claude-code-jsonl");
    sandbox.command(&["import"]).arg(&claude).status()?.success().then_some(()).ok_or("import failed")?;
    let marker = "ui_probe_identifier_7731";
    sandbox
        .annal(
            &["append", "probe"],
            &format!("{}\n", line("probe-1", "user", &format!("look at {marker}.rs please"))),
        )
        .ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    let rows = client.find_all(Locator::Css("table.sessions tbody tr")).await?;
    let listed = sandbox.annal(&["sessions", "--json"], "").ok();
    let sessions: Vec<Value> = serde_json::from_str(&listed.stdout)?;
    assert_eq!(rows.len(), sessions.len(), "every session is listed");
    browser.screenshot("sessions").await?;
    // A session stored by another process while the list is open appears in it by itself.
    sandbox
        .annal(&["append", "arrived-live"], &format!("{}\n", line("live-1", "user", "a new session")))
        .ok();
    client
        .wait()
        .at_most(std::time::Duration::from_secs(20))
        .for_element(Locator::XPath("//table[@class='sessions']//a[text()='arrived-live']"))
        .await?;
    // Search as you type: the results replace themselves without a page load.
    let search = client.find(Locator::Id("q")).await?;
    search.send_keys(&format!("{marker}.rs")).await?;
    let hit = client.wait().for_element(Locator::Css("li.hit a")).await?;
    browser.screenshot("search").await?;
    hit.click().await?;
    let url = client.current_url().await?;
    assert!(url.path() == "/session" && url.fragment() == Some("probe%2D1"), "{url}");
    let target = client.find(Locator::Id("probe-1")).await?;
    assert!(target.text().await?.contains(marker));
    browser.screenshot("session").await?;
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_model_saw_of_a_compacted_corpus_session_matches_project() -> TestResult {
    let sandbox = Sandbox::new();
    sandbox.command(&["import"]).arg(corpus().join("claude-code-jsonl")).status()?;
    let listed = sandbox.annal(&["sessions", "--json"], "").ok();
    let sessions: Vec<Value> = serde_json::from_str(&listed.stdout)?;
    let largest = sessions.iter().max_by_key(|s| s["records"].as_u64()).ok_or("no sessions imported")?;
    let name = largest["name"].as_str().ok_or("a name")?.to_owned();
    let budget = ["--window", "16384", "--max-output", "2048"];
    sandbox.annal(&[&["compact", name.as_str(), "--force"][..], &budget].concat(), "").ok();
    let project = sandbox.annal(&[&["project", name.as_str(), "--json"][..], &budget].concat(), "").ok();
    let view: Value = serde_json::from_str(&project.stdout)?;
    let expected: Vec<(String, u64, u64)> = view["omitted"]
        .as_array()
        .ok_or("an omission list")?
        .iter()
        .map(|o| {
            (
                o["why"].as_str().unwrap_or("").to_owned(),
                o["sourceOrder"].as_u64().unwrap_or(0),
                o.get("lastSourceOrder").unwrap_or(&o["sourceOrder"]).as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(!expected.is_empty(), "a 16K view of the largest session leaves records out");
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    browser.client.goto(&server.url()).await?;
    let seen = support::ui::path_of("/seen", &[("name", &name), ("window", "16K")]);
    browser.client.goto(&format!("http://127.0.0.1:{}{seen}", server.port)).await?;
    let shown = browser
        .client
        .execute(
            "return [...document.querySelectorAll('tr[data-reason]')].map(r => [r.dataset.reason, Number(r.dataset.first), Number(r.dataset.last)]);",
            vec![],
        )
        .await?;
    let shown: Vec<(String, u64, u64)> = serde_json::from_value(shown)?;
    assert_eq!(shown, expected);
    let source = browser.client.find(Locator::Css("p.facts")).await?.text().await?;
    assert!(source.contains("compaction checkpoint"), "{source}");
    // The timeline draws each omission and the receipt of the compaction.
    let drawn =
        browser.client.find_all(Locator::Css("figure.timeline rect[class]:not(.kept):not(.tail)")).await?;
    assert_eq!(drawn.len(), expected.len());
    assert_eq!(browser.client.find_all(Locator::Css("figure.timeline line.receipt")).await?.len(), 1);
    // A bar of tokens sent for each user request, up to 40.
    let bars = browser.client.find_all(Locator::Css("figure.chart rect.bar")).await?.len();
    assert!((1..=40).contains(&bars), "{bars} bars");
    browser.screenshot("what-the-model-saw").await?;
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_thousand_record_session_pages_through() -> TestResult {
    let sandbox = Sandbox::new();
    for batch in 0..10 {
        let lines: Vec<String> = (batch * 1_000..(batch + 1) * 1_000)
            .map(|i| {
                line(
                    &format!("g-{i}"),
                    if i % 2 == 0 { "user" } else { "assistant" },
                    &format!("record {i}: 検索 🦀"),
                )
            })
            .collect();
        sandbox.annal(&["append", "big"], &format!("{}\n", lines.join("\n"))).ok();
    }
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    client.goto(&format!("http://127.0.0.1:{}/session?name=big", server.port)).await?;
    assert_eq!(client.find_all(Locator::Css("article.record")).await?.len(), 200);
    for page in 1..=3 {
        client.find(Locator::Css("nav.pager a[rel=next]")).await?.click().await?;
        let pager = client.wait().for_element(Locator::Css("nav.pager span")).await?.text().await?;
        let from = page * 200;
        assert!(pager.contains(&format!("records {from}–{} of 10,000", from + 199)), "{pager}");
        client.find(Locator::Id(&format!("g-{from}"))).await?;
    }
    client.find(Locator::Css("nav.pager a:last-of-type")).await?.click().await?;
    client.wait().for_element(Locator::Id("g-9999")).await?;
    browser.screenshot("long-session").await?;
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_runs_nothing_and_pages_read_without_javascript() -> TestResult {
    let sandbox = Sandbox::new();
    let lines = [line("h1", "user", HOSTILE), line("h2", "assistant", HOSTILE)].join("\n");
    sandbox.annal(&["append", "hostile"], &format!("{lines}\n")).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    for path in ["/session?name=hostile", "/search?q=window", "/seen?name=hostile&window=16K", "/"] {
        client.goto(&format!("http://127.0.0.1:{}{path}", server.port)).await?;
        let ran = client.execute("return window.__ran === undefined;", vec![]).await?;
        assert_eq!(ran, Value::Bool(true), "a script ran on {path}");
        assert!(
            client.find_all(Locator::Id("evil")).await?.is_empty(),
            "a link from the transcript became markup on {path}"
        );
    }
    client.goto(&format!("http://127.0.0.1:{}/session?name=hostile", server.port)).await?;
    let text = client.find(Locator::Id("h1")).await?.text().await?;
    assert!(text.contains("<script>window.__ran = 1</script>") && text.contains("日本語"), "{text}");
    browser.screenshot("hostile").await?;
    browser.close().await?;
    // Reading needs no script: the list, a session and what the model saw.
    let browser = Browser::start(false).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    assert_eq!(client.find_all(Locator::Css("table.sessions tbody tr")).await?.len(), 1);
    client.find(Locator::Css("table.sessions a")).await?.click().await?;
    client.wait().for_element(Locator::Id("h2")).await?;
    client.goto(&format!("http://127.0.0.1:{}/search?q=window", server.port)).await?;
    assert!(!client.find_all(Locator::Css("li.hit")).await?.is_empty());
    browser.screenshot("no-javascript-search").await?;
    browser.close().await
}
