//! The Amp importer on threads shaped as Amp wrote them locally (and `amp threads export`
//! prints them), as the public readers of its files read them.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const THREAD: &str = r#"{"v":5,"id":"T-5f0c2e9a","created":1764496800000,"title":"Fix the parser","agentMode":"smart","nextMessageId":4,
"env":{"initial":{"trees":[{"uri":"file:///src/app","displayName":"app"}],"platform":{"os":"linux"}}},
"messages":[
 {"role":"user","messageId":0,"content":[{"type":"text","text":"fix the 解析器\u3000🦀"},{"type":"image","source":{"type":"base64","mediaType":"image/png","data":"aGk="}}],"meta":{"sentAt":1764496800000}},
 {"role":"assistant","messageId":1,"content":[{"type":"thinking","thinking":"Look first."},{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"cmd":"ls /nope"}}],"state":{"type":"complete","stopReason":"tool_use"}},
 {"role":"user","messageId":2,"content":[{"type":"tool_result","toolUseID":"toolu_01","run":{"status":"error","result":{"output":"ls: /nope: No such file","exitCode":2}}}]},
 {"role":"info","messageId":3,"content":[{"type":"summary","summary":{"type":"message","summary":"We listed /nope."}}]}
]}
"#;

#[test]
fn each_message_becomes_a_record() {
    assert_eq!(detect_format(THREAD.as_bytes()), Some(TranscriptFormat::Amp));
    let parsed = parse_transcript(THREAD.as_bytes(), TranscriptFormat::Amp, "stem");
    assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
    assert_eq!((parsed.recognised, parsed.unrecognised), (5, 0));
    let session = &parsed.sessions[0];
    assert_eq!(session.name, "T-5f0c2e9a");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids[..4], ["amp:T-5f0c2e9a:0", "amp:T-5f0c2e9a:1", "amp:T-5f0c2e9a:2", "amp:T-5f0c2e9a:3"]);
    let roles: Vec<Role> = session.records.iter().map(|r| r.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::System, Role::System]);
    let records = &session.records;
    assert_eq!(
        records[0].blocks,
        [
            Block::Text { text: "fix the 解析器\u{3000}🦀".into() },
            Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() }
        ]
    );
    assert_eq!(records[0].meta["meta"], r#"{"sentAt":1764496800000}"#);
    assert_eq!(
        records[1].blocks,
        [
            Block::Thinking { text: "Look first.".into() },
            Block::ToolCall {
                call_id: "toolu_01".into(),
                tool: "Bash".into(),
                input: r#"{"cmd":"ls /nope"}"#.into(),
                target: String::new()
            }
        ]
    );
    assert_eq!(
        records[2].blocks,
        [Block::ToolResult {
            call_id: "toolu_01".into(),
            tool: "Bash".into(),
            is_error: true,
            output: "ls: /nope: No such file".into()
        }]
    );
    assert!(records[2].meta["contentExtra"].contains("\"exitCode\":2"));
    assert_eq!(records[3].blocks, [Block::Text { text: "We listed /nope.".into() }]);
    let fields = &records[4];
    assert_eq!(fields.meta["title"], "\"Fix the parser\"");
    assert!(!fields.meta.contains_key("nextMessageId"));
}

#[test]
fn a_thread_that_went_on_keeps_its_records() {
    let more = THREAD.replace(
        "\n]}",
        ",\n {\"role\":\"user\",\"messageId\":4,\"content\":[{\"type\":\"text\",\"text\":\"thanks\"}]}\n]}",
    );
    let more = more.replace("\"nextMessageId\":4", "\"nextMessageId\":5");
    let before = parse_transcript(THREAD.as_bytes(), TranscriptFormat::Amp, "t");
    let after = parse_transcript(more.as_bytes(), TranscriptFormat::Amp, "t");
    let (before, after) = (&before.sessions[0].records, &after.sessions[0].records);
    assert_eq!(before[..4], after[..4]);
    // The thread's fields are unchanged: the same system record.
    assert_eq!(before[4], after[5]);
}

#[test]
fn look_alikes_are_not_amp() {
    // An id not of Amp's form, a role Amp does not write.
    assert_eq!(detect_format(br#"{"v":5,"id":"x","created":1,"messages":[]}"#), None);
    let role = r#"{"v":5,"id":"T-1","created":1,"messages":[{"role":"tool","content":[]}]}"#;
    assert_eq!(detect_format(role.as_bytes()), None);
}
