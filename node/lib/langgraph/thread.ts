//! One LangGraph thread as annal keeps it, in the layout of the Python package's
//! `annal.langgraph` (so a thread written from either language reads from the other): the names
//! of its annal sessions (its generations), the records a checkpointer appends to them, and
//! `ThreadLog`, the index of a thread's live checkpoints, channel values and pending writes,
//! built by reading those records in order.
//!
//! A thread lives in the sessions `langgraph:<thread_id>` (generation 0) and
//! `langgraph:<thread_id>~g<N>`. A generation is a fork of one before it: at a checkpoint when
//! a second child of it is put (time travel), so each branch is one session sharing the records
//! before the branch point by reference; or at 0 when the thread is deleted. Every record carries
//! its part in `meta.langgraph`: a checkpoint (with the values of the channel versions new at
//! it), a task's writes, a drop receipt or a delete receipt. Nothing is rewritten.

import { compareWritesSortKeys, writesSortKey } from "@langchain/langgraph-checkpoint";

import type { Block, SessionInfo, Store } from "../store";

/** The metadata key of every record a checkpointer appends. */
export const META_KEY = "langgraph";
/** What every thread's session name starts with. */
export const SESSION_PREFIX = "langgraph:";
/** What separates a thread's session name from the number of a later generation. */
export const GENERATION_MARK = "~g";
/** Values longer than this go to the store's blob table, stored once by their hash; shorter
 * ones stay in their record's metadata. */
export const BLOB_BYTES = 16 * 1024;

/** A value as a serializer's `dumpsTyped` gives it: [type, bytes]. */
export type Typed = [string, Uint8Array];
/** A typed value as a record keeps it: [type, base64], or [type, null, block index]. */
export type Packed = [string, string] | [string, null, number];

/** The annal session holding `generation` of the thread `threadId`. `%` and `~` in the id are
 * escaped, so no thread's name is another's generation. */
export function threadSession(threadId: string, generation = 0): string {
  const name = SESSION_PREFIX + String(threadId).replaceAll("%", "%25").replaceAll("~", "%7E");
  return generation === 0 ? name : `${name}${GENERATION_MARK}${generation}`;
}

/** The thread whose generation 0 is the session `name`; undefined for any other name. */
export function threadOfSession(name: string): string | undefined {
  if (!name.startsWith(SESSION_PREFIX) || name.includes(GENERATION_MARK)) {
    return undefined;
  }
  return name.slice(SESSION_PREFIX.length).replaceAll("%7E", "~").replaceAll("%25", "%");
}

/** The next version of a channel: its number, then a random fraction, so versions of two
 * branches of one thread never meet (as the Python savers make them: a thread crosses languages
 * with its versions). */
export function nextVersion(current: number | string | undefined): string {
  const number = current === undefined ? 0 : typeof current === "number" ? current : Number.parseInt(current.split(".")[0], 10);
  return `${String(number + 1).padStart(32, "0")}.${String(Math.random()).padStart(16, "0")}`;
}

export function pack(typed: Typed): [string, string] {
  return [typed[0], Buffer.from(typed[1]).toString("base64")];
}

/** A channel value as its checkpoint record keeps it: inline, or past `BLOB_BYTES` as a blob
 * block added to `blocks` and named by its index. */
export function packValue(typed: Typed, blocks: Block[]): Packed {
  if (typed[1].length <= BLOB_BYTES) {
    return pack(typed);
  }
  const data = Buffer.from(typed[1]).toString("base64");
  blocks.push({ type: "blob", mediaType: "application/octet-stream", data });
  return [typed[0], null, blocks.length - 1];
}

export function unpack(packed: Packed, blocks: ReadonlyArray<Block> = []): Typed {
  if (packed.length === 3) {
    return [packed[0], Buffer.from(String(blocks[packed[2]].data), "base64")];
  }
  return [packed[0], Buffer.from(packed[1], "base64")];
}

/** The text of each JSON value read so far, by its bytes. */
const TEXTS = new WeakMap<Uint8Array, string>();
const DECODER = new TextDecoder();

/** A typed value as a serializer's `loadsTyped` takes it: a JSON value as its text, decoded
 * once and kept while its bytes are (the latest checkpoint's values are read at every
 * `getTuple`, and decoding their UTF-8 took twice as long as parsing them); any other type as
 * its bytes. */
export function loadable(typed: Typed): Uint8Array | string {
  if (typed[0] !== "json") {
    return typed[1];
  }
  let text = TEXTS.get(typed[1]);
  if (text === undefined) {
    text = DECODER.decode(typed[1]);
    TEXTS.set(typed[1], text);
  }
  return text;
}

