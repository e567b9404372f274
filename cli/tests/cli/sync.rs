//! `annal sync` as a user runs it, over a fixture home: listing, one pass with `--only` and
//! `--json`, bad names, the service file, and `--watch` finding what an agent writes while it
//! runs (each appended record searchable from another process; the delays are printed, the
//! bound checked is only that each is found).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{run, Run, Sandbox};

const OVERRIDES: [&str; 5] =
    ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "GOOSE_PATH_ROOT", "XDG_CONFIG_HOME"];

/// The binary, with the sandbox as the home of every agent and no override from this machine.
fn command(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    for name in OVERRIDES {
        command.env_remove(name);
    }
    command.env("XDG_CONFIG_HOME", sandbox.dir().join(".config"));
    command.env("XDG_DATA_HOME", sandbox.dir().join(".local/share"));
    command
}

fn annal(sandbox: &Sandbox, args: &[&str]) -> Run {
    run(command(sandbox, args), "")
}

fn claude_line(uuid: &str, text: &str) -> String {
    let line = serde_json::json!({"type": "user", "uuid": uuid, "sessionId": "live",
        "message": {"role": "user", "content": text}});
    format!("{line}\n")
}

fn claude_file(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.dir().join(".claude/projects/-src-app/live.jsonl")
}

fn write_claude(sandbox: &Sandbox, text: &str) {
    let file = claude_file(sandbox);
    fs::create_dir_all(file.parent().expect("a folder")).expect("the project folder");
    fs::write(&file, text).expect("the transcript");
}

#[test]
fn list_shows_every_agent_and_where_it_was_looked_for() {
    let sandbox = Sandbox::new();
    write_claude(&sandbox, &claude_line("u1", "hello"));
    let listed = annal(&sandbox, &["sync", "--list", "--json"]).ok();
    let lines: Vec<serde_json::Value> =
        listed.lines().iter().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    let names: Vec<&str> = lines.iter().filter_map(|l| l["source"].as_str()).collect();
    // Every agent of the registry, in its order.
    let registry: Vec<&str> = annal::sync::Agent::ALL.iter().map(|agent| agent.name()).collect();
    assert_eq!(names, registry);
    assert_eq!(names[..3], ["claude", "codex", "opencode"]);
    assert_eq!(lines[0]["found"], true);
    assert_eq!(lines[0]["units"], 1);
    assert_eq!(lines[1]["found"], false);
    let table = annal(&sandbox, &["sync", "--list"]).ok();
    assert!(table.stdout.starts_with("SOURCE"), "{}", table.stdout);
    assert!(table.stdout.contains(".codex/sessions"), "{}", table.stdout);
    // Listing reads nothing.
    let sessions = annal(&sandbox, &["sessions", "--json"]).ok();
    assert!(!sessions.stdout.contains("live"), "{}", sessions.stdout);
}

#[test]
fn an_agent_annal_cannot_read_is_listed_with_why_and_never_read() {
    let sandbox = Sandbox::new();
    let cascade = sandbox.dir().join(".codeium/windsurf/cascade");
    fs::create_dir_all(&cascade).expect("the folder");
    for id in ["5f0c2e9a", "9ab0c1d2"] {
        fs::write(cascade.join(format!("{id}.pb")), [0x8c, 0x01, 0xff, 0x00]).expect("a conversation");
    }
    fs::write(cascade.join("notes.txt"), "not a conversation").expect("another file");
    let table = annal(&sandbox, &["sync", "--list"]).ok();
    let row = table.stdout.lines().find(|line| line.starts_with("windsurf")).expect("a windsurf row");
    assert!(
        row.contains(" 2 ") && row.contains("not readable: Cascade keeps each conversation encrypted"),
        "{row}"
    );
    // A pass says so, stores nothing and succeeds: there is nothing it could do.
    let pass = annal(&sandbox, &["sync", "--only", "windsurf"]).ok();
    assert_eq!(pass.stdout.trim(), "windsurf  2 sessions found, not readable: Cascade keeps each conversation encrypted (cascade/<id>.pb)");
    let sessions = annal(&sandbox, &["sessions", "--json"]).ok();
    assert_eq!(sessions.stdout.trim(), "[]", "{}", sessions.stdout);
}

