//! AnnalSaver against SqliteSaver (`@langchain/langgraph-checkpoint-sqlite`, the file-backed
//! checkpointer a LangGraph.js user would pick), at the same durability: each commit synced
//! before it returns (annal's appends are; SQLite with `synchronous=FULL`). One run measures,
//! for each, a graph step's `put` + `putWrites` and `getTuple` of the latest checkpoint, and
//! prints their medians and annal's speed relative to SQLite (above 1.0: annal is faster).
//!
//! `node dist/bench/saver.js [STEPS]` (default 200), after `npm run build`.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";

import type { BaseCheckpointSaver, Checkpoint } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

import { AnnalSaver } from "../lib/langgraph";

interface Figures {
  stepMs: number;
  getTupleMs: number;
}

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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(saver: BaseCheckpointSaver<any>, steps: number): Promise<Figures> {
  const threadId = "bench";
  let config = { configurable: { thread_id: threadId, checkpoint_ns: "" } } as Record<string, any>;
  let previous: Checkpoint | undefined;
  const stepTimes: number[] = [];
  for (let step = 0; step < steps; step += 1) {
    const checkpoint = checkpointAt(step, previous);
    const started = performance.now();
    config = await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, {
      messages: step + 1,
      step: step + 1,
    });
    await saver.putWrites(config, [["messages", `reply ${step}`]], `task-${step}`);
    stepTimes.push(performance.now() - started);
    previous = checkpoint;
  }
  const reads: number[] = [];
  for (let n = 0; n < steps; n += 1) {
    const started = performance.now();
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
    reads.push(performance.now() - started);
    if (tuple?.checkpoint.id !== previous?.id) {
      throw new Error("getTuple did not return the latest checkpoint");
    }
  }
  return { stepMs: median(stepTimes), getTupleMs: median(reads) };
}

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 200);
  const folder = mkdtempSync(path.join(tmpdir(), "annal-bench-"));
  try {
    const annal = new AnnalSaver(path.join(folder, "annal.redb"));
    const ours = await run(annal, steps);
    await annal.close();
    const sqlite = SqliteSaver.fromConnString(path.join(folder, "sqlite.db"));
    // The same durability as annal's appends: every commit synced before it returns.
    (sqlite as unknown as { db: { pragma(text: string): unknown } }).db.pragma("synchronous = FULL");
    const theirs = await run(sqlite, steps);
    const show = (ms: number) => `${ms.toFixed(3)} ms`;
    console.log(`steps: ${steps}`);
    console.log(`put+putWrites per step (p50): annal ${show(ours.stepMs)}, SqliteSaver ${show(theirs.stepMs)}, ratio ${(theirs.stepMs / ours.stepMs).toFixed(2)}x`);
    console.log(`getTuple latest (p50): annal ${show(ours.getTupleMs)}, SqliteSaver ${show(theirs.getTupleMs)}, ratio ${(theirs.getTupleMs / ours.getTupleMs).toFixed(2)}x`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
