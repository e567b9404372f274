//! The OpenHands reader on events of both schemas, one per file and as a trajectory, and its
//! detection against look-alikes.

use super::super::{detect_format, parse_transcript, TranscriptFormat};
use annal_engine::{Block, Role};

const MESSAGE: &str = r#"{"kind":"MessageEvent","id":"3f0e","timestamp":"2026-11-30T10:00:00.123456","source":"user","llm_message":{"role":"user","content":[{"type":"text","text":"fix the 解析器\u3000🦀"}]},"activated_skills":[]}"#;
const ACTION: &str = r#"{"kind":"ActionEvent","id":"4a1b","timestamp":"2026-11-30T10:00:01","source":"agent","thought":[{"type":"text","text":"Reading it."}],"reasoning_content":"look first","action":{"kind":"FileEditorAction","command":"view","path":"/src/a.rs"},"tool_name":"str_replace_editor","tool_call_id":"toolu_1","tool_call":{"id":"toolu_1","name":"str_replace_editor","arguments":"{\"command\":\"view\",\"path\":\"/src/a.rs\"}"},"llm_response_id":"r1"}"#;
const OBSERVATION: &str = r#"{"kind":"ObservationEvent","id":"5c2d","timestamp":"2026-11-30T10:00:02","source":"environment","observation":{"kind":"FileEditorObservation","content":[{"type":"text","text":"fn main() {}"}],"is_error":false},"action_id":"4a1b","tool_name":"str_replace_editor","tool_call_id":"toolu_1"}"#;

#[test]
fn current_events_one_per_file() {
    let parse = |text: &str| parse_transcript(text.as_bytes(), TranscriptFormat::OpenHands, "9ab");
    for text in [MESSAGE, ACTION, OBSERVATION] {
        assert_eq!(detect_format(text.as_bytes()), Some(TranscriptFormat::OpenHands), "{text}");
    }
    let message = &parse(MESSAGE).sessions[0];
    assert_eq!(message.name, "9ab");
    assert_eq!(message.records[0].entry_id, "3f0e");
    assert_eq!(message.records[0].role, Role::User);
    assert_eq!(message.records[0].blocks, [Block::Text { text: "fix the 解析器\u{3000}🦀".into() }]);
    let action = &parse(ACTION).sessions[0].records[0];
    assert_eq!(action.role, Role::Assistant);
    assert_eq!(
        action.blocks,
        [
            Block::Thinking { text: "look first".into() },
            Block::Text { text: "Reading it.".into() },
            Block::ToolCall {
                call_id: "toolu_1".into(),
                tool: "str_replace_editor".into(),
                input: r#"{"command":"view","path":"/src/a.rs"}"#.into(),
                target: String::new()
            },
        ]
    );
    let observation = &parse(OBSERVATION).sessions[0].records[0];
    assert_eq!(observation.role, Role::Tool);
    assert_eq!(
        observation.blocks,
        [Block::ToolResult {
            call_id: "toolu_1".into(),
            tool: "str_replace_editor".into(),
            is_error: false,
            output: "fn main() {}".into()
        }]
    );
    assert_eq!(
        observation.meta["timestamp"], "\"2026-11-30T10:00:02\"",
        "a time without a zone stays in meta"
    );
}

#[test]
fn an_older_trajectory_of_events() {
    let trajectory = r#"[
  {"id": 0, "timestamp": "2025-01-20T20:29:13.519638", "source": "environment", "message": "", "observation": "agent_state_changed", "content": "", "extras": {"agent_state": "loading"}},
  {"id": 1, "timestamp": "2025-01-20T20:29:32.163218", "source": "user", "message": "make a todo app 🦀", "action": "message", "args": {"content": "make a todo app 🦀", "image_urls": null}},
  {"id": 2, "timestamp": "2025-01-20T20:29:35.040676", "source": "agent", "message": "Running command: ls", "action": "run", "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_9"}, "args": {"command": "ls", "thought": "Let me look."}},
  {"id": 3, "timestamp": "2025-01-20T20:29:35.699033", "source": "agent", "message": "Command `ls` executed with exit code 2.", "cause": 2, "observation": "error", "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_9"}, "content": "ls: cannot access"}
]"#;
    assert_eq!(detect_format(trajectory.as_bytes()), Some(TranscriptFormat::OpenHands));
    let parsed = parse_transcript(trajectory.as_bytes(), TranscriptFormat::OpenHands, "trajectory");
    assert_eq!((parsed.recognised, parsed.unrecognised), (4, 0));
    let records = &parsed.sessions[0].records;
    let ids: Vec<&str> = records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "openhands:trajectory:0",
            "openhands:trajectory:1",
            "openhands:trajectory:2",
            "openhands:trajectory:3"
        ]
    );
    assert_eq!(records[0].role, Role::System);
    assert_eq!(records[1].blocks, [Block::Text { text: "make a todo app 🦀".into() }]);
    assert_eq!(records[2].blocks[0], Block::Text { text: "Let me look.".into() });
    assert!(
        matches!(&records[2].blocks[1], Block::ToolCall { call_id, tool, .. } if call_id == "toolu_9" && tool == "execute_bash")
    );
    assert!(
        matches!(&records[3].blocks[0], Block::ToolResult { is_error: true, output, .. } if output == "ls: cannot access")
    );
}

#[test]
fn look_alikes_are_not_openhands_events() {
    let others = [
        r#"[{"role":"user","content":[{"type":"text","text":"<task>fix it</task>"}]}]"#,
        r#"{"id":"m1","timestamp":"2026-11-30T10:00:01Z","type":"user","content":"hi"}"#,
        r#"{"type":"session.start","data":{"sessionId":"s"},"id":"e1","timestamp":"2026-11-30T10:00:00.000Z","parentId":null}"#,
    ];
    for other in others {
        assert_ne!(detect_format(other.as_bytes()), Some(TranscriptFormat::OpenHands), "{other}");
        let parsed = parse_transcript(other.as_bytes(), TranscriptFormat::OpenHands, "s");
        assert!(parsed.record_count() == 0 || parsed.unrecognised > parsed.recognised, "{other}");
    }
}
