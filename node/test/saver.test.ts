//! `AnnalSaver` reads: a read answered on the JavaScript thread, from what the saver read
//! before (or learnt with its own put), only while the store says nothing changed since; what
//! another handle on the store (as another process) puts is read at the next call; and a value
//! read back is what was put.

import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import type { Checkpoint } from "@langchain/langgraph-checkpoint";

import { Store } from "../lib";
import { AnnalSaver } from "../lib/langgraph";
import { TEXTS, scratch } from "./support";

const THREAD = { configurable: { thread_id: "t", checkpoint_ns: "" } };

/** Checkpoint `step`, its messages the texts transcripts hold, a counter. */
function checkpointAt(step: number): Checkpoint {
  return {
    v: 4,
    id: `1f0${String(step).padStart(9, "0")}-0000-6000-8000-000000000000`,
    ts: new Date(1_700_000_000_000 + step * 1000).toISOString(),
    channel_values: { messages: TEXTS.map((text) => `${step}: ${text}`), step },
    channel_versions: { messages: step + 1, step: step + 1 },
    versions_seen: {},
  };
}

async function put(saver: AnnalSaver, step: number, parent?: string): Promise<void> {
  const config = { configurable: { ...THREAD.configurable, ...(parent ? { checkpoint_id: parent } : {}) } };
  await saver.put(config, checkpointAt(step), { source: "loop", step, parents: {} }, { messages: step + 1, step: step + 1 });
}

test("a store's mark holds until a session changes, in this handle or another", async () => {
  const { folder, remove } = scratch();
  try {
    const file = path.join(folder, "marks.redb");
    const store = await Store.open(file);
    const other = await Store.open(file);
    await store.append("s", [{ role: "user", blocks: [{ type: "text", text: TEXTS[2] }] }]);
    const [mark, facts] = await store.sessionsMarked(["s", "absent"]);
    assert.equal(typeof mark, "string");
    assert.deepEqual(facts.map((f) => f?.records ?? null), [1, null]);
    assert.equal(store.unchangedSince(mark as string), true);
    await store.records("s");
    assert.equal(store.unchangedSince(mark as string), true, "reading changes nothing");

    await other.append("s", [{ role: "assistant", blocks: [{ type: "text", text: TEXTS[3] }] }]);
    assert.equal(store.unchangedSince(mark as string), false, "the other handle's append is seen");
    const [later] = await store.sessionsMarked(["s"]);
    assert.equal(store.unchangedSince(later as string), true);
    await other.fork("s", 1, "s~1");
    assert.equal(store.unchangedSince(later as string), false, "a fork changes it too");

    for (const garbage of ["", "mark", "€".repeat(10) + "ab", "0".repeat(33)]) {
      assert.equal(store.unchangedSince(garbage), false, garbage);
    }
    await other.close();
    await store.close();
    assert.equal(store.unchangedSince(later as string), false, "a closed store tells nothing");
  } finally {
    remove();
  }
});

test("getTuple answers from what it read only until another handle puts", async () => {
  const { folder, remove } = scratch();
  try {
    const file = path.join(folder, "saver.redb");
    // No search index: the test reads the journal only, and no indexer of either handle is
    // left writing beside the store while the folder is removed.
    const ours = new AnnalSaver(file, { indexEagerly: false });
    await ours.store(); // made before the second handle opens it
    const theirs = new AnnalSaver(file, { indexEagerly: false });
    // Each trip to the thread pool to read the thread again, counted.
    const store = await ours.store();
    const reread = store.sessionsMarked.bind(store);
    let trips = 0;
    store.sessionsMarked = (names) => {
      trips += 1;
      return reread(names);
    };
    await put(ours, 0);
    await put(ours, 1, checkpointAt(0).id);
    for (let read = 0; read < 3; read += 1) {
      const tuple = await ours.getTuple(THREAD);
      assert.equal(tuple?.checkpoint.id, checkpointAt(1).id);
      assert.deepEqual(tuple?.checkpoint.channel_values.messages, checkpointAt(1).channel_values.messages);
    }
    assert.equal(trips, 1, "only the first put reads the thread: the rest answer from what was read");
    // Another handle on the file, as another process: its put is read at the next call.
    assert.equal((await theirs.getTuple(THREAD))?.checkpoint.id, checkpointAt(1).id);
    await put(theirs, 2, checkpointAt(1).id);
    const after = await ours.getTuple(THREAD);
    assert.equal(trips, 2, "the other handle's put is read");
    assert.equal(after?.checkpoint.id, checkpointAt(2).id);
    assert.deepEqual(after?.checkpoint.channel_values, checkpointAt(2).channel_values);
    const listed = [];
    for await (const tuple of ours.list({ configurable: { thread_id: "t" } })) {
      listed.push(tuple.checkpoint.id);
    }
    assert.deepEqual(listed, [2, 1, 0].map((step) => checkpointAt(step).id));
    await theirs.close();
    await ours.close();
  } finally {
    remove();
  }
});

test("a JSON value that needs LangGraph's reviver still gets it", async () => {
  const { folder, remove } = scratch();
  try {
    const saver = new AnnalSaver(path.join(folder, "revive.redb"));
    const checkpoint = checkpointAt(0);
    // A Set, a Map and an undefined member are written as `lc: 2` records the reviver rebuilds;
    // a `__proto__` key and an escaped key are kept as they are.
    checkpoint.channel_values = {
      kinds: new Set(["中文", "🦀"]),
      seen: new Map([["e\u0301", 1]]),
      gone: { value: undefined, kept: TEXTS[1] },
      odd: JSON.parse('{"__proto__": {"x": 1}, "\\u006cc": 3}'),
    };
    checkpoint.channel_versions = { kinds: 1, seen: 1, gone: 1, odd: 1 };
    await saver.put(THREAD, checkpoint, { source: "input", step: -1, parents: {} }, checkpoint.channel_versions);
    const values = (await saver.getTuple(THREAD))?.checkpoint.channel_values as Record<string, any>;
    assert.deepEqual(values.kinds, new Set(["中文", "🦀"]));
    assert.deepEqual(values.seen, new Map([["e\u0301", 1]]));
    assert.deepEqual(values.gone, { value: undefined, kept: TEXTS[1] });
    assert.equal(values.odd.lc, 3);
    await saver.close();
  } finally {
    remove();
  }
});
