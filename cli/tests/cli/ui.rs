//! `annal ui` over HTTP: who it answers, what its pages show, that transcript text is never
//! markup, and that nothing it serves changes the store. The browser tests (`tests/browser`)
//! check the same pages in Chromium.

use serde_json::{json, Value};

use crate::support::ui::{path_of, Server};
use crate::support::Sandbox;

/// Text a transcript may hold that must reach the page as text: tags, attributes, a script
/// link, terminal colours, and multi-byte text.
const HOSTILE: &str = "<script>window.__ran = 1</script> <img src=x onerror=\"window.__ran = 2\"> \
                       [click](javascript:window.__ran=3) \u{1b}[31mred\u{1b}[0m 日本語\u{3000}テキスト 🦀 e\u{301}";

fn line(entry: &str, role: &str, text: &str) -> String {
    json!({"entryId": entry, "role": role, "timestamp": "2026-05-01T10:00:00Z",
           "blocks": [{"type": "text", "text": text}]})
    .to_string()
}

/// A store with a hostile session, a session of 450 records and a fork.
fn store() -> Sandbox {
    let sandbox = Sandbox::new();
    // The second is Markdown whose link and image must not keep their addresses.
    let links = "see [click](javascript:window.__ran=3) and ![x](https://tracker.example/x.png)";
    let hostile = [line("h1", "user", HOSTILE), line("h2", "assistant", links)].join("\n");
    sandbox.annal(&["append", "hostile"], &format!("{hostile}\n")).ok();
    let long: Vec<String> = (0..450)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            // Some 300 tokens each: 450 of them are over a 16K window.
            let filler = "the build runs again with the same flags and prints the same lines ".repeat(20);
            line(&format!("long-{i}"), role, &format!("step {i} touches src/mod_{i}/lib.rs; {filler}"))
        })
        .collect();
    sandbox.annal(&["append", "long"], &format!("{}\n", long.join("\n"))).ok();
    sandbox.annal(&["fork", "long", "--at", "10", "--name", "long-alt"], "").ok();
    sandbox
}

#[test]
fn only_the_token_holder_on_loopback_is_answered() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    let host = format!("127.0.0.1:{}", server.port);
    let cookie = server.cookie();
    // No token, a wrong token, a wrong cookie.
    assert_eq!(server.request("GET", "/", &[("Host", &host)]).status, 403);
    assert_eq!(server.request("GET", "/?token=0123", &[("Host", &host)]).status, 403);
    assert_eq!(server.request("GET", "/", &[("Host", &host), ("Cookie", "annal_ui=nope")]).status, 403);
    // The token is exchanged for a cookie and dropped from the address.
    let first = server.request("GET", &format!("/search?q=step&token={}", server.token), &[("Host", &host)]);
    assert_eq!(first.status, 303);
    assert_eq!(first.header("location"), Some("/search?q=step"));
    let set = first.header("set-cookie").expect("a cookie");
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    // Another name for this address (DNS rebinding), another site, another site's fetch.
    let with_cookie = |extra: (&str, &str), host: &str| {
        server.request("GET", "/", &[("Host", host), (cookie.0, cookie.1.as_str()), extra]).status
    };
    assert_eq!(with_cookie(("Accept", "*/*"), &format!("evil.example:{}", server.port)), 421);
    assert_eq!(with_cookie(("Accept", "*/*"), "127.0.0.1:1"), 421);
    assert_eq!(with_cookie(("Origin", "http://evil.example"), &host), 403);
    assert_eq!(with_cookie(("Sec-Fetch-Site", "cross-site"), &host), 403);
    assert_eq!(with_cookie(("Origin", &format!("http://localhost:{}", server.port)), &host), 200);
    // Every answer forbids scripts from anywhere but the server, and framing.
    let page = server.get("/");
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
}

