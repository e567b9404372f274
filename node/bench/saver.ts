//! AnnalSaver against SqliteSaver (`@langchain/langgraph-checkpoint-sqlite`, the file-backed
//! checkpointer a LangGraph.js user would pick), at the same durability: each commit synced
//! before it returns (annal's appends are; SQLite with `synchronous=FULL`). One run measures,
//! for each, a graph step's `put` + `putWrites`, `getTuple` of the latest checkpoint (after each
//! step, as a graph's next invocation reads it, and again and again once the thread is written),
//! and `list` of the thread (all of it, and its newest 10), and prints their medians and annal's speed
//! relative to SQLite (above 1.0: annal is faster). The reads alternate between the two savers,
//! call by call, so a change in the machine's load falls on both alike.
//!
//! `node dist/bench/saver.js [STEPS]` (default 200), after `npm run build`.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";

import type { BaseCheckpointSaver, Checkpoint } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

import { AnnalSaver } from "../lib/langgraph";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Saver = BaseCheckpointSaver<any>;

const THREAD = { configurable: { thread_id: "bench", checkpoint_ns: "" } };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A step's checkpoint: a conversation that grows by a message each step, and a counter. */
function checkpointAt(step: number, parent: Checkpoint | undefined): Checkpoint {
  const id = `1f0${String(step).padStart(9, "0")}-0000-6000-8000-000000000000`;
  const said = `step ${step}: 把索引的提交合并到一个事务里 🦀 ${"cargo test -p annal-query ".repeat(8)}`;
  return {
    v: 4,
    id,
    ts: new Date(1_700_000_000_000 + step * 1000).toISOString(),
    channel_values: { messages: [...((parent?.channel_values.messages as string[]) ?? []), said].slice(-20), step },
    channel_versions: { messages: step + 1, step: step + 1 },
    versions_seen: { agent: { messages: step } },
  };
}

/** Puts `steps` checkpoints and their writes, reading the latest after each step as a graph's
 * next invocation does: each step's time, each read's, and the last checkpoint's id. */
async function fill(saver: Saver, steps: number): Promise<[number[], number[], string]> {
  let config = { ...THREAD } as Record<string, any>;
  let previous: Checkpoint | undefined;
  const times: number[] = [];
  const reads: number[] = [];
  for (let step = 0; step < steps; step += 1) {
    const checkpoint = checkpointAt(step, previous);
    let started = performance.now();
    config = await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, {
      messages: step + 1,
      step: step + 1,
    });
    await saver.putWrites(config, [["messages", `reply ${step}`]], `task-${step}`);
    times.push(performance.now() - started);
    started = performance.now();
    await latest(saver, checkpoint.id);
    reads.push(performance.now() - started);
    previous = checkpoint;
  }
  return [times, reads, previous?.id ?? ""];
}

/** `read` of each saver `rounds` times, the two alternating: the times of each. */
async function alternate(savers: [Saver, Saver], rounds: number, read: (saver: Saver) => Promise<void>) {
  const times: [number[], number[]] = [[], []];
  for (let round = 0; round < rounds; round += 1) {
    for (const side of [0, 1] as const) {
      const started = performance.now();
      await read(savers[side]);
      times[side].push(performance.now() - started);
    }
  }
  return times.map(median) as [number, number];
}

/** The latest checkpoint, checked to be the one put last. */
async function latest(saver: Saver, id: string): Promise<void> {
  const tuple = await saver.getTuple(THREAD);
  if (tuple?.checkpoint.id !== id) {
    throw new Error("getTuple did not return the latest checkpoint");
  }
}

/** Every checkpoint of the thread (newest first), or its newest `limit`, checked by count. */
async function listed(saver: Saver, expected: number, limit?: number): Promise<void> {
  let count = 0;
  for await (const _ of saver.list({ configurable: { thread_id: "bench" } }, { limit })) {
    count += 1;
  }
  if (count !== expected) {
    throw new Error(`list gave ${count} checkpoints, not ${expected}`);
  }
}

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 200);
  const folder = mkdtempSync(path.join(tmpdir(), "annal-bench-"));
  try {
    const annal = new AnnalSaver(path.join(folder, "annal.redb"));
    const sqlite = SqliteSaver.fromConnString(path.join(folder, "sqlite.db"));
    // The same durability as annal's appends: every commit synced before it returns.
    (sqlite as unknown as { db: { pragma(text: string): unknown } }).db.pragma("synchronous = FULL");
    const [ourSteps, ourReads, id] = await fill(annal, steps);
    const [theirSteps, theirReads] = await fill(sqlite, steps);
    const savers: [Saver, Saver] = [annal, sqlite];
    const got = await alternate(savers, steps, (saver) => latest(saver, id));
    const all = await alternate(savers, Math.max(10, steps / 10), (saver) => listed(saver, steps));
    const newest = await alternate(savers, steps, (saver) => listed(saver, Math.min(10, steps), 10));
    await annal.close();
    const show = (ms: number) => `${ms.toFixed(3)} ms`;
    const line = (what: string, [ours, theirs]: [number, number]) =>
      console.log(`${what} (p50): annal ${show(ours)}, SqliteSaver ${show(theirs)}, ratio ${(theirs / ours).toFixed(2)}x`);
    console.log(`steps: ${steps}`);
    line("put+putWrites per step", [median(ourSteps), median(theirSteps)]);
    line("getTuple latest, after each step", [median(ourReads), median(theirReads)]);
    line("getTuple latest, unchanged thread", got);
    line(`list, all ${steps}`, all);
    line("list, newest 10", newest);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
