//! The wire form, version 1: what one stream message says, and how a session's name becomes
//! its subject. docs/replication.md describes it for other implementations.
//!
//! Every message carries the header `Annal-Wire: 1` and `Annal-Kind`:
//! - `record`: the payload is one record in the portable JSON format, with `sourceOrder`,
//!   `entryId`, `hash` and `prevHash`;
//! - `record-ref`: the record was over the server's payload limit; the payload is
//!   `{"object": "<object name>", "bytes": n, "hash": "<chain hash>"}` and the record's JSON is
//!   that object of the stream's object store;
//! - `fork`: the payload is `{"parent": "<session>", "at": n, "head": "<hex>"}`: the session
//!   reads the parent's records `[0, at)`, the last of which has chain hash `head`.
//!
//! `Annal-Session` names the session (it must match the subject), `Annal-Order` the record's
//! sourceOrder (or the fork point) and `Annal-Hash` its chain hash (or the fork's head).
//! `Nats-Msg-Id` is derived from the kind, the session and the chain hash, so a retried publish is
//! dropped by the server's de-duplication.

use annal_engine::{hash_from_hex, hash_to_hex, Hash};
use async_nats::HeaderMap;
use bytes::Bytes;

/// The wire form's version; a follower refuses messages of any other.
pub const WIRE_VERSION: &str = "1";

pub(crate) const H_WIRE: &str = "Annal-Wire";
pub(crate) const H_KIND: &str = "Annal-Kind";
pub(crate) const H_SESSION: &str = "Annal-Session";
pub(crate) const H_ORDER: &str = "Annal-Order";
pub(crate) const H_HASH: &str = "Annal-Hash";

/// A session's subject: `<prefix>.s.<token>`, where the token keeps ASCII letters, digits and
/// `-`, and writes every other byte of the name's UTF-8 as `_` and two lowercase hex digits.
/// Any name is a valid, distinct subject token.
pub fn subject(prefix: &str, session: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 3 + session.len());
    out.push_str(prefix);
    out.push_str(".s.");
    for byte in session.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' {
            out.push(char::from(byte));
        } else {
            out.push('_');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The session a subject names, if it is one of this prefix's and well formed.
pub fn session_of_subject(prefix: &str, subject: &str) -> Option<String> {
    let token = subject.strip_prefix(prefix)?.strip_prefix(".s.")?;
    let mut bytes = Vec::with_capacity(token.len());
    let mut rest = token.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'_' {
            let hex = tail.get(..2)?;
            let text = std::str::from_utf8(hex).ok()?;
            if text.bytes().any(|b| b.is_ascii_uppercase()) {
                return None;
            }
            bytes.push(u8::from_str_radix(text, 16).ok()?);
            rest = &tail[2..];
        } else if first.is_ascii_alphanumeric() || first == b'-' {
            bytes.push(first);
            rest = tail;
        } else {
            return None;
        }
    }
    String::from_utf8(bytes).ok().filter(|name| !name.is_empty())
}

/// The de-duplication id of a session's message whose chain hash (or fork head) is `hash`.
pub(crate) fn message_id(kind: &str, session: &str, hash: &Hash) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"annal.wire.v1\0");
    hasher.update(kind.as_bytes());
    hasher.update(b"\0");
    hasher.update(&(session.len() as u64).to_le_bytes());
    hasher.update(session.as_bytes());
    hasher.update(hash);
    hasher.finalize().to_hex()[..32].to_owned()
}

/// One message as a follower reads it, checked for form but not yet for its chain.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A record's portable JSON, read from the message or from the object store.
    Record { order: u64, hash: Hash, json: Bytes },
    /// A record whose JSON is in the object store.
    RecordRef { order: u64, hash: Hash, object: String, bytes: Option<u64> },
    /// A fork.
    Fork { parent: String, at: u64, head: Hash },
}

/// The headers of a message of `kind` for `session`.
pub(crate) fn headers(kind: &str, session: &str, order: u64, hash: &Hash) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(H_WIRE, WIRE_VERSION);
    headers.insert(H_KIND, kind);
    headers.insert(H_SESSION, session);
    headers.insert(H_ORDER, order.to_string().as_str());
    headers.insert(H_HASH, hash_to_hex(hash).as_str());
    headers.insert("Nats-Msg-Id", message_id(kind, session, hash).as_str());
    headers
}

