//! `AnnalSaver`: LangGraph.js's checkpointer interface (`BaseCheckpointSaver`) over an annal
//! store, in the Python `AnnalSaver`'s record layout. Every checkpoint, its metadata, the values
//! of its new channel versions and every task's writes are records appended to the thread's
//! annal session; time travel forks the session by reference; a delete is a receipt. Reads come
//! from a `ThreadLog` per thread, brought up to date from the store at each call, so several
//! processes (and the Python saver) can share one store.

import { isDeepStrictEqual } from "node:util";

import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint as LangGraphCheckpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  getCheckpointId,
  maxChannelVersion,
} from "@langchain/langgraph-checkpoint";

import { BadInputError, ConflictError } from "../errors";
import { type Block, type OpenOptions, type PortableRecord, type Receipt, type SessionInfo, Store } from "../store";
import { CrossLanguageSerializer } from "./serde";
import { MESSAGES_CHANNEL, knownMessages, messageRecord, newMessages } from "./messages";
import {
  type Checkpoint,
  type Packed,
  META_KEY,
  ThreadLog,
  type Typed,
  key,
  loadable,
  nextVersion,
  pack,
  packValue,
  threadOfSession,
  threadSession,
} from "./thread";

/** How often a change reads the thread again after another writer got in first. */
const RETRIES = 1000;

/** Makes the records of one change, given the thread's log, its session and where it ends. */
type Make = (log: ThreadLog, session: string, start: number) => Promise<PortableRecord[]>;

/** A LangGraph checkpointer keeping every thread in an annal store (an open `Store`, or the
 * path of one, opened and owned by this saver). `serde` defaults to LangGraph's
 * `JsonPlusSerializer`, reading Python's message ids as well (`CrossLanguageSerializer`). */
export class AnnalSaver extends BaseCheckpointSaver<number> {
  private readonly opened: Promise<Store>;
  private readonly ownsStore: boolean;
  private readonly logs = new Map<string, ThreadLog>();
  /** Each change and read runs alone, as the Python saver's lock makes them. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(store: Store | string, options: OpenOptions & { serde?: SerializerProtocol } = {}) {
    const { serde, ...open } = options;
    super(serde ?? new CrossLanguageSerializer());
    this.ownsStore = !(store instanceof Store);
    this.opened = store instanceof Store ? Promise.resolve(store) : Store.open(store, open);
    this.opened.catch(() => undefined);
  }

  /** The store this saver keeps its threads in. */
  store(): Promise<Store> {
    return this.opened;
  }

  /** Closes the store when this saver opened it (one given stays open for its owner). */
  async close(): Promise<void> {
    if (this.ownsStore) {
      await (await this.opened).close();
    }
  }

  private locked<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The thread's log, brought up to date (the caller holds the lock). */
  private async fresh(threadId: string): Promise<ThreadLog> {
    let log = this.logs.get(threadId);
    if (log === undefined) {
      log = new ThreadLog(threadId);
      this.logs.set(threadId, log);
    }
    await log.refresh(await this.opened);
    return log;
  }

  private async threads(): Promise<string[]> {
    const sessions = await (await this.opened).sessions();
    return sessions.map((info) => threadOfSession(info.name)).filter((id): id is string => id !== undefined);
  }

  /** Appends the records `make` returns to the session a record whose checkpoint parent is
   * `parent` belongs in (forking one when that makes a branch), retrying when another writer got
   * there first; applies the last record's part. */
  private async append(threadId: string, ns: string, parent: string | null, make: Make): Promise<ThreadLog> {
    const store = await this.opened;
    for (let attempt = 0; attempt < RETRIES; attempt += 1) {
      const log = await this.fresh(threadId);
      const target = await this.target(store, log, ns, parent);
      if (target === undefined) {
        continue; // another writer made that generation first: read it and decide again
      }
      let generation = log.generations[target];
      const name = generation?.name ?? threadSession(threadId, target);
      const start = generation?.read ?? 0;
      const records = await make(log, name, start);
      let answer: [Receipt, [string | null, Array<SessionInfo | null>]];
      try {
        answer = await store.appendMarked(name, records, { expectedNext: start }, log.names(generation ? [] : [name]));
      } catch (error) {
        if (error instanceof ConflictError) {
          continue;
        }
        throw error;
      }
      const [{ next }, after] = answer;
      if (generation === undefined) {
        generation = { name, parent: null, forkAt: 0, read: 0 };
        log.generations.push(generation);
      }
      const last = records[records.length - 1];
      log.apply(target, next - 1, (last.meta ?? {})[META_KEY], last.blocks ?? []);
      generation.read = next;
      log.settle(...after);
      return log;
    }
    throw new ConflictError(`thread ${JSON.stringify(threadId)}: other writers kept getting in first`);
  }

