//! `ui --screenshots DIR`: each page of `annal ui` at 1280 and 400 px wide (the session list, a
//! long session, an edit's diff, search, what the model saw, the HTML export), as headless
//! Chromium draws it. Each shot is one `chromium --headless --screenshot` run with a profile of
//! its own, opening the page with the server's token as a user's browser would.

use std::path::Path;
use std::process::{Command, Stdio};

use annal::{Block, Record, Role};
use anyhow::{ensure, Context as _};

/// The session whose edit the diff shot shows.
pub(crate) const EDIT_SESSION: &str = "an-edit";

/// Widths of the shots: a laptop's and a phone's.
const WIDTHS: [(u32, u32); 2] = [(1280, 800), (400, 860)];

/// A request, an edit of two lines in a sixty-line file, its result and a failed test run.
pub(crate) fn edit_records() -> Vec<Record> {
    let old: String =
        (0..60).map(|i| format!("    let value_{i} = parse(line_{i})?; // 検索 🦀\n")).collect();
    let new = old.replace("value_10 ", "total_10 ").replace("value_40 ", "total_40 ");
    let input =
        serde_json::json!({"file_path": "src/parse.rs", "old_string": old, "new_string": new}).to_string();
    let with = |id: &str, role: Role, blocks: Vec<Block>| {
        let mut record = Record::text(id, role, "");
        record.blocks = blocks;
        record.timestamp = Some("2026-12-01T09:00:00Z".to_owned());
        record
    };
    vec![
        Record::text("e-1", Role::User, "rename value_10 and value_40 to totals in src/parse.rs"),
        with(
            "e-2",
            Role::Assistant,
            vec![
                Block::Text { text: "Renaming both.".to_owned() },
                Block::ToolCall {
                    call_id: "c1".to_owned(),
                    tool: "Edit".to_owned(),
                    input,
                    target: "src/parse.rs".to_owned(),
                },
            ],
        ),
        with(
            "e-3",
            Role::Tool,
            vec![Block::ToolResult {
                call_id: "c1".to_owned(),
                tool: "Edit".to_owned(),
                is_error: false,
                output: "The file src/parse.rs has been updated.".to_owned(),
            }],
        ),
    ]
}

/// Writes every shot into `folder`: `NAME-WIDTH.png`.
pub(crate) fn take(
    folder: &Path,
    port: u16,
    token: &str,
    cookie: &str,
    words: &[String],
    sessions: &[&str],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let chromium = std::env::var("ANNAL_CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let page = |path: &str| {
        let joiner = if path.contains('?') { '&' } else { '?' };
        format!("http://127.0.0.1:{port}{path}{joiner}token={token}")
    };
    // The export is a download: saved, then opened from the file, as whoever receives it would.
    let export = folder.join("export.html");
    let path = format!("/export?name={}&format=html", EDIT_SESSION);
    let host = format!("127.0.0.1:{port}");
    let answer = annal_support::http::request(port, "GET", &path, &[("Host", &host), ("Cookie", cookie)])?;
    ensure!(answer.status == 200, "{path}: {}", answer.status);
    std::fs::write(&export, answer.body)?;
    let word = words.first().map_or("the", String::as_str);
    let shots = [
        ("list", page("/")),
        ("session", page(&format!("/session?name={}", sessions.first().copied().unwrap_or("")))),
        ("diff", page(&format!("/session?name={EDIT_SESSION}"))),
        ("search", page(&format!("/search?q={word}"))),
        ("seen", page(&format!("/seen?name={}&window=1M", sessions.last().copied().unwrap_or("")))),
        ("export", format!("file://{}", std::fs::canonicalize(&export)?.display())),
    ];
    for (name, url) in &shots {
        for (width, height) in WIDTHS {
            let file = folder.join(format!("{name}-{width}.png"));
            let profile = tempfile::tempdir()?;
            let status = Command::new(&chromium)
                .args([
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--no-first-run",
                ])
                .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
                .arg(format!("--user-data-dir={}", profile.path().display()))
                .arg(format!("--window-size={width},{height}"))
                .arg(format!("--screenshot={}", file.display()))
                .arg(url)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .with_context(|| format!("cannot run {chromium} (set ANNAL_CHROMIUM)"))?;
            ensure!(
                status.success() && file.is_file(),
                "{chromium} took no screenshot of {name} at {width} px"
            );
        }
    }
    Ok(())
}