/// Two servers at once, their cookies kept as one browser keeps them (by name: a cookie of
/// 127.0.0.1 goes to every port of it). Each keeps working with its own, the cookie is not the
/// token and has a lifetime, and one server's cookie, under any name, opens nothing on another.
#[test]
fn two_servers_keep_their_own_cookies_and_refuse_each_others() {
    let (one, two) = (store(), store());
    let servers = [Server::start(&one), Server::start(&two)];
    let mut jar = std::collections::BTreeMap::new();
    for server in &servers {
        let host = format!("127.0.0.1:{}", server.port);
        let opened = server.request("GET", &format!("/?token={}", server.token), &[("Host", &host)]);
        let set = opened.header("set-cookie").expect("a cookie").to_owned();
        assert!(set.starts_with(&format!("annal_ui_{}=", server.port)), "{set}");
        assert!(!set.contains(&server.token), "the cookie is not the token: {set}");
        for attribute in ["Max-Age=43200", "HttpOnly", "SameSite=Strict", "Path=/"] {
            assert!(set.split("; ").any(|a| a == attribute), "{attribute} missing: {set}");
        }
        let (name, value) = set.split(';').next().and_then(|p| p.split_once('=')).expect("NAME=VALUE");
        jar.insert(name.to_owned(), value.to_owned());
    }
    assert_eq!(jar.len(), 2, "one cookie each: {jar:?}");
    let sent: Vec<String> = jar.iter().map(|(name, value)| format!("{name}={value}")).collect();
    let sent = sent.join("; ");
    for server in &servers {
        let host = format!("127.0.0.1:{}", server.port);
        let page = server.request("GET", "/", &[("Host", &host), ("Cookie", &sent)]);
        assert_eq!(page.status, 200, "port {}: {}", server.port, page.body);
    }
    // The second's cookie, as it is or named as the first's, taken to the first.
    let (first, second) = (&servers[0], &servers[1]);
    let host = format!("127.0.0.1:{}", first.port);
    let taken = &jar[&format!("annal_ui_{}", second.port)];
    for cookie in [format!("annal_ui_{}={taken}", second.port), format!("annal_ui_{}={taken}", first.port)] {
        let answer = first.request("GET", "/", &[("Host", &host), ("Cookie", &cookie)]);
        assert_eq!(answer.status, 403, "{cookie}: {}", answer.body);
    }
    // The bare token as a cookie, as the server set it before.
    let bare = format!("annal_ui={}; annal_ui_{}={}", first.token, first.port, first.token);
    assert_eq!(first.request("GET", "/", &[("Host", &host), ("Cookie", &bare)]).status, 403);
}

#[test]
fn transcript_text_is_shown_as_text() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    for path in ["/session?name=hostile", "/", "/search?q=window", "/seen?name=hostile&window=16K"] {
        let page = server.get(path);
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        assert!(!page.body.contains("<script>window"), "{path} holds a live script tag");
        assert!(!page.body.contains("<img"), "{path} holds an image tag");
        assert!(!page.body.contains("href=\"javascript"), "{path} holds a script link");
        assert!(!page.body.contains("src=\"http"), "{path} loads from elsewhere");
        assert!(!page.body.contains('\u{1b}'), "{path} holds a raw terminal escape");
    }
    let session = server.get("/session?name=hostile").body;
    assert!(session.contains("&lt;script&gt;window.__ran = 1&lt;/script&gt;"), "{session}");
    assert!(session.contains("日本語\u{3000}テキスト 🦀 e\u{301}"));
    assert!(session.contains("\u{241b}[31mred"));
    assert!(session.contains("<a href=\"\">click</a>"), "{session}");
    assert!(session.contains("<a href=\"https://tracker.example/x.png\">x</a>"), "{session}");
    let export = server.get("/export?name=hostile&format=html");
    assert_eq!(export.status, 200);
    assert!(!export.body.contains("<script>window") && export.body.contains("&lt;script&gt;"));
}

