//! The importers' shared building blocks' tests: data URLs, store limits, split records, meta, pairing.

use super::*;
use annal_engine::Role;

#[test]
fn data_urls_and_base64() {
    assert_eq!(
        data_url_blob("data:image/png;base64,aGk="),
        Some(Block::Blob { media_type: "image/png".into(), data: b"hi".to_vec() })
    );
    assert_eq!(data_url_blob("data:text/plain,hi"), None);
    assert_eq!(data_url_blob("file:///x.png"), None);
    assert_eq!(base64_bytes("aGk"), Some(b"hi".to_vec()));
}

fn call(id: &str, tool: &str) -> Block {
    Block::ToolCall { call_id: id.into(), tool: tool.into(), input: "{}".into(), target: String::new() }
}

fn result(id: &str) -> Block {
    Block::ToolResult { call_id: id.into(), tool: String::new(), is_error: false, output: "ok".into() }
}

fn record(id: &str, blocks: Vec<Block>) -> Record {
    Record { entry_id: id.into(), role: Role::Tool, timestamp: None, blocks, meta: BTreeMap::new() }
}

#[test]
fn long_names_and_ids_fit_the_store_limits() {
    let long = "n".repeat(SESSION_NAME_MAX);
    let mut builder = SessionBuilder::new("x", true);
    builder.push(1, record("", vec![]), None);
    builder.push(2, record(&format!("{}/result", "m".repeat(ENTRY_ID_MAX)), vec![]), None);
    builder.push(3, record("", vec![call("c", "Bash")]), None);
    let session = builder.finish(long.clone(), None, None, &[]);
    assert_eq!(session.name, long, "a name within the limit is kept");
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert!(ids.iter().all(|id| id.len() <= ENTRY_ID_MAX), "{ids:?}");
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 3, "{ids:?}");
    // The same input maps to the same ids, so a re-import finds them.
    let mut again = SessionBuilder::new("x", true);
    again.push(1, record("", vec![]), None);
    assert_eq!(again.finish(long, None, None, &[]).records[0].entry_id, ids[0]);

    let bad = format!("{}\n{}", "é".repeat(600), "z");
    let session = SessionBuilder::new("x", true).finish(bad, None, None, &[]);
    assert!(usable_name(&session.name), "{:?}", session.name);
}

#[test]
fn a_record_over_the_block_limit_is_split_in_parts() {
    let texts = |n: usize| (0..n).map(|i| Block::Text { text: i.to_string() }).collect::<Vec<_>>();
    let mut builder = SessionBuilder::new("x", true);
    builder.push(1, record("big", texts(2 * BLOCKS_MAX + 1)), None);
    builder.push(2, record("next", texts(1)), None);
    let session = builder.finish("s".into(), None, None, &[]);
    let shape: Vec<(&str, usize)> =
        session.records.iter().map(|r| (r.entry_id.as_str(), r.blocks.len())).collect();
    assert_eq!(shape, [("big", BLOCKS_MAX), ("big/part-2", BLOCKS_MAX), ("big/part-3", 1), ("next", 1)]);
    assert_eq!(session.records[2].blocks, [Block::Text { text: (2 * BLOCKS_MAX).to_string() }]);
    assert_eq!(session.records[1].meta["partOf"], "\"big\"");
    assert_eq!(session.claimed_hashes.len(), 4);
}

#[test]
fn deep_meta_values_are_kept_as_text() {
    let deep = format!("{}{}", "[".repeat(META_NESTING_MAX + 1), "]".repeat(META_NESTING_MAX + 1));
    let value: Value = serde_json::from_str(&deep).unwrap_or(Value::Null);
    let shallow: Value = serde_json::from_str("[[1]]").unwrap_or(Value::Null);
    let mut meta = BTreeMap::new();
    put(&mut meta, "deep", &value);
    put(&mut meta, "shallow", &shallow);
    assert_eq!(meta["deep"], Value::String(deep).to_string());
    assert_eq!(meta["shallow"], "[[1]]");
}

#[test]
fn pairs_tools_derives_ids_and_renames_conflicting_duplicates() {
    let mut builder = SessionBuilder::new("x", true);
    builder.push(1, record("a", vec![call("c1", "Bash")]), None);
    builder.push(2, record("", vec![result("c1"), result("c9")]), None);
    builder.push(3, record("a", vec![call("c1", "Bash")]), None);
    builder.push(4, record("a", vec![call("c2", "Read")]), None);
    let session = builder.finish("s".into(), None, None, &[("k", "1".into())]);
    let ids: Vec<&str> = session.records.iter().map(|r| r.entry_id.as_str()).collect();
    assert_eq!(ids, ["a", "x:s:2", "a", "x:s:4"]);
    assert_eq!(
        session.records[1].blocks[0],
        Block::ToolResult { call_id: "c1".into(), tool: "Bash".into(), is_error: false, output: "ok".into() }
    );
    assert_eq!(session.records[1].blocks[1], result("c9"));
    assert!(session.records.iter().all(|r| r.meta.get("k").map(String::as_str) == Some("1")));
    assert_eq!(session.claimed_hashes, [None, None, None, None]);
}
