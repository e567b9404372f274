//! `Store` over the addon: what is appended reads back, is found by search and by id, forks
//! share it, exports and verifies; each failure is an instance of its kind's class.

import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import {
  AnnalError,
  BadInputError,
  ClosedError,
  ConflictError,
  ERROR_CLASSES,
  NotFoundError,
  Store,
  native,
} from "../lib";
import { TEXTS, scratch } from "./support";

test("records read back as appended, searchable, forkable, exported and verified", async () => {
  const { folder, remove } = scratch();
  try {
    const store = await Store.open(path.join(folder, "s.redb"));
    const records = TEXTS.map((text, n) => ({
      entryId: `e${n}`,
      role: n % 2 === 0 ? ("user" as const) : ("assistant" as const),
      blocks: [{ type: "text", text }],
    }));
    const receipt = await store.append("chat", records, { expectedNext: 0 });
    assert.deepEqual(receipt, { appended: TEXTS.length, next: TEXTS.length, sourceOrders: [0, 1, 2, 3, 4, 5] });
    const read = await store.records("chat");
    assert.deepEqual(
      read.map((r) => (r.blocks ?? [])[0].text),
      TEXTS,
    );
    const hits = await store.search("把索引的提交合并到一个事务里");
    assert.equal(hits[0]?.entryId, "e2");
    const original = await store.get("e3#0");
    assert.equal((original.blocks as Array<{ text: string }>)[0].text, TEXTS[3]);
    const fork = await store.fork("chat", 2, "chat-retry");
    assert.equal(fork.parent, "chat");
    assert.equal((await store.records("chat-retry")).length, 2);
    assert.match(await store.export("chat", { format: "markdown" }), /🦀🚀/);
    assert.equal((await store.verify()).ok, true);
    const names = (await store.sessions()).map((s) => s.name);
    assert.deepEqual(names, ["chat", "chat-retry"]);
    assert.equal(await store.close(), true);
  } finally {
    remove();
  }
});

test("each failure is an Error of its kind's class, with the command line's line", async () => {
  const { folder, remove } = scratch();
  try {
    const file = path.join(folder, "s.redb");
    const store = await Store.open(file);
    await store.append("chat", [{ role: "user", blocks: [{ type: "text", text: "hi" }] }]);
    const stale = store.append("chat", [{ role: "user", blocks: [{ type: "text", text: "again" }] }], {
      expectedNext: 0,
    });
    await assert.rejects(stale, (error: unknown) => {
      assert.ok(error instanceof ConflictError && error instanceof AnnalError && error instanceof Error);
      assert.equal(error.expected, 0);
      assert.equal(error.actual, 1);
      assert.equal(error.kind, "conflict");
      assert.ok(error.message.startsWith(file), error.message);
      return true;
    });
    // Nothing of the refused batch was stored.
    assert.equal((await store.records("chat")).length, 1);
    await assert.rejects(store.get("no-such-entry"), NotFoundError);
    await assert.rejects(store.records("no such session"), NotFoundError);
    await assert.rejects(store.append("chat", [{ role: "narrator" } as never]), BadInputError);
    await assert.rejects(store.search("x", { limit: -1 }), BadInputError);
    await assert.rejects(store.search("x", { role: "robot" as never }), /role "robot"/);
    await store.close();
    await assert.rejects(store.sessions(), ClosedError);
    assert.equal(await store.close(), true);
  } finally {
    remove();
  }
});

test("every kind the addon reports has its class", () => {
  const kinds = native.errorKinds();
  assert.equal(kinds.length, 12);
  for (const name of kinds) {
    assert.ok(name in ERROR_CLASSES, name);
  }
});

test("a call's work runs off the JavaScript thread", async () => {
  const { folder, remove } = scratch();
  try {
    const store = await Store.open(path.join(folder, "s.redb"));
    // While a batch of appends (each fsynced) runs, the event loop keeps turning: a timer
    // set after the calls began fires before they all finish.
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 0);
    const appends = [];
    for (let n = 0; n < 50; n += 1) {
      appends.push(store.append(`s${n}`, [{ role: "user", blocks: [{ type: "text", text: TEXTS[5] }] }]));
    }
    let settledTicks = -1;
    await Promise.all(appends).then(() => (settledTicks = ticks));
    clearInterval(timer);
    assert.ok(settledTicks > 0, "the event loop did not turn while the appends ran");
    await store.close();
  } finally {
    remove();
  }
});