#[test]
fn one_pass_stores_and_indexes_then_reads_nothing() {
    let sandbox = Sandbox::new();
    write_claude(
        &sandbox,
        &(claude_line("u1", "rename the 解析器 module 🦀") + &claude_line("u2", "then test")),
    );
    let first = annal(&sandbox, &["sync", "--only", "claude,codex"]).ok();
    assert_eq!(first.lines().len(), 2, "{}", first.stdout);
    assert!(
        first.stdout.contains("claude    1 source · 1 read · +2 records in 1 session"),
        "{}",
        first.stdout
    );
    assert!(first.stdout.contains("codex     not found (looked in"), "{}", first.stdout);
    let found = annal(&sandbox, &["history", "search", "解析器", "--json"]).ok();
    assert!(found.stdout.contains("\"entryId\": \"u1\""), "{}", found.stdout);
    let again = annal(&sandbox, &["sync", "--exclude", "codex", "--json"]).ok();
    let claude: serde_json::Value = serde_json::from_str(again.lines()[0]).expect("a JSON line");
    assert_eq!((claude["unitsRead"].as_u64(), claude["recordsNew"].as_u64()), (Some(0), Some(0)));
}

#[test]
fn bad_names_and_paths_are_one_line_errors() {
    let sandbox = Sandbox::new();
    let unknown = annal(&sandbox, &["sync", "--only", "claude,vim"]);
    assert_eq!(unknown.code, Some(1));
    assert!(unknown.stderr.contains("unknown agent \"vim\"; known: claude, codex"), "{}", unknown.stderr);
    let none = annal(&sandbox, &["sync", "--only", "claude", "--exclude", "claude"]);
    assert!(none.stderr.contains("leave no agent"), "{}", none.stderr);
    let path = annal(&sandbox, &["sync", "--path", "/nonexistent/projects"]);
    assert!(path.stderr.contains("--path /nonexistent/projects: not a folder"), "{}", path.stderr);
    let import = annal(&sandbox, &["import"]);
    assert_eq!(import.code, Some(1));
    assert!(import.stderr.contains("`annal sync` finds every agent's sessions itself"), "{}", import.stderr);
    assert!(!sandbox.db.exists(), "no store is made for a command that failed to start");
}

#[test]
fn a_source_that_cannot_be_read_fails_the_run_after_the_rest_is_stored() {
    let sandbox = Sandbox::new();
    write_claude(&sandbox, &claude_line("u1", "kept"));
    let other = claude_file(&sandbox).with_file_name("gemini.jsonl");
    fs::write(
        &other,
        "{\"sessionId\":\"g\",\"projectHash\":\"h\"}\n{\"id\":\"m\",\"type\":\"user\",\"content\":\"x\"}\n",
    )
    .expect("a look-alike");
    let failed = annal(&sandbox, &["sync", "--only", "claude"]);
    assert_eq!(failed.code, Some(1), "{}", failed.stderr);
    assert!(failed.stderr.contains("gemini.jsonl: not read as claude"), "{}", failed.stderr);
    assert!(
        failed.stderr.contains("could not be read (see above); everything else is stored"),
        "{}",
        failed.stderr
    );
    let shown = annal(&sandbox, &["show", "live"]).ok();
    assert!(shown.stdout.contains("kept"), "{}", shown.stdout);
}

#[test]
fn the_service_is_printed_and_written_only_when_confirmed() {
    let sandbox = Sandbox::new();
    let unit = sandbox.dir().join(".config/systemd/user/annal-sync.service");
    let printed = annal(&sandbox, &["sync", "--install-service", "--only", "claude"]);
    assert_eq!(printed.code, Some(1));
    assert!(printed.stdout.contains("ExecStart="), "{}", printed.stdout);
    assert!(printed.stdout.contains("\"sync\" \"--watch\" \"--only\" \"claude\""), "{}", printed.stdout);
    assert!(printed.stderr.contains("run again with --yes"), "{}", printed.stderr);
    assert!(!unit.exists());
    if cfg!(target_os = "linux") {
        let written = annal(&sandbox, &["sync", "--install-service", "--yes"]).ok();
        assert!(written.stdout.contains("systemctl --user enable --now annal-sync.service"));
        let text = fs::read_to_string(&unit).expect("the unit was written");
        assert!(text.contains("WantedBy=default.target"), "{text}");
    }
}

