//! The real-corpus set: every session of the transcript folder named by `ANNAL_CORPUS`,
//! imported as the CLI imports it, with facts extracted automatically from its own early
//! records (exact tokens that occur once in the whole session), and the sources each file came
//! from, as the folder's SOURCES.md names them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use annal_engine::{Block, Record, Role};
use anyhow::{anyhow, Context as _};

use super::facts::{Decoy, Fact, FactClass};
use super::session::{block_text, Session, Turn};
use super::{parallel, run_session, Contender, ExamConfig, SessionRun};
use crate::corpus::{parse_file, Corpus};

/// The variable naming the corpus folder.
pub const CORPUS_VAR: &str = "ANNAL_CORPUS";
/// Sessions with fewer records are left out: they never reach a trigger.
const RECORDS_MIN: usize = 20;
/// Facts are taken from this leading share of a session's records.
const EARLY_SHARE: usize = 3;
/// At most this many facts per class and session.
const FACTS_MAX: [usize; 3] = [20, 80, 20];

/// Where a corpus file came from (a row of SOURCES.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The file's name in the folder.
    pub file: String,
    /// Its format.
    pub format: String,
    /// The source repository.
    pub repo: String,
    /// The commit it was copied at.
    pub commit: String,
    /// Its license.
    pub license: String,
}

/// The corpus set's results.
#[derive(Debug)]
pub struct CorpusRun {
    /// Per session and window, every contender.
    pub sessions: Vec<SessionRun>,
    /// The files that gave sessions, with their sources.
    pub sources: Vec<Source>,
}

/// The corpus folder, from `ANNAL_CORPUS`.
///
/// # Errors
/// A one-line message naming the variable when it is not set or names no folder.
pub fn folder() -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os(CORPUS_VAR).map(PathBuf::from).ok_or_else(|| {
        anyhow!(
            "{CORPUS_VAR} is not set: set it to the real-corpus folder (the one holding SOURCES.md), \
             or pass --synthetic-only for a quick run without the corpus section"
        )
    })?;
    anyhow::ensure!(dir.is_dir(), "{CORPUS_VAR}={} is not a folder", dir.display());
    Ok(dir)
}

/// The rows of `dir/SOURCES.md` by file name (an empty map without one).
fn sources(dir: &Path) -> BTreeMap<String, Source> {
    let text = std::fs::read_to_string(dir.join("SOURCES.md")).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(|c| c.trim().trim_matches('`')).collect();
        if cells.len() < 8 {
            continue;
        }
        let file = cells[1].rsplit('/').next().unwrap_or(cells[1]).to_owned();
        let source = Source {
            file: file.clone(),
            format: cells[2].to_owned(),
            repo: cells[3].to_owned(),
            commit: cells[5].to_owned(),
            license: cells[6].to_owned(),
        };
        out.insert(file, source);
    }
    out
}

/// Runs every corpus session long enough to compact at the corpus windows.
///
/// # Errors
/// If the folder cannot be read, or no session of it is long enough to run: an empty section
/// would read as a result.
pub fn run(config: &ExamConfig, dir: &Path) -> anyhow::Result<CorpusRun> {
    let corpus = Corpus::find(dir)?;
    let rows = sources(dir);
    let mut sessions = Vec::new();
    let mut used = Vec::new();
    for path in &corpus.files {
        let parsed = parse_file(path)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for (i, parsed) in parsed.sessions.into_iter().enumerate() {
            if parsed.records.len() < RECORDS_MIN {
                continue;
            }
            let label = if i == 0 { short(&name) } else { format!("{} #{}", short(&name), i + 1) };
            if let Some(session) = from_records(label, parsed.records) {
                sessions.push(session);
                if !used.contains(&name) {
                    used.push(name.clone());
                }
            }
        }
    }
    anyhow::ensure!(
        !sessions.is_empty(),
        "no session of at least {RECORDS_MIN} records with facts in the corpus folder {}",
        dir.display()
    );
    let windows = &config.corpus_windows;
    let jobs: Vec<(usize, usize)> =
        (0..windows.len()).flat_map(|w| (0..sessions.len()).map(move |s| (w, s))).collect();
    let runs = parallel(&jobs, config.threads, |&(w, s)| {
        run_session(sessions[s].clone(), 0, windows[w], &Contender::ALL, config.hide_seen, config.context)
            .context("a corpus session")
    })?;
    let sources = used
        .into_iter()
        .map(|file| rows.get(&file).cloned().unwrap_or(Source { file, ..Source::default() }))
        .collect();
    Ok(CorpusRun { sessions: runs, sources })
}