/** One checkpoint as stored: where its record is, and what it holds (still serialized). */
export interface Checkpoint {
  ns: string;
  id: string;
  parent: string | null;
  checkpoint: Typed;
  metadata: Typed;
  generation: number;
  position: number;
  /** The (channel, version) pairs whose values this checkpoint's record holds. */
  values: Array<[string, string | number]>;
}

/** One annal session of the thread: its name, what it forks, and how far it was read. */
export interface Generation {
  name: string;
  parent: number | null;
  forkAt: number;
  read: number;
}

/** A stored write: task, channel, value, task path. */
export type Write = [string, string, Typed, string];

/** A key of two strings (namespace and id, say). */
export function key(...parts: Array<string | number>): string {
  return JSON.stringify(parts);
}

/** The live state of one thread, read from its generations' records in order. */
export class ThreadLog {
  generations: Generation[] = [];
  checkpoints = new Map<string, Checkpoint>();
  children = new Map<string, Array<[number, number]>>();
  blobs = new Map<string, [number, Typed]>();
  writes = new Map<string, Map<string, Write & { index: number }>>();
  dropped = new Set<string>();
  /** The newest generation ending in a delete receipt: it and those before it are dead. */
  floor = -1;
  /** The store's mark when a refresh last read every generation (null until then, and while a
   * refresh runs): while the store still has it, there is nothing new to read. */
  private mark: string | null = null;

  constructor(readonly threadId: string) {}

  /** Reads what was appended since the last refresh, in this process or another: the length
   * of every generation and whether the next exists, in one call, then the new records. When
   * the store says nothing changed since the last refresh read it, on this thread, nothing is
   * read: a read of the latest checkpoint then never leaves the JavaScript thread. */
  async refresh(store: Store): Promise<void> {
    if (this.mark !== null && store.unchangedSince(this.mark)) {
      return;
    }
    this.mark = null;
    for (;;) {
      const [mark, facts] = await store.sessionsMarked(this.names());
      for (let index = 0; index < this.generations.length; index += 1) {
        await this.read(store, index, facts[index]?.records ?? 0);
      }
      const next = facts[facts.length - 1];
      if (next === null) {
        // Every generation was read to where this snapshot had it, and it had no next one.
        this.mark = mark;
        return;
      }
      const parent = this.generations.findIndex((g) => g.name === next.parent);
      const forkAt = next.forkAt ?? 0;
      this.generations.push({ name: next.name, parent: parent < 0 ? null : parent, forkAt, read: forkAt });
      await this.read(store, this.generations.length - 1, next.records);
    }
  }

  /** The name of every generation, then of each of `making` (made by an append under way), then
   * of the one after them. */
  names(making: string[] = []): string[] {
    const names = [...this.generations.map((g) => g.name), ...making];
    return [...names, threadSession(this.threadId, names.length)];
  }

  /** After a write of this saver's, applied here: takes `mark` as the last refresh's when
   * `facts` (of every generation and the name after them, read in the snapshot `mark` is of)
   * show nothing this log has not read, so the next read of an unchanged store stays on the
   * JavaScript thread; otherwise the next refresh reads. */
  settle(mark: string | null, facts: Array<SessionInfo | null>): void {
    this.mark = null;
    const count = this.generations.length;
    if (mark === null || facts.length !== count + 1 || facts[count] !== null) {
      return;
    }
    if (this.generations.every((generation, index) => facts[index]?.records === generation.read)) {
      this.mark = mark;
    }
  }

  private async read(store: Store, index: number, length: number): Promise<void> {
    const generation = this.generations[index];
    if (length <= generation.read) {
      return;
    }
    for (const record of await store.records(generation.name, generation.read, length)) {
      const part = (record.meta ?? {})[META_KEY];
      this.apply(index, Number(record.sourceOrder), part, record.blocks ?? []);
    }
    generation.read = length;
  }

  /** Takes one record's part (and its blocks) into the index; records of other kinds are
   * passed over. */
  apply(generation: number, position: number, part: unknown, blocks: ReadonlyArray<Block>): void {
    if (part === null || typeof part !== "object" || generation <= this.floor) {
      return;
    }
    const p = part as Record<string, any>;
    switch (p.kind) {
      case "checkpoint":
        this.applyCheckpoint(generation, position, p, blocks);
        break;
      case "writes":
        this.applyWrites(p);
        break;
      case "drop":
        for (const [ns, id] of p.checkpoints as Array<[string, string]>) {
          this.drop(ns, id);
        }
        break;
      case "delete":
        this.delete(generation);
        break;
    }
  }

