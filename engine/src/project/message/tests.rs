//! The canonical JSON's tests: escapes against serde_json's, embedded inputs, the shape written.

use super::*;

proptest::proptest! {
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them(text in "(\\PC|[\u{0}-\u{1f}\"\\\\\u{7f}])*") {
        let mut ours = Vec::new();
        write_str(&mut ours, &text).unwrap_or_default();
        let theirs = serde_json::to_vec(&text).unwrap_or_default();
        proptest::prop_assert_eq!(ours, theirs);
    }
}

#[test]
fn inputs_nested_deeper_than_a_reader_parses_are_carried_as_text() {
    let nested =
        |levels: usize| format!("{}\"[{{x\\\"\"{}", "{\"k\":[".repeat(levels / 2), "]}".repeat(levels / 2));
    for (levels, embedded) in [(2, true), (126, true), (128, false), (100_000, false)] {
        let input = nested(levels);
        assert_eq!(is_json_input(&input), embedded, "{levels} levels");
        let mut out = Vec::new();
        let call = MessageBlock::ToolCall {
            call_id: "c".into(),
            tool: "Bash".into(),
            input: input.as_str().into(),
            target: "".into(),
        };
        write_block(&mut out, &call).unwrap_or_default();
        let written = serde_json::from_slice::<serde_json::Value>(&out);
        let written = written.unwrap_or_else(|e| panic!("{levels} levels: {e}"));
        let key = if embedded { "input" } else { "inputText" };
        assert!(written.get(key).is_some(), "{levels} levels: {key} missing");
    }
    // Brackets inside strings are text.
    assert!(nests_within(&format!("[\"{}\"]", "[".repeat(1_000)), 2));
}

#[test]
fn escapes_at_every_offset_of_a_word() {
    for at in 0..20 {
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '\u{7f}'] {
            let mut text: String = "a".repeat(at);
            text.push(special);
            text.push_str(&"b".repeat(9));
            let mut ours = Vec::new();
            write_str(&mut ours, &text).unwrap_or_default();
            assert_eq!(ours, serde_json::to_vec(&text).unwrap_or_default(), "{text:?}");
        }
    }
}

#[test]
fn canonical_json_shape() {
    let messages = vec![
        Message::text(Role::User, "hi \"there\"\n"),
        Message {
            role: Role::Assistant,
            blocks: vec![
                MessageBlock::ToolCall {
                    call_id: "c1".into(),
                    tool: "Read".into(),
                    input: r#"{"path":"a"}"#.into(),
                    target: "a".into(),
                },
                MessageBlock::ToolCall {
                    call_id: "c2".into(),
                    tool: "apply_patch".into(),
                    input: "*** Begin Patch".into(),
                    target: "".into(),
                },
            ],
        },
    ];
    let mut out = Vec::new();
    write_messages_json(&mut out, &messages).unwrap_or_default();
    let text = String::from_utf8(out).unwrap_or_default();
    assert_eq!(
        text,
        concat!(
            r#"[{"role":"user","blocks":[{"type":"text","text":"hi \"there\"\n"}]},"#,
            r#"{"role":"assistant","blocks":[{"type":"toolCall","callId":"c1","tool":"Read","input":{"path":"a"},"target":"a"},"#,
            r#"{"type":"toolCall","callId":"c2","tool":"apply_patch","inputText":"*** Begin Patch","target":""}]}]"#
        )
    );
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert!(parsed.is_array());
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.projection.v1\0");
    hasher.update(text.as_bytes());
    assert_eq!(projection_hash(&messages), *hasher.finalize().as_bytes());
    assert_ne!(projection_hash(&messages), projection_hash(&messages[..1]));
}