/// A file name cut to 40 characters for table rows.
fn short(name: &str) -> String {
    let cut: String = name.chars().take(40).collect();
    if cut.len() < name.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Turns (a user text starts one) split into steps before every assistant record that follows
/// a record of another role; then facts and decoys.
fn from_records(label: String, records: Vec<Record>) -> Option<Session> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut previous: Option<Role> = None;
    let total = records.len();
    for record in records {
        let starts_turn =
            record.role == Role::User && record.blocks.iter().any(|b| matches!(b, Block::Text { .. }));
        let starts_step = record.role == Role::Assistant && previous.is_some_and(|r| r != Role::Assistant);
        previous = Some(record.role);
        match turns.last_mut() {
            Some(turn) if !starts_turn => {
                if starts_step {
                    turn.steps.push(Vec::new());
                }
                if let Some(step) = turn.steps.last_mut() {
                    step.push(record);
                }
            }
            _ => turns.push(Turn { steps: vec![vec![record]] }),
        }
    }
    let mut session =
        Session { label, turns, facts: Vec::new(), decoys: Vec::new(), check_user_requests: true };
    let (facts, decoys) = extract(&session, total / EARLY_SHARE);
    session.facts = facts;
    session.decoys = decoys;
    (!session.facts.is_empty()).then_some(session)
}

/// A candidate token: a path, a number of four digits or more, or an identifier of eight
/// characters or more with an underscore, a hyphen or an inner capital.
fn is_exact_token(token: &str) -> bool {
    let digits = token.chars().filter(char::is_ascii_digit).count();
    let path = token.contains('/') && token.contains('.') && token.len() >= 6;
    let number = digits >= 4 && token.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',');
    let ident = token.len() >= 8
        && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && (token.contains('_')
            || token.contains('-')
            || token.chars().skip(1).any(|c| c.is_ascii_uppercase()))
        && token.chars().any(|c| c.is_ascii_alphabetic());
    (path || number || ident) && !token.contains('\\') && token.len() <= 80
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;=|*".contains(c))
        .map(|t| t.trim_end_matches(['.', ':', '!', '?']))
        .filter(|t| !t.is_empty())
}

/// The three words before `token` in `text`: the question a later search would ask.
fn context_words(text: &str, at: usize) -> String {
    let words: Vec<&str> =
        text[..at].split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3).collect();
    words[words.len().saturating_sub(3)..].join(" ")
}

fn extract(session: &Session, early_records: usize) -> (Vec<Fact>, Vec<Decoy>) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let texts: Vec<&str> = session.records().flat_map(|r| r.blocks.iter().map(block_text)).collect();
    for text in &texts {
        for token in tokens(text) {
            *counts.entry(token).or_default() += 1;
        }
    }
    let all = texts.join("\u{0}");
    let mut candidates: [Vec<Fact>; 3] = Default::default();
    for (i, (turn, record)) in session
        .turns
        .iter()
        .enumerate()
        .flat_map(|(t, turn)| turn.steps.iter().flatten().map(move |r| (t, r)))
        .enumerate()
    {
        if i >= early_records {
            break;
        }
        for block in &record.blocks {
            let class = match (record.role, block) {
                (Role::User, Block::Text { .. }) => FactClass::User,
                (Role::Assistant, Block::Text { .. }) => FactClass::Assistant,
                (_, Block::ToolResult { .. }) => FactClass::Tool,
                _ => continue,
            };
            let text = block_text(block);
            for token in tokens(text) {
                if !is_exact_token(token)
                    || counts.get(token) != Some(&1)
                    || all.matches(token).nth(1).is_some()
                {
                    continue;
                }
                let at = token.as_ptr() as usize - text.as_ptr() as usize;
                let query = context_words(text, at);
                if query.split(' ').count() < 2 {
                    continue;
                }
                candidates[class as usize].push(Fact {
                    class,
                    value: token.to_owned(),
                    query,
                    turn,
                    entry_id: record.entry_id.clone(),
                });
            }
        }
    }
    let mut facts = Vec::new();
    for (class, found) in candidates.into_iter().enumerate() {
        // Evenly spaced, so the facts spread over the early records rather than crowd one.
        let step = found.len().div_ceil(FACTS_MAX[class]).max(1);
        facts.extend(found.into_iter().step_by(step));
    }
    facts.sort_by_key(|f| (f.turn, f.entry_id.clone(), f.value.clone()));
    let decoys = facts
        .iter()
        .map(|f| Decoy { value: altered(&f.value) })
        .filter(|d| !all.contains(&d.value))
        .collect();
    (facts, decoys)
}

/// The value with each digit moved by three and each letter by one: the same shape, another value.
fn altered(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '0'..='9' => char::from(b'0' + (c as u8 - b'0' + 3) % 10),
            'a'..='y' | 'A'..='Y' => char::from(c as u8 + 1),
            'z' => 'a',
            'Z' => 'A',
            _ => c,
        })
        .collect()
}
