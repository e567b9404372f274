//! aider's Markdown chat log (`.aider.chat.history.md`): one session per `# aider chat started
//! at` header, `####` lines as the user's input, `>` lines as aider's own notices, and the
//! Markdown between as the model's replies.
//!
//! How aider writes it (`aider/io.py`, the same from v0.10 to v0.86): each start appends
//! `\n# aider chat started at <YYYY-MM-DD HH:MM:SS>\n\n`; `user_input` writes a blank line, then
//! every input line as `#### <line>  `; `ai_output` writes `\n<reply>\n\n`; `tool_output`,
//! `tool_warning`, `tool_error` and `confirm_ask` write `> <message>  ` (command lines, files
//! added, token and cost reports, questions with their answers). The two trailing spaces (a
//! Markdown line break) end every input and notice line and tell a notice from a quote in a
//! reply. A `tool_output` message with line breaks (shell or git output, an edit error) has the
//! `> ` on its first line only, and ends at a line with the two spaces that a blank line or
//! another marker follows.
//!
//! Records: the header is a system record (`meta["startedAt"]`), each input a user record, each
//! notice a system record, each reply an assistant record; text is kept as written minus the
//! markers (`# `, `#### `, `> `, the two trailing spaces). A session is `<stem>@<started at>`
//! (`#2`, `#3`, … when a start time repeats); text before the first header is session `<stem>`.
//! entryIds are `aider:<session>:<line>`, the line a record starts on.
//!
//! aider only appends, and a record is made only once nothing appended can change it: a torn last
//! line waits, a reply is complete once the blank line aider ends it with follows, and a `>`
//! line whose end is not written yet holds back what follows. What waits is reported as
//! [`SkipReason::Truncated`] at its first line, and imports once complete.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::lines::{lines, note_shape};
use super::session::SessionBuilder;
use super::{ParseOptions, ParsedTranscript, SkipReason, Skipped};
use annal_engine::canonical_json;
use annal_engine::{Record, Role};

const HEADER: &str = "# aider chat started at ";
/// The Markdown line break aider ends every input and notice line with.
const BREAK: &str = "  ";

/// Whether `bytes` is an aider chat log: its first line that is not blank (after a byte order
/// mark) is a session header with a date. Reads only that far.
pub(super) fn is_aider_log(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    if start > 0 && bytes[start - 1] != b'\n' {
        return false; // indented
    }
    let Some(date) = bytes[start..].strip_prefix(HEADER.as_bytes()).and_then(|rest| rest.get(..10)) else {
        return false;
    };
    date.iter().enumerate().all(|(i, b)| if i == 4 || i == 7 { *b == b'-' } else { b.is_ascii_digit() })
}

pub(super) fn parse(bytes: &[u8], stem: &str, options: &ParseOptions) -> ParsedTranscript {
    let mut parsed = ParsedTranscript::default();
    let mut rows = Vec::new();
    let mut torn = None;
    for line in lines(bytes) {
        let skip = |reason| Skipped { line: line.number, reason };
        if line.unterminated {
            torn = Some(skip(SkipReason::Truncated));
        } else if line.bytes.len() > options.max_line_bytes {
            let limit = options.max_line_bytes;
            parsed.skipped.push(skip(SkipReason::TooLarge { bytes: line.bytes.len(), limit }));
            rows.push(Row { number: line.number, text: None });
        } else {
            let text = std::str::from_utf8(line.bytes);
            if let Err(err) = text {
                parsed.skipped.push(skip(SkipReason::NotUtf8 { valid_up_to: err.valid_up_to() }));
            }
            rows.push(Row { number: line.number, text: text.ok() });
        }
    }
    // Text with no session header anywhere is no aider log (a JSON file read with `--format
    // aider`, say): said once, and counted against the file.
    let texts = || rows.iter().filter_map(|row| row.text).filter(|text| !is_blank(text));
    if texts().next().is_some() && !texts().any(|text| text.starts_with(HEADER)) {
        let reason = format!("an aider log starts each session with a \"{}…\" line", HEADER.trim_end());
        note_shape(&mut parsed, false, &reason);
        parsed.unrecognised += 1;
    }
    let used = HashMap::from([(stem.to_owned(), 1)]);
    let builder = SessionBuilder::new("aider", true);
    let mut log = Log { rows: &rows, stem, parsed, builder, name: stem.to_owned(), framed: false, used };
    if let Some(first) = log.read(torn.is_some()) {
        log.parsed.skipped.push(Skipped { line: rows[first].number, reason: SkipReason::Truncated });
    }
    log.finish_session();
    log.parsed.skipped.extend(torn);
    log.parsed.skipped.sort_by_key(|skipped| skipped.line);
    log.parsed
}