/// Format characters a transcript may hold, each hiding or reordering what a reader sees.
const INVISIBLE: &str = "invoice\u{202e}gpj.exe \u{2067}isolate\u{2069} pay\u{200b}pal \u{feff}bom \
                         \u{61c}mark \u{2060}joiner smuggled\u{e0068}\u{e0069}";

/// Every page, fragment and export shows a bidi override, an isolate, a zero-width space, a byte
/// order mark and tag characters as `⟨U+XXXX⟩`; none reaches the browser to act.
#[test]
fn format_characters_are_shown_on_every_page_and_in_the_exports() {
    let sandbox = Sandbox::new();
    let call = json!({"entryId": "b2", "role": "assistant", "blocks": [
        {"type": "toolCall", "callId": "c\u{200b}1", "tool": "Read\u{202e}", "input": {"file_path": "invoice\u{202e}gpj.exe"}}]});
    let records = format!("{}\n{}\n", line("b1", "user", INVISIBLE), call);
    sandbox.annal(&["append", "bidi\u{202e}txt.exe"], &records).ok();
    let server = Server::start(&sandbox);
    let name = "bidi\u{202e}txt.exe";
    let pages = [
        "/".to_owned(),
        path_of("/session", &[("name", name)]),
        path_of("/search", &[("q", "invoice")]),
        path_of("/search", &[("fragment", "1"), ("q", "pay")]),
        path_of("/seen", &[("name", name), ("window", "16K")]),
        path_of("/export", &[("name", name), ("format", "markdown")]),
        path_of("/export", &[("name", name), ("format", "html")]),
    ];
    for path in &pages {
        let page = server.get(path);
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        let hidden: Vec<String> = page
            .body
            .chars()
            .filter(|&c| annal::text::is_format_char(c))
            .map(|c| format!("{:04X}", c as u32))
            .collect();
        assert!(hidden.is_empty(), "{path} holds format characters {hidden:?}");
        assert!(page.body.contains("bidi⟨U+202E⟩txt.exe") || path.starts_with("/search"), "{path}");
    }
    let session = server.get(&pages[1]).body;
    for shown in [
        "invoice⟨U+202E⟩gpj.exe",
        "⟨U+2067⟩isolate⟨U+2069⟩",
        "pay⟨U+200B⟩pal",
        "⟨U+FEFF⟩bom",
        "⟨U+061C⟩mark",
        "smuggled⟨U+E0068⟩⟨U+E0069⟩",
        "Read⟨U+202E⟩",
    ] {
        assert!(session.contains(shown), "{shown} missing from the session page");
    }
    let markdown = sandbox.annal(&["export", name, "--format", "markdown"], "").ok().stdout;
    assert!(
        markdown.contains("invoice⟨U+202E⟩gpj.exe") && markdown.contains("# Session `bidi⟨U+202E⟩txt.exe`"),
        "{markdown}"
    );
    assert!(!markdown.chars().any(annal::text::is_format_char), "{markdown}");
    // The JSONL export stays lossless: the characters as stored.
    let jsonl = sandbox.annal(&["export", name], "").ok().stdout;
    assert!(jsonl.contains("invoice\u{202e}gpj.exe"), "{jsonl}");
}

#[test]
fn a_long_session_opens_a_page_at_a_time_and_any_record_is_linked() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    let first = server.get("/session?name=long").body;
    assert!(first.contains("id=\"long-0\"") && first.contains("id=\"long-199\""));
    assert!(!first.contains("id=\"long-200\""));
    assert!(first.contains("records 0–199 of 450"), "{first}");
    let third = server.get("/session?name=long&at=430").body;
    assert!(
        third.contains("id=\"long-430\"")
            && third.contains("id=\"long-400\"")
            && !third.contains("id=\"long-399\"")
    );
    // An entry id leads to its page, scrolled to it.
    let found = server.get("/record?id=long-321");
    assert_eq!(found.status, 303);
    assert_eq!(found.header("location"), Some("/session?name=long&at=321#long%2D321"));
    assert_eq!(server.get("/record?id=nothing-here").status, 404);
    // The fork tree on both sides of the fork.
    for name in ["long", "long-alt"] {
        let page = server.get(&format!("/session?name={name}")).body;
        assert!(
            page.contains("class=\"tree\"") && page.contains("long-alt") && page.contains("chain verified")
        );
    }
}