/// An OpenCode database as OpenCode keeps it (WAL), with one session.
fn opencode_db(sandbox: &Sandbox) -> rusqlite::Connection {
    let path = sandbox.dir().join(".local/share/opencode/opencode.db");
    fs::create_dir_all(path.parent().expect("a folder")).expect("the data folder");
    let db = rusqlite::Connection::open(&path).expect("the database");
    db.execute_batch("PRAGMA journal_mode = WAL;").expect("WAL");
    db.execute_batch(annal_support::agent_schemas::OPENCODE).expect("the schema");
    db.execute_batch(
        "INSERT INTO project VALUES ('p1', '/src/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');
         INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
         VALUES ('ses_live', 'p1', 'owl', '/src/app', 'live', '1.2.6', 1, 1);",
    )
    .expect("a session");
    db
}

/// What OpenCode writes for a user message: the message row, then its text part.
fn opencode_message(db: &rusqlite::Connection, n: i64, text: &str) {
    let data = format!(r#"{{"role":"user","time":{{"created":{n}}}}}"#);
    let part = serde_json::json!({"type": "text", "text": text}).to_string();
    db.execute(
        "INSERT INTO message VALUES (?1, 'ses_live', ?2, ?2, ?3)",
        rusqlite::params![format!("msg_{n}"), n, data],
    )
    .expect("a message");
    db.execute(
        "INSERT INTO part VALUES (?1, ?2, 'ses_live', ?3, ?3, ?4)",
        rusqlite::params![format!("prt_{n}"), format!("msg_{n}"), n, part],
    )
    .expect("a part");
}

/// Appends to a live Claude Code transcript and adds messages to an OpenCode database while
/// `sync --watch` runs; each record is searched for from another process until found.
#[test]
fn watch_finds_each_appended_record() {
    let sandbox = Sandbox::new();
    write_claude(&sandbox, &claude_line("u0", "start"));
    let db = opencode_db(&sandbox);
    let mut watch = Stopped(
        command(&sandbox, &["sync", "--watch", "--only", "claude,opencode", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watch starts"),
    );
    let passes = BufReader::new(watch.0.stdout.take().expect("stdout"));
    let mut passes = passes.lines();
    // The first pass has run once it printed its two lines.
    let first = passes.next().expect("a first pass").expect("a line");
    assert!(first.contains("\"recordsNew\":1"), "{first}");
    passes.next().expect("the OpenCode line").expect("a line");
    let file = claude_file(&sandbox);
    let mut delays = Vec::new();
    for n in 1..=20 {
        let token = format!("needle{n}x");
        let text = format!("find {token} here, 解析器 🦀");
        let id = if n % 2 == 0 {
            let mut handle = fs::OpenOptions::new().append(true).open(&file).expect("the transcript");
            handle.write_all(claude_line(&format!("u{n}"), &text).as_bytes()).expect("append");
            format!("u{n}")
        } else {
            opencode_message(&db, n, &text);
            format!("msg_{n}")
        };
        let started = Instant::now();
        loop {
            let found = annal(&sandbox, &["history", "search", &token, "--json"]);
            if found.code == Some(0) && found.stdout.contains(&format!("\"entryId\": \"{id}")) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "{id} not found: {}", found.stdout);
            std::thread::sleep(Duration::from_millis(20));
        }
        delays.push(started.elapsed());
    }
    drop(watch);
    delays.sort();
    println!(
        "watch: {} appends, median {:?}, max {:?}",
        delays.len(),
        delays[delays.len() / 2],
        delays[delays.len() - 1]
    );
}

/// A child process stopped when the test ends, however it ends: a watch left running would
/// outlive the test.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
