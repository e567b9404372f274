//! The real-corpus set (feature `corpus`): every session of the transcript folder named by
//! `ANNAL_CORPUS`, imported as the CLI imports it, with facts extracted automatically from its
//! own early records: exact tokens (paths, numbers, identifiers) that occur once in the whole
//! session, in user text, assistant text and tool output.

use std::collections::BTreeMap;
use std::path::PathBuf;

use annal_engine::{Block, Record, Role};
use anyhow::Context as _;

use super::facts::{Decoy, Fact, FactClass};
use super::session::{block_text, Session, Turn};
use super::{parallel, run_session, Contender, Exam, ExamConfig};
use crate::corpus::{parse_file, Corpus};

/// Sessions with fewer records are left out: they never reach a trigger.
const RECORDS_MIN: usize = 20;
/// Facts are taken from this leading share of a session's records.
const EARLY_SHARE: usize = 3;
/// At most this many facts per class and session.
const FACTS_MAX: [usize; 3] = [20, 80, 20];

/// Runs the corpus set into `exam.corpus` and returns the sentence that says what ran.
///
/// # Errors
/// If `ANNAL_CORPUS` is not set or names no readable corpus folder, or no session of the corpus
/// is long enough to run: the feature asks for a corpus section, and an empty one would read as
/// a result.
pub fn run_into(exam: &mut Exam, config: &ExamConfig) -> anyhow::Result<String> {
    let dir = std::env::var_os("ANNAL_CORPUS")
        .map(PathBuf::from)
        .context("the `corpus` feature runs the real corpus: set `ANNAL_CORPUS` to the corpus folder")?;
    let corpus = Corpus::find(&dir)?;
    let mut sessions = Vec::new();
    let mut files = Vec::new();
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
                files.push(name.clone());
            }
        }
    }
    files.dedup();
    anyhow::ensure!(
        !sessions.is_empty(),
        "no session of at least {RECORDS_MIN} records with facts in the corpus folder {}",
        dir.display()
    );
    let jobs: Vec<(usize, usize)> =
        (0..config.windows.len()).flat_map(|w| (0..sessions.len()).map(move |s| (w, s))).collect();
    let runs = parallel(&jobs, config.threads, |&(w, s)| {
        run_session(sessions[s].clone(), config.windows[w], &Contender::ALL).context("a corpus session")
    })?;
    exam.corpus = runs;
    Ok(format!(
        "real corpus: {} sessions of at least {RECORDS_MIN} records from {} files of the corpus folder ({}), run with \
         `ANNAL_CORPUS=<corpus folder> cargo run --release -p annal-bench --features corpus --bin retention`.",
        sessions.len(),
        files.len(),
        files.join(", ")
    ))
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
    let mut session = Session { label, turns, facts: Vec::new(), decoys: Vec::new() };
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
