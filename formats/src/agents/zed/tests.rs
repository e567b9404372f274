//! The Zed thread reader on threads shaped as Zed's `DbThread` serialises them (0.3) and as the
//! older format did, and on data that is not a thread.

use super::*;

const THREAD: &str = r#"{"title":"Fix the parser","version":"0.3.0","updated_at":"2026-11-30T10:00:05Z",
"messages":[
 {"User":{"id":"u-1","content":[{"Text":"fix the 解析器\u3000🦀"},{"Mention":{"uri":{"File":{"abs_path":"/src/a.rs"}},"content":"fn main() {}"}},{"Image":{"source":"iVBORw0KGgo=","size":{"width":1,"height":1}}}]}},
 {"Agent":{"content":[{"Thinking":{"text":"look first","signature":"sig"}},{"Text":"Reading it."},{"ToolUse":{"id":"t1","name":"read_file","raw_input":"{}","input":{"path":"src/a.rs"},"is_input_complete":true}}],
   "tool_results":{"t1":{"tool_use_id":"t1","tool_name":"read_file","is_error":false,"content":{"Text":"fn main() {}"},"output":null}}}},
 "Resume",
 {"Agent":{"content":[{"Text":"Done."}],"tool_results":{}}}
],
"model":{"provider":"anthropic","model":"claude-sonnet-4-5"},"cumulative_token_usage":{"input_tokens":10,"output_tokens":5}}"#;

fn row(json: &str) -> ZedThreadRow {
    ZedThreadRow { id: "0c1d2e3f".into(), parent_id: None, json: json.as_bytes().to_vec() }
}

#[test]
fn each_message_becomes_a_record_and_tool_results_follow() -> Result<(), String> {
    let session = parse_zed_thread(&row(THREAD))?;
    assert_eq!(session.name, "0c1d2e3f");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(
        ids[..5],
        ["zed:0c1d2e3f:1", "zed:0c1d2e3f:2", "zed:0c1d2e3f:2/results", "zed:0c1d2e3f:3", "zed:0c1d2e3f:4"]
    );
    assert_eq!(ids[5], "zed:0c1d2e3f:thread");
    let records = &session.records;
    assert_eq!(records[0].role, Role::User);
    assert_eq!(records[0].blocks[0], Block::Text { text: "fix the 解析器\u{3000}🦀".into() });
    assert!(matches!(&records[0].blocks[1], Block::Blob { media_type, .. } if media_type == "image/png"));
    assert!(records[0].meta["contentExtra"].contains("Mention"));
    assert_eq!(records[1].role, Role::Assistant);
    assert_eq!(
        records[1].blocks,
        [
            Block::Thinking { text: "look first".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "t1".into(),
                tool: "read_file".into(),
                input: r#"{"path":"src/a.rs"}"#.into(),
                target: String::new()
            },
        ]
    );
    assert_eq!(records[2].role, Role::Tool);
    assert_eq!(
        records[2].blocks,
        [Block::ToolResult {
            call_id: "t1".into(),
            tool: "read_file".into(),
            is_error: false,
            output: "fn main() {}".into()
        }]
    );
    assert_eq!(records[3].role, Role::System);
    assert_eq!(records[3].meta["message"], "\"Resume\"");
    assert_eq!(records[5].meta["title"], "\"Fix the parser\"");
    // What every save moves is not the thread's record: it would change at every save.
    assert_eq!(records[5].timestamp, None);
    assert!(
        !records[5].meta.contains_key("updated_at")
            && !records[5].meta.contains_key("cumulative_token_usage")
    );
    Ok(())
}

#[test]
fn a_longer_save_keeps_the_records_of_the_messages_before() -> Result<(), String> {
    let shorter =
        THREAD.replace(",\n {\"Agent\":{\"content\":[{\"Text\":\"Done.\"}],\"tool_results\":{}}}", "");
    let before = parse_zed_thread(&row(&shorter))?;
    let after = parse_zed_thread(&row(THREAD))?;
    assert_eq!(before.records[..4], after.records[..4]);
    Ok(())
}

#[test]
fn the_older_format_and_a_sub_agent() -> Result<(), String> {
    let old = r#"{"version":"0.2.0","summary":"old","updated_at":"2025-05-01T10:00:00Z","messages":[
        {"id":0,"role":"user","segments":[{"type":"text","text":"hi 🦀"}],"tool_uses":[],"tool_results":[]},
        {"id":1,"role":"assistant","segments":[{"type":"thinking","text":"hm"},{"type":"text","text":"ok"}],
         "tool_uses":[{"id":"t9","name":"grep","input":{"regex":"x"}}],
         "tool_results":[{"tool_use_id":"t9","is_error":true,"content":"no match","output":null}]}]}"#;
    let mut thread = row(old);
    thread.parent_id = Some("p-1".into());
    let session = parse_zed_thread(&thread)?;
    let records = &session.records;
    assert_eq!(records[0].blocks, [Block::Text { text: "hi 🦀".into() }]);
    assert_eq!(records[1].blocks.len(), 3);
    assert!(
        matches!(&records[2].blocks[0], Block::ToolResult { is_error: true, output, tool, .. } if output == "no match" && tool == "grep")
    );
    assert!(records.iter().all(|r| r.meta.get("parentSession").map(String::as_str) == Some("\"p-1\"")));
    Ok(())
}

#[test]
fn data_that_is_not_a_thread_is_refused_with_its_reason() {
    for (json, reason) in
        [("not json", "not JSON"), ("[1]", "not a JSON object"), (r#"{"title":"x"}"#, "no messages")]
    {
        match parse_zed_thread(&row(json)) {
            Err(why) => assert!(why.contains(reason), "{why}"),
            Ok(session) => panic!("{json} parsed to {session:?}"),
        }
    }
}

/// Fragments of threads, so random input reaches into the reader.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"messages\"",
    "\"User\"",
    "\"Agent\"",
    "\"Resume\"",
    "\"content\"",
    "\"Text\"",
    "\"Thinking\"",
    "\"ToolUse\"",
    "\"Image\"",
    "\"source\"",
    "\"tool_results\"",
    "\"id\"",
    "\"name\"",
    "\"input\"",
    "\"role\"",
    "\"segments\"",
    "\"type\"",
    "\"text\"",
    "\"é🦀\"",
    "null",
    "7",
];

proptest::proptest! {
    #[test]
    fn any_thread_data_reads_without_panicking(indices in proptest::collection::vec(0usize..1000, 0..300)) {
        let text: String = indices.iter().map(|&i| PIECES[i % PIECES.len()]).collect();
        let first = parse_zed_thread(&row(&text));
        proptest::prop_assert_eq!(&first, &parse_zed_thread(&row(&text)));
        if let Ok(session) = first {
            proptest::prop_assert!(session.records.iter().all(|r| !r.entry_id.is_empty()));
        }
        let wrapped = format!("{{\"messages\":[{text}]}}");
        let _ = parse_zed_thread(&row(&wrapped));
    }
}