/// The payload of a fork message.
pub(crate) fn fork_payload(parent: &str, at: u64, head: &Hash) -> Bytes {
    let value = serde_json::json!({"parent": parent, "at": at, "head": hash_to_hex(head)});
    Bytes::from(value.to_string())
}

/// The payload of a record stored in the object store.
pub(crate) fn ref_payload(object: &str, size_bytes: usize, hash: &Hash) -> Bytes {
    let value = serde_json::json!({"object": object, "bytes": size_bytes, "hash": hash_to_hex(hash)});
    Bytes::from(value.to_string())
}

/// Reads a message of `session` (named by its subject): its headers must be annal's wire form
/// of this version and agree with each other and the payload's envelope.
pub(crate) fn decode(session: &str, headers: Option<&HeaderMap>, payload: Bytes) -> Result<Incoming, String> {
    let headers = headers.ok_or("not annal's wire form: the message has no headers")?;
    let get = |name: &str| headers.get(name).map(|value| value.as_str().to_owned());
    match get(H_WIRE).as_deref() {
        Some(WIRE_VERSION) => {}
        Some(other) => {
            return Err(format!("wire form version {other:?}; this build reads version {WIRE_VERSION}"))
        }
        None => return Err("not annal's wire form: no Annal-Wire header".into()),
    }
    if get(H_SESSION).as_deref() != Some(session) {
        return Err("its Annal-Session header does not name the session of its subject".into());
    }
    let order =
        get(H_ORDER).and_then(|text| text.parse::<u64>().ok()).ok_or("no valid Annal-Order header")?;
    let hash = get(H_HASH).and_then(|text| hash_from_hex(&text)).ok_or("no valid Annal-Hash header")?;
    let object = || -> Result<serde_json::Map<String, serde_json::Value>, String> {
        match serde_json::from_slice(&payload) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            _ => Err("its payload is not a JSON object".into()),
        }
    };
    match get(H_KIND).as_deref() {
        Some("record") => Ok(Incoming::Record { order, hash, json: payload }),
        Some("record-ref") => {
            let map = object()?;
            let name = map.get("object").and_then(|v| v.as_str()).ok_or("a record-ref without \"object\"")?;
            let bytes = map.get("bytes").and_then(serde_json::Value::as_u64);
            Ok(Incoming::RecordRef { order, hash, object: name.to_owned(), bytes })
        }
        Some("fork") => {
            let map = object()?;
            let parent = map.get("parent").and_then(|v| v.as_str()).ok_or("a fork without \"parent\"")?;
            let at = map.get("at").and_then(serde_json::Value::as_u64).ok_or("a fork without \"at\"")?;
            let head = map
                .get("head")
                .and_then(|v| v.as_str())
                .and_then(hash_from_hex)
                .ok_or("a fork without \"head\"")?;
            if at != order || head != hash {
                return Err("a fork whose payload and headers disagree".into());
            }
            Ok(Incoming::Fork { parent: parent.to_owned(), at, head })
        }
        Some(other) => Err(format!("unknown message kind {other:?}")),
        None => Err("no Annal-Kind header".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_name_round_trips_through_its_subject() {
        let names = [
            "plain",
            "claude:3f2a-9",
            "with.dots and spaces",
            "日本語のセッション",
            "emoji 🚀 e\u{301}",
            "a*b>c_d~e",
            "\u{3000}ideographic space",
        ];
        let mut seen = std::collections::HashSet::new();
        for name in names {
            let subject = subject("team.annal", name);
            assert!(!subject["team.annal.s.".len()..].contains(['.', '*', '>', ' ']), "{subject}");
            assert_eq!(session_of_subject("team.annal", &subject).as_deref(), Some(name));
            assert!(seen.insert(subject));
        }
        let long = "x".repeat(5000);
        assert_eq!(session_of_subject("p", &subject("p", &long)).as_deref(), Some(long.as_str()));
    }

    #[test]
    fn foreign_subjects_name_no_session() {
        for subject in ["other.s.x", "annal.s.", "annal.s.a_zz", "annal.s.a_4", "annal.s.a.b", "annal.s._C3"]
        {
            assert_eq!(session_of_subject("annal", subject), None, "{subject}");
        }
    }
}