  /** The generation a record belongs in; a fork made for it when it starts a branch
   * (undefined when another writer made that fork's name first). */
  private async target(store: Store, log: ThreadLog, ns: string, parent: string | null) {
    const head = log.head();
    if (head < 0) {
      return 0;
    }
    if (head <= log.floor) {
      return this.fork(store, log, head, 0);
    }
    const entry = parent === null ? undefined : log.checkpoints.get(key(ns, parent));
    if (entry === undefined) {
      return head;
    }
    if (!log.hasChild(ns, entry.id, entry.generation)) {
      return entry.generation;
    }
    return this.fork(store, log, entry.generation, entry.position + 1);
  }

  private async fork(store: Store, log: ThreadLog, source: number, at: number): Promise<number | undefined> {
    const name = threadSession(log.threadId, log.generations.length);
    try {
      await store.fork(log.generations[source].name, at, name);
    } catch (error) {
      if (error instanceof BadInputError && (await store.session(name)) !== null) {
        return undefined;
      }
      throw error;
    }
    log.generations.push({ name, parent: source, forkAt: at, read: at });
    return log.generations.length - 1;
  }

  // Reading.

  private async tuple(log: ThreadLog, entry: Checkpoint, config?: RunnableConfig): Promise<CheckpointTuple> {
    const loads = (typed: Typed) => this.serde.loadsTyped(typed[0], loadable(typed));
    const checkpoint = (await loads(entry.checkpoint)) as LangGraphCheckpoint;
    const values: Record<string, unknown> = {};
    for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
      const blob = log.blobs.get(key(entry.ns, channel, version));
      if (blob !== undefined && blob[1][0] !== "empty") {
        values[channel] = await loads(blob[1]);
      }
    }
    const own = { thread_id: log.threadId, checkpoint_ns: entry.ns, checkpoint_id: entry.id };
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const [task, channel, value] of log.orderedWrites(entry.ns, entry.id)) {
      pendingWrites.push([task, channel, await loads(value)]);
    }
    const found: CheckpointTuple = {
      config: config ?? { configurable: own },
      checkpoint: { ...checkpoint, channel_values: values },
      metadata: (await loads(entry.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (entry.parent) {
      found.parentConfig = { configurable: { ...own, checkpoint_id: entry.parent } };
      if (checkpoint.v < 4) {
        await this.migratePendingSends(log, entry, found.checkpoint);
      }
    }
    return found;
  }

  /** A checkpoint of a version before 4 holds its parent's pending sends as a channel. */
  private async migratePendingSends(log: ThreadLog, entry: Checkpoint, checkpoint: LangGraphCheckpoint) {
    const sends = [];
    for (const [, channel, value] of log.orderedWrites(entry.ns, entry.parent ?? "")) {
      if (channel === TASKS) {
        sends.push(await this.serde.loadsTyped(value[0], loadable(value)));
      }
    }
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** The checkpoint `config` names, or the thread's latest in its namespace. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined) {
      return undefined;
    }
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const checkpointId = getCheckpointId(config);
    return this.locked(async () => {
      const log = await this.fresh(String(threadId));
      const entry = checkpointId ? log.checkpoints.get(key(ns, checkpointId)) : log.latest(ns);
      return entry === undefined ? undefined : this.tuple(log, entry, checkpointId ? config : undefined);
    });
  }

  /** The checkpoints of `config`'s thread (every thread's without one), newest first in each
   * namespace, whose metadata has every `filter` item, before `before`'s. */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let limit = options.limit;
    const configurable = config?.configurable ?? {};
    const threads = configurable.thread_id !== undefined ? [String(configurable.thread_id)] : await this.locked(() => this.threads());
    const onlyNs: string | undefined = configurable.checkpoint_ns;
    const onlyId: string | undefined = configurable.checkpoint_id;
    const beforeId: string | undefined = before?.configurable?.checkpoint_id;
    for (const threadId of threads) {
      const tuples = await this.locked(async () => {
        const log = await this.fresh(threadId);
        const chosen: CheckpointTuple[] = [];
        for (const ns of onlyNs === undefined ? log.namespaces() : [onlyNs]) {
          const entries = [...log.checkpoints.values()].filter((e) => e.ns === ns).sort((a, b) => (a.id < b.id ? 1 : -1));
          for (const entry of entries) {
            if ((onlyId && entry.id !== onlyId) || (beforeId && entry.id >= beforeId)) {
              continue;
            }
            if (filter) {
              const metadata = (await this.serde.loadsTyped(entry.metadata[0], loadable(entry.metadata))) as Record<string, unknown>;
              if (!Object.entries(filter).every(([name, value]) => isDeepStrictEqual(metadata?.[name], value))) {
                continue;
              }
            }
            if (limit !== undefined) {
              if (limit <= 0) {
                return chosen;
              }
              limit -= 1;
            }
            chosen.push(await this.tuple(log, entry));
          }
        }
        return chosen;
      });
      yield* tuples;
      if (limit !== undefined && limit <= 0) {
        return;
      }
    }
  }

  /** The annal session of the branch holding the checkpoint `config` names (the thread's
   * latest root checkpoint without one): where its conversation reads in order. */
  async branchSession(config: RunnableConfig): Promise<string | undefined> {
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const checkpointId = getCheckpointId(config);
    return this.locked(async () => {
      const log = await this.fresh(String(config.configurable?.thread_id));
      const entry = checkpointId ? log.checkpoints.get(key(ns, checkpointId)) : log.latest(ns);
      return entry === undefined ? undefined : log.generations[entry.generation].name;
    });
  }

  // Writing.

  /** Appends a checkpoint, the values of its new channel versions and a record of each new
   * message, as one batch; returns the checkpoint's config. */
  async put(
    config: RunnableConfig,
    checkpoint: LangGraphCheckpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined) {
      throw new BadInputError('put: the config has no "thread_id" in its "configurable"');
    }
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const parent: string | null = config.configurable?.checkpoint_id ?? null;
    const { channel_values: values, ...rest } = checkpoint;
    const blocks: Block[] = [];
    const packed: Array<[string, string | number, Packed]> = [];
    for (const [channel, version] of Object.entries(newVersions)) {
      const typed: Typed = channel in values ? await this.serde.dumpsTyped(values[channel]) : ["empty", new Uint8Array()];
      packed.push([channel, version, packValue(typed, blocks)]);
    }
    const part = {
      kind: "checkpoint",
      ns,
      id: checkpoint.id,
      parent,
      checkpoint: pack(await this.serde.dumpsTyped(rest)),
      metadata: pack(await this.serde.dumpsTyped(metadata)),
      values: packed,
    };
    const messages = MESSAGES_CHANNEL in newVersions ? values[MESSAGES_CHANNEL] : undefined;
    await this.locked(() => this.putPart(String(threadId), part, messages, blocks));
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  private async putPart(threadId: string, part: Record<string, any>, messages: unknown, blocks: Block[]) {
    const make: Make = async (log, session, start) => {
      const records: PortableRecord[] = [];
      if (messages !== undefined) {
        const known = await knownMessages(this.serde, log, part.ns, part.parent);
        for (const message of newMessages(messages, known)[0]) {
          const record = messageRecord(message, `${session}@${start + records.length}`, part.ns, part.id);
          if (record !== undefined) {
            records.push(record);
          }
        }
      }
      records.push({ role: "system", blocks, meta: { [META_KEY]: part } });
      return records;
    };
    await this.append(threadId, part.ns, part.parent, make);
  }

  /** Appends a task's writes for a checkpoint (one record); writes already stored under the
   * same task and index are kept as they are, as LangGraph's savers do. */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined || checkpointId === undefined) {
      throw new BadInputError('putWrites: the config needs "thread_id" and "checkpoint_id" in its "configurable"');
    }
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const items: Array<[number, string, unknown]> = writes.map(([channel, value], index) => [
      WRITES_IDX_MAP[channel] ?? index,
      channel,
      value,
    ]);
    await this.locked(async () => {
      const stored = (await this.fresh(String(threadId))).writes.get(key(ns, checkpointId));
      const fresh = items.filter(([index]) => index < 0 || !stored?.has(key(taskId, index)));
      if (fresh.length === 0) {
        return;
      }
      const packed = [];
      for (const [index, channel, value] of fresh) {
        packed.push([index, channel, pack(await this.serde.dumpsTyped(value))]);
      }
      const part = { kind: "writes", ns, checkpoint: checkpointId, task: taskId, path: taskPath, writes: packed };
      await this.append(String(threadId), ns, null, async () => [{ role: "system", meta: { [META_KEY]: part } }]);
    });
  }

  /** Ends the thread: a delete receipt (how many checkpoints and writes it removes), then a new
   * generation forked at 0, where the thread starts again empty. Nothing stored is erased. */
  async deleteThread(threadId: string): Promise<void> {
    await this.locked(async () => {
      const log = await this.fresh(threadId);
      if (log.checkpoints.size === 0 && log.writes.size === 0) {
        return;
      }
      let writes = 0;
      for (const stored of log.writes.values()) {
        writes += stored.size;
      }
      const part = { kind: "delete", checkpoints: log.checkpoints.size, writes };
      await this.append(threadId, "", null, async () => [{ role: "system", meta: { [META_KEY]: part } }]);
    });
  }

  /** The next version of a channel, as the Python savers make them (`nextVersion`). A text:
   * LangGraph.js compares versions of either type, though `compile`'s option names the number
   * type, which this class declares so it is accepted. */
  override getNextVersion(current: number | undefined): number {
    return nextVersion(current) as unknown as number;
  }
}