#[test]
fn search_finds_identifiers_and_links_the_record() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    let results = server.get("/search?fragment=1&q=src/mod_321/lib.rs").body;
    assert!(results.contains("1 hits"), "{results}");
    assert!(results.contains("href=\"/session?name=long&amp;at=321#long%2D321\""), "{results}");
    assert!(results.contains("<mark>"), "{results}");
    let bad = server.get("/search?q=%22unclosed");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("Cannot show this"));
}

/// About 2,140 levels once overflowed a worker's stack and took the server down: now a query
/// of any depth is a 400 with the parser's message, on the page and the search-as-you-type
/// fragment alike, and the server serves the next request.
#[test]
fn a_query_nested_thousands_deep_is_a_400_and_the_server_serves_on() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    let nested = |levels: usize| format!("{}step{}", "(".repeat(levels), ")".repeat(levels));
    let nots = format!("step {}touches", "NOT ".repeat(3_000));
    for (query, says) in [
        (nested(2_140), "the query nests groups and NOTs 2140 deep, over the limit of 32"),
        (nested(10_000), "the query is 20004 bytes long, over the limit of 16384"),
        (nots, "the query nests groups and NOTs 3000 deep"),
    ] {
        for fragment in [false, true] {
            let mut pairs = vec![("q", query.as_str())];
            if fragment {
                pairs.insert(0, ("fragment", "1"));
            }
            let answer = server.get(&path_of("/search", &pairs));
            assert_eq!(answer.status, 400, "{}", answer.body);
            assert!(answer.body.contains(says), "{}", answer.body);
        }
    }
    let results = server.get(&path_of("/search", &[("fragment", "1"), ("q", &nested(32))])).body;
    assert!(results.contains("50+ hits"), "{results}");
    assert_eq!(server.get("/").status, 200);
}

