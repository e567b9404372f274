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
mod tests {
    use super::super::{detect_format, parse_transcript, parse_transcript_with, TranscriptFormat};
    use super::*;
    use annal_engine::Block;

    fn parse(text: &[u8]) -> ParsedTranscript {
        parse_transcript(text, TranscriptFormat::Aider, "proj")
    }

    /// A log as aider writes it, one `append_chat_history` call per item.
    fn writes(long: usize) -> Vec<String> {
        let reply =
            "はい。変更点は次のとおりです:\n\n> a quote from the docs\n\n#### Step 1\n\nsrc/main.rs\n\
                     ```rust\n<<<<<<< SEARCH\nfn main() {}\n=======\nfn main() { println!(\"👋\"); }\n\
                     >>>>>>> REPLACE\n```";
        [
            "\n# aider chat started at 2025-07-15 11:38:37\n\n",
            "> Aider v0.85.1  \n",
            "\n#### 日本語で説明して 🙂  \n#### e\u{301}te\u{301} — thin\u{2009}space, no\u{a0}break  \n",
            &format!("\n{reply}\n\n"),
            "> Tokens: 3.2k sent, 21 received. Cost: $0.0082 message, $0.0082 session.  \n",
            "> # 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: 検索\n\
             >>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.  \n",
            ">  \n",
            "> mkdir -p dist/dags          \ntouch dist/dags/index.js  \n",
            "\n# aider chat started at 2025-07-16 09:00:00\n\n",
            &format!("\n#### {}  \n", "長い行 ".repeat(long)),
            "\n# aider chat started at 2025-07-16 09:00:00\n\n",
            "> ^C KeyboardInterrupt  \n",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    #[test]
    fn sessions_inputs_replies_and_notices() {
        let parsed = parse(writes(3).concat().as_bytes());
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        let names: Vec<&str> = parsed.sessions.iter().map(|s| s.name.as_str()).collect();
        let (first, second) = ("proj@2025-07-15 11:38:37", "proj@2025-07-16 09:00:00");
        assert_eq!(names, [first.to_owned(), second.to_owned(), format!("{second}#2")]);
        use Role::{Assistant as A, System as S, User as U};
        let expected = [
            (first, 2, S, "aider chat started at 2025-07-15 11:38:37"),
            (first, 4, S, "Aider v0.85.1"),
            (first, 6, U, "日本語で説明して 🙂\ne\u{301}te\u{301} — thin\u{2009}space, no\u{a0}break"),
            (first, 9, A, "はい。変更点は次のとおりです:\n\n> a quote"),
            (first, 24, S, "Tokens: 3.2k sent, 21 received. Cost"),
            (first, 25, S, "# 1 SEARCH/REPLACE block failed to"),
            (first, 31, S, ""),
            (first, 32, S, "mkdir -p dist/dags          \ntouch dist/"),
            (second, 35, S, "aider chat started at 2025-07-16 09:00:00"),
            (second, 38, U, "長い行 長い行 長い行 "),
            (&format!("{second}#2"), 40, S, "aider chat started at 2025-07-16 09:00:00"),
            (&format!("{second}#2"), 42, S, "^C KeyboardInterrupt"),
        ];
        let records: Vec<&Record> = parsed.sessions.iter().flat_map(|s| &s.records).collect();
        assert_eq!(records.len(), expected.len());
        for (record, (session, line, role, start)) in records.iter().zip(expected) {
            assert_eq!(
                (record.entry_id.as_str(), record.role),
                (format!("aider:{session}:{line}").as_str(), role)
            );
            assert!(
                matches!(&record.blocks[..], [Block::Text { text }] if text.starts_with(start)),
                "{record:?}"
            );
        }
        let records = &parsed.sessions[0].records;
        let reply = &writes(3)[3];
        assert_eq!(records[3].blocks, [Block::Text { text: reply.trim().to_owned() }]);
        let error = "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: 検索\n\
                     >>>>>>> REPLACE\n\nJust reply with fixed versions of the block above that failed to match.";
        assert_eq!(records[5].blocks, [Block::Text { text: error.into() }]);
        assert_eq!(records[0].meta["startedAt"], "\"2025-07-15 11:38:37\"");
        assert_eq!((parsed.recognised, parsed.unrecognised), (12, 0));
    }

    #[test]
    fn a_growing_log_parses_to_a_prefix() {
        let writes = writes(300);
        let text = writes.concat();
        let full = parse(text.as_bytes());
        let ends: Vec<usize> =
            writes.iter().scan(0, |at, w| Some(*at + w.len()).inspect(|end| *at = *end)).collect();
        let mut compared = 0;
        for (cut, _) in text.char_indices().filter(|&(cut, _)| cut > 0) {
            let torn = text.as_bytes()[cut - 1] != b'\n';
            if !torn && !ends.contains(&cut) {
                continue; // a write torn just after a line break: see the module notes
            }
            let part = parse(&text.as_bytes()[..cut]);
            assert!(part.skipped.iter().all(|s| s.reason == SkipReason::Truncated), "cut at {cut}");
            assert_eq!(torn, part.skipped.last().is_some_and(|s| s.line == text[..cut].lines().count()));
            for (short, long) in part.sessions.iter().zip(&full.sessions) {
                assert_eq!(short.name, long.name, "cut at {cut}");
                assert_eq!(short.records[..], long.records[..short.records.len()], "cut at {cut}");
                compared += short.records.len();
            }
            assert!(part.sessions.len() <= full.sessions.len());
        }
        assert!(compared > 1000, "{compared}");
        assert_eq!(parse(text.as_bytes()), full, "parsing is deterministic");
    }

    #[test]
    fn a_torn_last_line_waits_until_complete() {
        let head = "\n# aider chat started at 2026-04-22 22:40:12\n\n> Aider v0.86.1  \n\n";
        let torn = parse(format!("{head}#### Привет, мир").as_bytes());
        let lines: Vec<(usize, &SkipReason)> = torn.skipped.iter().map(|s| (s.line, &s.reason)).collect();
        assert_eq!(lines, [(6, &SkipReason::Truncated)]);
        assert_eq!(torn.record_count(), 2);
        let done = parse(format!("{head}#### Привет, мир  \n").as_bytes());
        assert!(done.skipped.is_empty());
        assert_eq!(done.sessions[0].records[..2], torn.sessions[0].records[..]);
        assert_eq!(done.sessions[0].records[2].blocks, [Block::Text { text: "Привет, мир".into() }]);
        // A reply not yet followed by its blank line waits too, reported at its first line.
        let reply = parse(format!("{head}\nПривет!\n").as_bytes());
        assert_eq!(reply.skipped, [Skipped { line: 7, reason: SkipReason::Truncated }]);
        assert_eq!(parse(format!("{head}\nПривет!\n\n").as_bytes()).record_count(), 3);
    }

    #[test]
    fn bad_lines_and_text_before_the_first_header() {
        let mut text = b"notes kept above\n\n# aider chat started at 2025-01-01 00:00:00\n\n".to_vec();
        text.extend_from_slice(b"\nreply \xFF line\nrest of the reply\n\n> ok  \n");
        let parsed = parse_transcript_with(&text, TranscriptFormat::Aider, "proj", &ParseOptions::default());
        assert_eq!(parsed.skipped, [Skipped { line: 6, reason: SkipReason::NotUtf8 { valid_up_to: 6 } }]);
        assert_eq!(parsed.sessions[0].name, "proj");
        assert_eq!(parsed.sessions[0].records[0].role, Role::Assistant);
        let reply = &parsed.sessions[1].records[1];
        assert_eq!(reply.blocks, [Block::Text { text: "rest of the reply".into() }]);
        assert_eq!((parsed.recognised, parsed.unrecognised), (3, 1));
        let options = ParseOptions { max_line_bytes: 16, ..ParseOptions::default() };
        let long = parse_transcript_with(&text, TranscriptFormat::Aider, "proj", &options);
        assert!(long.skipped.iter().any(|s| matches!(s.reason, SkipReason::TooLarge { .. })));
    }

    #[test]
    fn detection_is_strict() {
        let log = writes(1).concat();
        assert!(is_aider_log(log.as_bytes()));
        assert!(is_aider_log(format!("\u{feff}\r\n  \n{}", log.trim_start()).as_bytes()));
        assert_eq!(detect_format(log.as_bytes()), Some(TranscriptFormat::Aider));
        let readme = "# annal\n\nAn event-sourced session store.\n\n#### Usage  \n\n> note  \n";
        for other in [
            readme,
            "Some notes\n# aider chat started at 2025-07-15 11:38:37\n",
            "# aider chat started at yesterday\n",
            "  # aider chat started at 2025-07-15 11:38:37\n",
            "[{\"role\":\"user\",\"content\":\"# aider chat started at 2025-07-15 11:38:37\"}]",
            r#"{"type":"user","uuid":"u1","sessionId":"s1","message":{"role":"user","content":"hi"}}"#,
            "",
        ] {
            assert!(!is_aider_log(other.as_bytes()), "{other:?}");
            assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::Aider), "{other:?}");
        }
    }
}