/// One complete line; `text` is `None` when it was skipped (and reported).
#[derive(Clone, Copy, Debug)]
struct Row<'a> {
    number: usize,
    text: Option<&'a str>,
}

fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// An input line: `####`, then a space and the text, then the line break.
fn is_input(text: &str) -> bool {
    text.starts_with("####") && text.ends_with(BREAK)
}

/// The first line of a notice: `>`, then nothing or a space (`>>>>>>> REPLACE` in a reply is not).
fn is_notice(text: &str) -> bool {
    text.strip_prefix('>').is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// `text` without `marker` and the one space after it.
fn unmark<'t>(text: &'t str, marker: &str) -> &'t str {
    let rest = text.strip_prefix(marker).unwrap_or(text);
    rest.strip_prefix(' ').unwrap_or(rest)
}

/// Rows `first..=last` of an open reply or input.
type Span = Option<(usize, usize)>;

/// Where a notice that starts at a row ends.
enum NoticeEnd {
    At(usize),
    /// A marker comes first: the `>` line is a quote in a reply.
    NotANotice,
    /// The file ends first: its end may still be written.
    Unwritten,
}

struct Log<'r, 'a> {
    rows: &'r [Row<'a>],
    stem: &'r str,
    parsed: ParsedTranscript,
    /// The session being read, its name, and whether a header opened it (text before the
    /// first header is not known to be aider's).
    builder: SessionBuilder,
    name: String,
    framed: bool,
    /// How often each session name was used.
    used: HashMap<String, usize>,
}

impl Log<'_, '_> {
    /// Reads every row into records; returns the row where text held back starts, if any.
    /// `torn`: the file ends inside a line, after the rows.
    fn read(&mut self, torn: bool) -> Option<usize> {
        // Rows of the open reply (first, last that is not blank) and of the open input.
        let (mut reply, mut input): (Span, Span) = (None, None);
        let mut i = 0;
        while let Some(row) = self.rows.get(i) {
            i += 1;
            let at = i - 1;
            let Some(text) = row.text else { continue };
            let after_blank = at == 0 || self.rows[at - 1].text.is_some_and(is_blank);
            let in_input = input.is_some_and(|(_, last)| last + 1 == at);
            if is_input(text) && (after_blank || in_input) {
                self.reply(&mut reply);
                input = Some((input.filter(|_| in_input).map_or(at, |(first, _)| first), at));
                continue;
            }
            self.input(&mut input);
            if is_blank(text) {
                continue;
            }
            if after_blank && text.starts_with(HEADER) {
                self.reply(&mut reply);
                self.start_session(at, text);
                continue;
            }
            if is_notice(text) {
                match self.notice_end(at, torn) {
                    NoticeEnd::At(end) => {
                        self.reply(&mut reply);
                        self.notice(at, end);
                        i = end + 1;
                        continue;
                    }
                    NoticeEnd::Unwritten => return Some(reply.map_or(at, |(first, _)| first)),
                    NoticeEnd::NotANotice => {}
                }
            }
            reply = Some((reply.map_or(at, |(first, _)| first), at));
        }
        // A torn line may continue what is open (one write, cut short).
        if let Some((first, _)) = input.or(reply).filter(|_| torn) {
            return Some(first);
        }
        self.input(&mut input);
        if let Some((first, last)) = reply {
            // aider ends every reply with a blank line; until it is there, more may follow.
            if !self.rows[last + 1..].iter().any(|row| row.text.is_some_and(is_blank)) {
                return Some(first);
            }
            self.reply(&mut reply);
        }
        None
    }

