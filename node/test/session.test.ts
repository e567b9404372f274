//! `AnnalSession` against the SDK's own `MemorySession`: the same seeded random operations give
//! the same answers; a run in one process is continued by a run in another; what a pop or a
//! clear took away stays searchable; with a window, `getItems()` is the projection.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";

import { MemorySession } from "@openai/agents-core";

import { AnnalSession, BadInputError, ClosedError, Store } from "../lib";
import { answer } from "./scripted";
import { TEXTS, scratch, seeded } from "./support";

/** A random item of the kinds a run stores: messages, tool calls and their outputs. */
function randomItem(random: () => number, n: number): Record<string, unknown> {
  const text = `${TEXTS[Math.floor(random() * (TEXTS.length - 1))]} #${n}`;
  switch (Math.floor(random() * 4)) {
    case 0:
      return { role: "user", content: text };
    case 1:
      return {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text }],
      };
    case 2:
      return { type: "function_call", callId: `c${n}`, name: "grep", arguments: JSON.stringify({ q: text }), status: "completed" };
    default:
      return { type: "function_call_result", callId: `c${n}`, name: "grep", status: "completed", output: { type: "text", text } };
  }
}

for (const seed of [1, 2, 3]) {
  test(`AnnalSession answers as MemorySession does (seed ${seed}, 300 operations)`, async () => {
    const { folder, remove } = scratch();
    const store = await Store.open(path.join(folder, "s.redb"));
    try {
      const random = seeded(seed);
      const ours = new AnnalSession(store, `diff-${seed}`);
      const theirs = new MemorySession({ sessionId: `diff-${seed}` });
      for (let op = 0; op < 300; op += 1) {
        const roll = random();
        let what: string;
        let mine: unknown;
        let expected: unknown;
        if (roll < 0.4) {
          const items = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, k) => randomItem(random, op * 10 + k));
          what = "addItems";
          mine = await ours.addItems(items.map((item) => structuredClone(item)) as never);
          expected = await theirs.addItems(items as never);
        } else if (roll < 0.6) {
          what = "getItems()";
          mine = await ours.getItems();
          expected = await theirs.getItems();
        } else if (roll < 0.8) {
          const limit = Math.floor(random() * 8) - 1;
          what = `getItems(${limit})`;
          mine = await ours.getItems(limit);
          expected = await theirs.getItems(limit);
        } else if (roll < 0.97) {
          what = "popItem";
          mine = await ours.popItem();
          expected = await theirs.popItem();
        } else {
          what = "clearSession";
          mine = await ours.clearSession();
          expected = await theirs.clearSession();
        }
        assert.deepEqual(mine, expected, `operation ${op} (${what}) of seed ${seed}`);
      }
      assert.equal((await store.verify()).ok, true);
    } finally {
      await store.close();
      remove();
    }
  });
}

test("what a pop or a clear took away stays in the store, found by search", async () => {
  const { folder, remove } = scratch();
  const store = await Store.open(path.join(folder, "s.redb"));
  try {
    const session = new AnnalSession(store, "chat");
    await session.addItems([
      { role: "user", content: "把索引的提交合并" },
      { role: "user", content: "the fjord plan 🦀" },
    ]);
    assert.deepEqual(await session.popItem(), { role: "user", content: "the fjord plan 🦀" });
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
    const hits = await session.search("fjord");
    assert.equal(hits.length, 1);
    assert.equal(hits[0].session, "chat");
    // Each record once, though every later generation inherits the first one's.
    const both = await session.search("把索引的提交合并 OR fjord");
    assert.deepEqual(both.map((hit) => hit.snippet).sort(), ["the fjord plan 🦀", "把索引的提交合并"]);
    // Every generation is a session of its own, each a fork of the one before.
    const names = (await store.sessions()).map((s) => `${s.name}<${s.parent ?? ""}`);
    assert.deepEqual(names, ["chat<", "chat~pop1<chat", "chat~pop2<chat~pop1"]);
    await session.close();
    await assert.rejects(session.getItems(), ClosedError);
  } finally {
    await store.close();
    remove();
  }
});

test("with a window, getItems() is the projection under it, and a limit is still verbatim", async () => {
  const { folder, remove } = scratch();
  const store = await Store.open(path.join(folder, "s.redb"));
  try {
    const session = new AnnalSession(store, "long", { window: 8_000, maxOutput: 1_000 });
    for (let turn = 0; turn < 40; turn += 1) {
      await session.addItems([
        { role: "user", content: `turn ${turn}: ${TEXTS[turn % 5]}` },
        { type: "function_call", callId: `c${turn}`, name: "cat", arguments: "{}", status: "completed" },
        { type: "function_call_result", callId: `c${turn}`, name: "cat", status: "completed", output: { type: "text", text: TEXTS[5] } },
      ]);
    }
    const all = await new AnnalSession(store, "long").getItems();
    assert.equal(all.length, 120);
    const projected = await session.getItems();
    assert.ok(projected.length < all.length, `${projected.length} of ${all.length}`);
    const chars = JSON.stringify(projected).length;
    assert.ok(chars / 4 < 8_000, `the projection holds about ${chars / 4} tokens`);
    assert.deepEqual(await session.getItems(3), all.slice(-3));
    assert.throws(() => new AnnalSession(store, "bad~pop1"), BadInputError);
    assert.throws(() => new AnnalSession(store, "s", { window: 100, maxOutput: 90 }), BadInputError);
  } finally {
    await store.close();
    remove();
  }
});

test("an Agents SDK run stores its items, and a run in a new process continues from them", async () => {
  const { folder, remove } = scratch();
  try {
    const store = path.join(folder, "runs.redb");
    const script = path.join(__dirname, "agents_run.js");
    const first = execFileSync(process.execPath, [script, store, "trip", "weather in Zürich"], { encoding: "utf8" });
    // The first run's model saw the question, its tool call and the call's output.
    assert.equal(first.trim(), answer("sunny in Zürich", 3));
    const second = execFileSync(process.execPath, [script, store, "trip", "and in 東京"], { encoding: "utf8" });
    // The second saw the first run's four items too (question, call, output, answer).
    assert.equal(second.trim(), answer("sunny in 東京", 7));
    // Each item is a record of its role, the SDK's tool calls and results as tool blocks, so
    // search, projections and the viewer see them as any agent's.
    const opened = await Store.open(store);
    const records = await opened.records("trip");
    const shapes = records.map((r) => `${r.role}:${(r.blocks ?? []).map((b) => b.type).join(",")}`);
    const turn = ["user:text", "assistant:toolCall", "tool:toolResult", "assistant:text"];
    assert.deepEqual(shapes, [...turn, ...turn]);
    const hits = await opened.search("sunny", { tool: "weather" });
    assert.deepEqual(hits.map((hit) => hit.snippet).sort(), ["sunny in Zürich", "sunny in 東京"]);
    await opened.close();
  } finally {
    remove();
  }
});