#[test]
fn the_list_shows_every_session_and_what_the_model_saw_matches_project() {
    let sandbox = store();
    let server = Server::start(&sandbox);
    let list = server.get("/").body;
    for name in ["hostile", "long", "long-alt"] {
        // Titled by its first request, the name under it; by its name when it has none.
        let listed = list.contains(&format!("<small class=\"name\">{name}</small>"))
            || list.contains(&format!(">{name}</a>"));
        assert!(listed, "{name} missing");
    }
    assert!(list.contains("step 0 touches src/mod_0/lib.rs"));
    assert!(
        list.contains("hostile") && list.contains("&lt;script&gt;"),
        "the first request is shown as text"
    );
    // A window too small for the session: the page's omission rows are `project --json`'s.
    let page = server.get("/seen?name=long&window=16K").body;
    let project =
        sandbox.annal(&["project", "long", "--window", "16384", "--max-output", "2048", "--json"], "").ok();
    let view: Value = serde_json::from_str(&project.stdout).expect("project --json");
    let expected: Vec<String> = view["omitted"]
        .as_array()
        .expect("an omission list")
        .iter()
        .map(|o| {
            format!(
                "data-reason=\"{}\" data-first=\"{}\" data-last=\"{}\"",
                o["why"].as_str().unwrap_or(""),
                o["sourceOrder"],
                o.get("lastSourceOrder").unwrap_or(&o["sourceOrder"])
            )
        })
        .collect();
    let shown: Vec<String> = page
        .match_indices("data-reason=")
        .map(|(at, _)| page[at..].split('>').next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(shown, expected);
    assert!(!expected.is_empty(), "the 16K window should leave records out");
    // Tokens per request, drawn after the page (its script asks for `part=chart`): 225 user
    // requests, every sixth drawn (at most 40), the last among them.
    let chart = server.get("/seen?name=long&window=16K&part=chart").body;
    assert_eq!(chart.matches("<rect class=\"bar\"").count(), 38, "{chart}");
    assert!(chart.contains("request after #448: "), "the last request is drawn");
    // Once drawn, the page holds it.
    assert_eq!(server.get("/seen?name=long&window=16K").body.matches("<rect class=\"bar\"").count(), 38);
    assert_eq!(server.get("/seen?name=long&window=7K").status, 400);
    assert_eq!(server.get("/session?name=absent").status, 404);
}

#[test]
fn the_list_names_each_agent_and_shows_what_the_user_asked() {
    let sandbox = Sandbox::new();
    // Codex sends its environment before the request; the ids its importer derives say `codex:`.
    let context =
        "<environment_context>\n  <cwd>/srv/プロジェクト</cwd>\n  <shell>zsh</shell>\n</environment_context>";
    let codex = [line("codex:c1:1", "user", context), line("codex:c1:2", "user", "fix the 解析器 🦀 please")];
    sandbox.annal(&["append", "c1"], &format!("{}\n", codex.join("\n"))).ok();
    // Cursor wraps the request itself in tags.
    let cursor = line("cursor:k1:1", "user", "<user_query>\nwhy is e\u{301}t\u{e9} split?\n</user_query>");
    sandbox.annal(&["append", "k1"], &format!("{cursor}\n")).ok();
    // OpenCode and Gemini CLI's JSON sessions keep the ids the agents gave: their metadata tells.
    let opencode = json!({"entryId": "msg_1", "role": "user", "blocks": [{"type": "text", "text": "tidy the 設定 loader"}],
        "meta": {"info": {"sessionID": "ses_1", "path": {"cwd": "/home/dev/ノート/app"}}}});
    sandbox.annal(&["append", "ses_1"], &format!("{opencode}\n")).ok();
    let gemini = [
        json!({"entryId": "g-1", "role": "user", "blocks": [{"type": "text", "text": "explain the sandbox 🦀"}], "meta": {"type": "user"}}),
        json!({"entryId": "g-2", "role": "assistant", "blocks": [{"type": "text", "text": "It isolates."}], "meta": {"type": "gemini"}}),
    ];
    sandbox.annal(&["append", "g1"], &format!("{}\n{}\n", gemini[0], gemini[1])).ok();
    let server = Server::start(&sandbox);
    let list = server.get("/").body;
    assert!(
        list.contains("<td class=\"agent\">OpenCode</td>")
            && list.contains("<td class=\"agent\">Gemini CLI</td>"),
        "{list}"
    );
    assert!(list.contains("title=\"/home/dev/ノート/app\">ノート/app</td>"), "OpenCode's project: {list}");
    assert!(
        list.contains("<td class=\"agent\">Codex CLI</td>")
            && list.contains("<td class=\"agent\">Cursor</td>"),
        "{list}"
    );
    assert!(list.contains("fix the 解析器 🦀 please"), "{list}");
    assert!(!list.contains("/srv/プロジェクト"), "the environment is not the request: {list}");
    assert!(list.contains("why is e\u{301}t\u{e9} split?"), "{list}");
}

#[test]
fn nothing_served_changes_the_store() {
    let sandbox = store();
    let before = std::fs::read(&sandbox.db).expect("the store");
    let server = Server::start(&sandbox);
    let host = format!("127.0.0.1:{}", server.port);
    let cookie = server.cookie();
    for path in ["/", "/session?name=long", "/export?name=long&format=markdown", "/seen?name=long"] {
        assert_eq!(server.get(path).status, 200, "{path}");
        let posted =
            server.request("POST", path, &[("Host", &host), (cookie.0, &cookie.1), ("Content-Length", "0")]);
        assert_eq!(posted.status, 405, "POST {path}");
    }
    drop(server);
    assert!(std::fs::read(&sandbox.db).expect("the store") == before, "the store file changed");
}
