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
mod export;
mod reading;
mod search;
mod seen;
mod sidebar;

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
        .for_element(Locator::XPath("//table[@class='sessions']//small[text()='arrived-live']"))
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
    // A bar of tokens sent for each user request, up to 40 (the chart comes after the page).
    browser.client.wait().for_element(Locator::Css("figure.chart rect.bar")).await?;
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

/// Accepts one connection on a port of 127.0.0.1, as any local program can, and hands back the
/// `Cookie` header the browser sent it.
fn cookie_catcher() -> Result<(u16, std::sync::mpsc::Receiver<String>), Box<dyn std::error::Error>> {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let (send, caught) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else { return };
        let mut reader = BufReader::new(stream);
        let mut cookie = String::new();
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("cookie") {
                    cookie = value.trim().to_owned();
                }
            }
            line.clear();
        }
        let _ = reader
            .get_mut()
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        let _ = send.send(cookie);
    });
    Ok((port, caught))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_keep_their_cookies_and_another_port_gets_nothing_that_opens_them() -> TestResult {
    let sandboxes = [Sandbox::new(), Sandbox::new()];
    for (sandbox, name) in sandboxes.iter().zip(["first-store", "second-store"]) {
        sandbox.annal(&["append", name], &format!("{}\n", line("r1", "user", "hello 日本語 🦀"))).ok();
    }
    let servers = [Server::start(&sandboxes[0]), Server::start(&sandboxes[1])];
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    // Both opened in one browser, then each read again: neither overwrote the other's cookie.
    for server in &servers {
        client.goto(&server.url()).await?;
    }
    for (server, name) in servers.iter().zip(["first-store", "second-store"]) {
        client.goto(&format!("http://127.0.0.1:{}/", server.port)).await?;
        let listed = client.find(Locator::Css("table.sessions small.name")).await?.text().await?;
        assert_eq!(listed, name, "port {}", server.port);
    }
    let cookies = client.get_all_cookies().await?;
    let mut names: Vec<String> = cookies.iter().map(|c| c.name().to_owned()).collect();
    names.sort();
    let mut expected: Vec<String> = servers.iter().map(|s| format!("annal_ui_{}", s.port)).collect();
    expected.sort();
    assert_eq!(names, expected);
    for cookie in &cookies {
        assert_eq!(cookie.http_only(), Some(true), "{cookie}");
        assert_eq!(format!("{:?}", cookie.same_site()), "Some(Strict)", "{cookie}");
        assert!(cookie.expires().is_some(), "a lifetime: {cookie}");
        assert!(servers.iter().all(|s| !cookie.value().contains(&s.token)), "the token itself: {cookie}");
    }
    // A plain server on another port gets the cookies, as browsers send them to every port...
    let (port, caught) = cookie_catcher()?;
    client.goto(&format!("http://127.0.0.1:{port}/")).await?;
    let header = caught.recv_timeout(std::time::Duration::from_secs(30))?;
    let (first, second) = (&servers[0], &servers[1]);
    let taken = header
        .split("; ")
        .find_map(|pair| pair.strip_prefix(&format!("annal_ui_{}=", first.port)))
        .ok_or_else(|| format!("no cookie of the first server in {header:?}"))?
        .to_owned();
    // ...and the first's cookie opens nothing on the second, under either name.
    let host = format!("127.0.0.1:{}", second.port);
    for name in [first.port, second.port] {
        let cookie = format!("annal_ui_{name}={taken}");
        assert_eq!(
            second.request("GET", "/", &[("Host", &host), ("Cookie", &cookie)]).status,
            403,
            "{cookie}"
        );
    }
    browser.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn format_characters_are_shown_not_obeyed() -> TestResult {
    let sandbox = Sandbox::new();
    let text =
        "open invoice\u{202e}gpj.exe now, \u{2067}isolated\u{2069} pay\u{200b}pal smuggled\u{e0068}\u{e0069}";
    sandbox.annal(&["append", "bidi\u{202e}txt.exe"], &format!("{}\n", line("b1", "user", text))).ok();
    let server = Server::start(&sandbox);
    let browser = Browser::start(true).await?;
    let client = &browser.client;
    client.goto(&server.url()).await?;
    let listed = client.find(Locator::Css("table.sessions small.name")).await?.text().await?;
    assert_eq!(listed, "bidi⟨U+202E⟩txt.exe");
    let session = support::ui::path_of("/session", &[("name", "bidi\u{202e}txt.exe")]);
    client.goto(&format!("http://127.0.0.1:{}{session}", server.port)).await?;
    let shown = client.find(Locator::Id("b1")).await?.text().await?;
    assert!(shown.contains("open invoice⟨U+202E⟩gpj.exe now, ⟨U+2067⟩isolated⟨U+2069⟩"), "{shown}");
    assert!(shown.contains("pay⟨U+200B⟩pal smuggled⟨U+E0068⟩⟨U+E0069⟩"), "{shown}");
    browser.screenshot("format-characters").await?;
    // Search as you type puts the fragment in the page: the same there.
    let search = client.find(Locator::Id("q")).await?;
    search.send_keys("invoice").await?;
    let hit = client.wait().for_element(Locator::Css("li.hit p.snippet")).await?.text().await?;
    assert!(hit.contains("invoice⟨U+202E⟩gpj.exe"), "{hit}");
    // No page the browser holds has a format character left in it.
    let hidden = client
        .execute(
            "return [...document.documentElement.outerHTML].filter(c => /\\p{Cf}/u.test(c)).map(c => c.codePointAt(0).toString(16));",
            vec![],
        )
        .await?;
    assert_eq!(hidden, json!([]));
    browser.close().await
}
