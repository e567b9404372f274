//! The canonical text of a JSON value: compact, object keys sorted by their UTF-8 bytes, the
//! form the store keeps tool inputs and metadata in (so an export re-imports to the same hash).
//!
//! Written with a stack of its own on the heap rather than by recursion: serde_json's parser
//! stops at 128 levels, but a `Value` built in code nests as deep as its maker likes, and
//! writing it must not overflow the thread's stack.

use serde_json::Value;

/// Where the writer is inside an array or object: what is left of it, and whether an item has
/// been written (so the next needs a comma).
enum Open<'v> {
    Array(std::slice::Iter<'v, Value>, bool),
    Object(std::vec::IntoIter<(&'v String, &'v Value)>, bool),
}

/// The canonical text of a JSON value: what the store keeps for tool inputs and metadata.
/// Compact, object keys sorted by their UTF-8 bytes. Sorting is done here rather than left to
/// serde_json's map type, whose order changes if any crate in a build enables its
/// `preserve_order` feature: hashes must not depend on that.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        match next.take() {
            Some(Value::Object(map)) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                out.push(b'{');
                open.push(Open::Object(entries.into_iter(), false));
            }
            Some(Value::Array(items)) => {
                out.push(b'[');
                open.push(Open::Array(items.iter(), false));
            }
            // Writing into a Vec cannot fail.
            Some(scalar) => drop(serde_json::to_writer(&mut out, scalar)),
            None => {}
        }
        let Some(innermost) = open.last_mut() else { break };
        match innermost {
            Open::Array(items, written) => match items.next() {
                Some(item) => {
                    if std::mem::replace(written, true) {
                        out.push(b',');
                    }
                    next = Some(item);
                }
                None => {
                    out.push(b']');
                    open.pop();
                }
            },
            Open::Object(entries, written) => match entries.next() {
                Some((key, item)) => {
                    if std::mem::replace(written, true) {
                        out.push(b',');
                    }
                    drop(serde_json::to_writer(&mut out, key));
                    out.push(b':');
                    next = Some(item);
                }
                None => {
                    out.push(b'}');
                    open.pop();
                }
            },
        }
    }
    // Only serde_json's escaped strings and ASCII punctuation were written.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_by_bytes_and_nothing_is_spaced() {
        let value = json!({"b": [1, {"z": null, "a": "日本"}], "a": true, "B": [], "é": {}, "": "x\"y"});
        assert_eq!(
            canonical_json(&value),
            r#"{"":"x\"y","B":[],"a":true,"b":[1,{"a":"日本","z":null}],"é":{}}"#
        );
        assert_eq!(canonical_json(&json!([])), "[]");
        assert_eq!(canonical_json(&json!(1.5)), "1.5");
    }

    /// A value nested 100,000 deep, built in code (the parser would stop at 128), is written
    /// on a 64 KiB stack.
    #[test]
    fn a_value_nested_a_hundred_thousand_deep_is_written_without_recursion() {
        const DEPTH: usize = 100_000;
        let mut value = json!("🦀");
        for level in 0..DEPTH {
            // Built by hand: `json!` would copy `value` through serde, recursively.
            value = if level % 2 == 0 {
                Value::Array(vec![value, Value::from(level)])
            } else {
                Value::Object(serde_json::Map::from_iter([("k".to_owned(), value)]))
            };
        }
        let written = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let text = canonical_json(&value);
                unnest(value);
                text
            })
            .map(|thread| thread.join());
        let Ok(Ok(text)) = written else { panic!("writing overflowed or failed") };
        assert_eq!(text.matches('[').count() + text.matches('{').count(), DEPTH);
        assert!(text.starts_with(r#"{"k":[{"k":["#) && text.contains(r#"["🦀",0]"#), "{}", &text[..64]);
        assert!(serde_json::from_str::<Value>(&text).is_err(), "the parser's limit still stands");
    }

    /// Takes a deep value apart one level at a time: dropping it whole would recurse.
    fn unnest(mut value: Value) {
        loop {
            value = match value {
                Value::Array(mut items) => items.swap_remove(0),
                Value::Object(mut map) => map.remove("k").unwrap_or(Value::Null),
                _ => return,
            };
        }
    }
}
