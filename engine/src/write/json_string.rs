//! Telling JSON text that is already in the store's canonical form without parsing it: the
//! common metadata value (an Agents SDK item's verbatim text is kept as one string; a
//! checkpointer's record part is an object its maker wrote canonically), which canonicalising
//! would otherwise parse and write again only to find it unchanged.

/// The control characters serde_json writes with a short escape (`\b`, `\t`, `\n`, `\f`, `\r`);
/// it writes every other one below 0x20 as `\u00XX` in lowercase hex.
const SHORT_ESCAPED: [u8; 5] = [0x08, 0x09, 0x0a, 0x0c, 0x0d];

/// How deep [`is_canonical_json`] follows arrays and objects before leaving a text to the
/// parser, which stops at 128 levels.
const DEPTH_MAX: usize = 100;

/// Whether `text` is a JSON value exactly as [`canonical_json`](crate::canonical_json) writes
/// it, so canonicalising it would change nothing: no space, object keys in increasing byte
/// order, strings with serde_json's escapes and no other. Keys with escapes, fractions, exponents and integers of more than 18 digits are left
/// to the parser (a `false`, which says only that the text must be parsed to know).
pub(crate) fn is_canonical_json(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Per open array (None) or object (its last key).
    let mut open: Vec<Option<&[u8]>> = Vec::new();
    let mut at = 0;
    loop {
        // A value starts at `at`.
        match bytes.get(at) {
            Some(b'[') if bytes.get(at + 1) == Some(&b']') => at += 2,
            Some(b'{') if bytes.get(at + 1) == Some(&b'}') => at += 2,
            // An array or object opens: its first value comes next.
            Some(b'[') => {
                open.push(None);
                at += 1;
                if open.len() > DEPTH_MAX {
                    return false;
                }
                continue;
            }
            Some(b'{') => {
                let Some((key, after)) = key_at(bytes, at + 1) else { return false };
                open.push(Some(key));
                at = after;
                if open.len() > DEPTH_MAX {
                    return false;
                }
                continue;
            }
            Some(b'"') => match string_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            Some(_) => match scalar_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            None => return false,
        }
        // A value ended at `at`: close what ends here, then go to the next value.
        loop {
            let Some(innermost) = open.last_mut() else { return at == bytes.len() };
            match (bytes.get(at), innermost) {
                (Some(b','), None) => {
                    at += 1;
                    break;
                }
                (Some(b']'), None) | (Some(b'}'), Some(_)) => {
                    at += 1;
                    open.pop();
                }
                (Some(b','), Some(last)) => {
                    let Some((key, after)) = key_at(bytes, at + 1) else { return false };
                    if key <= *last {
                        return false;
                    }
                    *last = key;
                    at = after;
                    break;
                }
                _ => return false,
            }
        }
    }
}

/// The key whose literal starts at `at`, without escapes (an escaped key sorts by what it
/// decodes to: left to the parser), and where its value starts after the colon.
fn key_at(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = string_end(bytes, at)?;
    let key = &bytes[at + 1..end - 1];
    if key.contains(&b'\\') || bytes.get(end) != Some(&b':') {
        return None;
    }
    Some((key, end + 1))
}

/// Just past the string literal that starts at `at`, when it is canonical.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut end = at + 1;
    loop {
        end += memchr::memchr2(b'"', b'\\', bytes.get(end..)?)?;
        if bytes[end] == b'"' {
            break;
        }
        end += 2; // past the backslash and the next byte: the literal's check reads the escape
    }
    is_canonical_literal(bytes.get(at..=end)?).then_some(end + 1)
}

/// Just past the `true`, `false`, `null` or integer that starts at `at`, when serde_json
/// writes it so: no leading zero, no `-0`, at most 18 digits (read back as an integer).
fn scalar_end(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = bytes.get(at..)?;
    for word in [&b"true"[..], b"false", b"null"] {
        if rest.starts_with(word) {
            return Some(at + word.len());
        }
    }
    let sign = usize::from(rest.first() == Some(&b'-'));
    let digits = rest[sign..].iter().take_while(|b| b.is_ascii_digit()).count();
    let leading_zero = rest.get(sign) == Some(&b'0') && (digits > 1 || sign == 1);
    if digits == 0 || digits > 18 || leading_zero {
        return None;
    }
    Some(at + sign + digits)
}

