//! Telling a JSON string literal that is already in the store's canonical form without parsing
//! it: the common metadata value (an Agents SDK item's verbatim text is kept as one), which
//! canonicalising would otherwise parse and write again only to find it unchanged.

/// The control characters serde_json writes with a short escape (`\b`, `\t`, `\n`, `\f`, `\r`);
/// it writes every other one below 0x20 as `\u00XX` in lowercase hex.
const SHORT_ESCAPED: [u8; 5] = [0x08, 0x09, 0x0a, 0x0c, 0x0d];

/// Whether `text` is a JSON string exactly as [`canonical_json`](crate::canonical_json) writes
/// one (serde_json's escapes and nothing else), so canonicalising it would change nothing. A
/// `false` says only that the text must be parsed to know.
pub(crate) fn is_canonical_string(text: &str) -> bool {
    let [b'"', inner @ .., b'"'] = text.as_bytes() else { return false };
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

    use super::is_canonical_string;
    use crate::canonical_json;

    /// What the slow path decides: the text parses as a string and writes back the same.
    fn canonical_by_parsing(text: &str) -> bool {
        matches!(serde_json::from_str::<Value>(text), Ok(value @ Value::String(_)) if canonical_json(&value) == text)
    }

    #[test]
    fn tells_what_serde_json_writes_from_what_it_does_not() {
        for yes in [r#""""#, r#""東京 🦀 e\u0301""#, r#""a\"b\\c\n\t\u0000\u001f\u007f""#] {
            let yes = yes.replace("\\u0301", "\u{301}").replace("\\u007f", "\u{7f}");
            assert!(is_canonical_string(&yes), "{yes}");
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
            assert!(!is_canonical_string(no), "{no}");
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
            prop_assert_eq!(is_canonical_string(&text), canonical_by_parsing(&text), "{}", text);
        }

        #[test]
        fn what_serde_json_writes_is_canonical(text in "\\PC{0,64}|[\u{0}-\u{1f}\"\\\\ -~]{0,64}") {
            let written = serde_json::to_string(&text).unwrap_or_default();
            prop_assert!(is_canonical_string(&written), "{}", written);
        }
    }
}