    /// Where the notice starting at row `start` ends: at a row with the line break that no line
    /// of the message follows (a blank line, a marker or the end of the file does), unless a
    /// marker comes first. A message's first line may end in spaces of its own.
    fn notice_end(&self, start: usize, torn: bool) -> NoticeEnd {
        let is_marker = |text: &str| is_notice(text) || is_input(text) || text.starts_with(HEADER);
        for (at, row) in self.rows.iter().enumerate().skip(start) {
            let Some(text) = row.text else { continue };
            if at > start && is_marker(text) {
                return NoticeEnd::NotANotice;
            }
            if text.ends_with(BREAK) {
                match self.rows.get(at + 1).map(|next| next.text) {
                    None if torn => return NoticeEnd::Unwritten,
                    None => return NoticeEnd::At(at),
                    Some(Some(next)) if is_blank(next) || is_marker(next) => return NoticeEnd::At(at),
                    Some(_) => {}
                }
            }
        }
        NoticeEnd::Unwritten
    }

    /// The texts of rows `first..=last`, skipped rows left out.
    fn texts(&self, first: usize, last: usize) -> Vec<&str> {
        self.rows[first..=last].iter().filter_map(|row| row.text).collect()
    }

    fn reply(&mut self, reply: &mut Span) {
        if let Some((first, last)) = reply.take() {
            let text = self.texts(first, last).join("\n");
            let known = self.framed;
            self.push(first, Role::Assistant, text, known, BTreeMap::new());
        }
    }

    fn input(&mut self, input: &mut Span) {
        if let Some((first, last)) = input.take() {
            let texts = self.texts(first, last);
            let lines: Vec<&str> =
                texts.iter().map(|text| unmark(text.strip_suffix(BREAK).unwrap_or(text), "####")).collect();
            self.push(first, Role::User, lines.join("\n"), true, BTreeMap::new());
        }
    }

    fn notice(&mut self, first: usize, last: usize) {
        let mut texts = self.texts(first, last);
        if let Some(end) = texts.last_mut() {
            *end = end.strip_suffix(BREAK).unwrap_or(end);
        }
        if let Some(start) = texts.first_mut() {
            *start = unmark(start, ">");
        }
        self.push(first, Role::System, texts.join("\n"), true, BTreeMap::new());
    }

    fn start_session(&mut self, at: usize, header: &str) {
        self.finish_session();
        let started = header[HEADER.len()..].trim();
        let mut name = format!("{}@{started}", self.stem);
        let count = self.used.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            name = format!("{name}#{count}");
        }
        (self.name, self.framed) = (name, true);
        let meta = BTreeMap::from([("startedAt".to_owned(), canonical_json(&Value::String(started.into())))]);
        self.push(at, Role::System, unmark(header, "#").to_owned(), true, meta);
    }

    fn finish_session(&mut self) {
        let builder = std::mem::replace(&mut self.builder, SessionBuilder::new("aider", true));
        if !builder.is_empty() {
            self.parsed.sessions.push(builder.finish(std::mem::take(&mut self.name), None, None, &[]));
        }
    }

    fn push(&mut self, at: usize, role: Role, text: String, known: bool, meta: BTreeMap<String, String>) {
        *if known { &mut self.parsed.recognised } else { &mut self.parsed.unrecognised } += 1;
        let record = Record { meta, ..Record::text(String::new(), role, text) };
        self.builder.push(self.rows[at].number, record, None);
    }
}

#[cfg(test)]
mod tests;