/// Whether a string literal's bytes are as serde_json writes them.
fn is_canonical_literal(literal: &[u8]) -> bool {
    let [b'"', inner @ .., b'"'] = literal else { return false };
    // A raw control character is not JSON. Folded without an early exit, in chunks, so the
    // compiler makes it a vector loop: a whole item's text is checked in a few microseconds.
    if inner.chunks(64).any(|chunk| chunk.iter().fold(false, |seen, &b| seen | (b < 0x20))) {
        return false;
    }
    let mut at = 0;
    while let Some(offset) = memchr::memchr2(b'"', b'\\', &inner[at..]) {
        at += offset;
        // A quote inside is not a string serde_json writes.
        if inner[at] == b'"' {
            return false;
        }
        match inner.get(at + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => at += 2,
            Some(b'u') => match inner.get(at + 2..at + 6) {
                Some(&[b'0', b'0', high @ (b'0' | b'1'), low]) => {
                    let low = match low {
                        b'0'..=b'9' => low - b'0',
                        b'a'..=b'f' => low - b'a' + 10,
                        _ => return false,
                    };
                    if SHORT_ESCAPED.contains(&((high - b'0') << 4 | low)) {
                        return false;
                    }
                    at += 6;
                }
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::is_canonical_json;
    use crate::canonical_json;

    /// What the slow path decides: the text parses as a string and writes back the same.
    fn canonical_by_parsing(text: &str) -> bool {
        matches!(serde_json::from_str::<Value>(text), Ok(value @ Value::String(_)) if canonical_json(&value) == text)
    }

    #[test]
    fn tells_what_serde_json_writes_from_what_it_does_not() {
        for yes in [r#""""#, r#""東京 🦀 e\u0301""#, r#""a\"b\\c\n\t\u0000\u001f\u007f""#] {
            let yes = yes.replace("\\u0301", "\u{301}").replace("\\u007f", "\u{7f}");
            assert!(is_canonical_json(&yes), "{yes}");
            assert!(canonical_by_parsing(&yes), "{yes}");
        }
        for no in [
            "\"",
            "x",
            r#""a"b""#,
            r#""\/""#,
            r#""\u00e9""#,
            r#""\u001F""#,
            r#""\u000a""#,
            r#""\""#,
            "\"a\nb\"",
            r#" "a""#,
            r#""\u00""#,
            "\"\u{3000}\"\u{3000}",
        ] {
            assert!(!is_canonical_json(no), "{no}");
            assert!(!canonical_by_parsing(no), "{no}");
        }
    }

    /// Pieces a string literal is made of: text of every width, and escapes serde_json writes
    /// or does not.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z \u{3000}東京🦀e\u{301}\u{7f}]{0,8}",
            prop::sample::select(vec![
                r#"\""#,
                r#"\\"#,
                r#"\n"#,
                r#"\t"#,
                r#"\b"#,
                r#"\f"#,
                r#"\r"#,
                r#"\/"#,
                r#"\u0000"#,
                r#"\u001f"#,
                r#"\u001F"#,
                r#"\u000a"#,
                r#"\u0008"#,
                r#"\u00e9"#,
                r#"\ud83e"#,
                "\"",
                "\\",
                "\n",
                "\u{1}",
            ])
            .prop_map(str::to_owned),
        ]
    }

    proptest! {
        #[test]
        fn agrees_with_parsing_and_writing_again(pieces in prop::collection::vec(piece(), 0..12), close in any::<bool>()) {
            let text = format!("\"{}{}", pieces.concat(), if close { "\"" } else { "" });
            prop_assert_eq!(is_canonical_json(&text), canonical_by_parsing(&text), "{}", text);
        }

        #[test]
        fn what_serde_json_writes_is_canonical(text in "\\PC{0,64}|[\u{0}-\u{1f}\"\\\\ -~]{0,64}") {
            let written = serde_json::to_string(&text).unwrap_or_default();
            prop_assert!(is_canonical_json(&written), "{}", written);
        }
    }

    /// What the slow path decides for any value: it parses and writes back the same.
    fn value_canonical_by_parsing(text: &str) -> bool {
        serde_json::from_str::<Value>(text).is_ok_and(|value| canonical_json(&value) == text)
    }

    #[test]
    fn tells_canonical_values_from_others() {
        let yes = [
            r#"{"checkpoint":["msgpack","gqJ2AQ=="],"id":"1f0c","kind":"checkpoint","ns":"","parent":null}"#,
            r#"{"":[],"a":{},"b":[1,-2,0,true,false,null,"東京 🦀 e\u0000"],"é":{"x":[[{}]]}}"#,
            "[]",
            "{}",
            "0",
            "-123456789012345678",
            "null",
        ];
        for text in yes {
            assert!(is_canonical_json(text), "{text}");
            assert!(value_canonical_by_parsing(text), "{text}");
        }
        // Not canonical, or left to the parser (escaped keys, fractions, long integers).
        let no = [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":1}"#,
            r#"{"a": 1}"#,
            r#"{"a\n":1}"#,
            "[1,]",
            "[1 ]",
            "[,1]",
            "{\"a\"}",
            "{\"a\":}",
            "1.5",
            "1e3",
            "-0",
            "01",
            "1234567890123456789",
            "tru",
            "truex",
            "[1]]",
            "[[1]",
            "\"a\"\"b\"",
            "",
            " ",
        ];
        for text in no {
            assert!(!is_canonical_json(text), "{text}");
        }
    }

    #[test]
    fn nesting_past_the_limit_is_left_to_the_parser() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!is_canonical_json(&deep));
        let shallow = format!("{}1{}", "[".repeat(90), "]".repeat(90));
        assert!(is_canonical_json(&shallow));
    }

    /// JSON values without fractions, as a record's metadata holds them: text of every width.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-(10_i64.pow(17))..10_i64.pow(17)).prop_map(Value::from),
            "[a-z \u{3000}東京🦀e\u{301}\u{7f}\u{0}-\u{1f}\"\\\\]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-zé東 ]{0,4}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    /// Pieces JSON text is made of, to put together in orders that are and are not JSON.
    fn token() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\"a\"", "\"b\"", "\"\\n\"", "\"é\"", "1", "-1", "0", "-0",
            "1.0", "null", "true", "\"",
        ])
        .prop_map(str::to_owned)
    }

    proptest! {
        #[test]
        fn what_canonical_json_writes_is_taken(value in value()) {
            let text = canonical_json(&value);
            prop_assert!(is_canonical_json(&text), "{}", text);
        }

        #[test]
        fn what_it_takes_parses_and_writes_back_the_same(tokens in prop::collection::vec(token(), 0..16)) {
            let text = tokens.concat();
            if is_canonical_json(&text) {
                prop_assert!(value_canonical_by_parsing(&text), "{}", text);
            }
        }
    }
}