  private applyCheckpoint(generation: number, position: number, p: Record<string, any>, blocks: ReadonlyArray<Block>) {
    const ns: string = p.ns;
    const values: Array<[string, string | number]> = [];
    for (const [channel, version, packed] of p.values as Array<[string, string | number, Packed]>) {
      this.blobs.set(key(ns, channel, version), [generation, unpack(packed, blocks)]);
      values.push([channel, version]);
    }
    if (this.dropped.has(key(ns, p.id))) {
      return;
    }
    const entry: Checkpoint = {
      ns,
      id: p.id,
      parent: p.parent ?? null,
      checkpoint: unpack(p.checkpoint),
      metadata: unpack(p.metadata),
      generation,
      position,
      values,
    };
    this.checkpoints.set(key(ns, p.id), entry);
    if (entry.parent !== null) {
      const siblings = this.children.get(key(ns, entry.parent)) ?? [];
      siblings.push([generation, position]);
      this.children.set(key(ns, entry.parent), siblings);
    }
  }

  private applyWrites(p: Record<string, any>): void {
    const at = key(p.ns, p.checkpoint);
    if (this.dropped.has(at)) {
      return;
    }
    const stored = this.writes.get(at) ?? new Map();
    this.writes.set(at, stored);
    for (const [index, channel, packed] of p.writes as Array<[number, string, Packed]>) {
      const inner = key(p.task, index);
      if (index >= 0 && stored.has(inner)) {
        continue;
      }
      const write = [p.task, channel, unpack(packed), p.path ?? ""] as Write & { index: number };
      write.index = index;
      stored.set(inner, write);
    }
  }

  private drop(ns: string, id: string): void {
    this.dropped.add(key(ns, id));
    this.checkpoints.delete(key(ns, id));
    this.writes.delete(key(ns, id));
  }

  private delete(generation: number): void {
    this.floor = Math.max(this.floor, generation);
    for (const [at, entry] of this.checkpoints) {
      if (entry.generation <= generation) {
        this.checkpoints.delete(at);
        this.writes.delete(at);
      }
    }
    for (const [at, blob] of this.blobs) {
      if (blob[0] <= generation) {
        this.blobs.delete(at);
      }
    }
    for (const at of this.writes.keys()) {
      if (!this.checkpoints.has(at)) {
        this.writes.delete(at);
      }
    }
    this.children = new Map();
    for (const entry of this.checkpoints.values()) {
      if (entry.parent !== null) {
        const siblings = this.children.get(key(entry.ns, entry.parent)) ?? [];
        siblings.push([entry.generation, entry.position]);
        this.children.set(key(entry.ns, entry.parent), siblings);
      }
    }
  }

  // Questions the saver asks.

  /** Whether the record at `position` of `generation` is in the view of generation `viewer`
   * (its own records, and those it inherits by its forks). */
  visible(generation: number, position: number, viewer: number): boolean {
    let limit: number | undefined;
    let current: number | null = viewer;
    while (current !== null) {
      if (current === generation) {
        return limit === undefined || position < limit;
      }
      const own: Generation = this.generations[current];
      limit = limit === undefined ? own.forkAt : Math.min(limit, own.forkAt);
      current = own.parent;
    }
    return false;
  }

  /** Whether a checkpoint whose parent is `id` is in `viewer`'s view. */
  hasChild(ns: string, id: string, viewer: number): boolean {
    return (this.children.get(key(ns, id)) ?? []).some(([g, p]) => this.visible(g, p, viewer));
  }

  /** The newest generation (-1 when the thread has none). */
  head(): number {
    return this.generations.length - 1;
  }

  /** The live checkpoint of `ns` with the greatest id, as LangGraph's savers choose. */
  latest(ns: string): Checkpoint | undefined {
    let best: Checkpoint | undefined;
    for (const entry of this.checkpoints.values()) {
      if (entry.ns === ns && (best === undefined || entry.id > best.id)) {
        best = entry;
      }
    }
    return best;
  }

  /** Every namespace with a live checkpoint, in order of first appearance. */
  namespaces(): string[] {
    return [...new Set([...this.checkpoints.values()].map((entry) => entry.ns))];
  }

  /** A checkpoint's pending writes, in the order LangGraph's savers return them. */
  orderedWrites(ns: string, id: string): Write[] {
    const stored = [...(this.writes.get(key(ns, id))?.values() ?? [])];
    const keyed = stored.map((write) => ({ write, sort: writesSortKey(write[3], write[0], write.index) }));
    keyed.sort((a, b) => compareWritesSortKeys(a.sort, b.sort));
    return keyed.map(({ write }) => write);
  }
}
