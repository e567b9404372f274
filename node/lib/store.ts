//! `Store`: one annal store and its search index, shared by every caller in the process. Each
//! call runs on libuv's thread pool (the addon's AsyncTask), never blocking the event loop on a
//! read, a search or an append's fsync; values are the JSON shapes `annal ... --json` prints.

import { ClosedError, native as call } from "./errors";
import { native, NativeStore } from "./native";

/** A block of a record in the portable format (`docs/format.md`). */
export interface Block {
  type: string;
  [key: string]: unknown;
}

/** A record in the portable format, as `append` takes it and `records` returns it. */
export interface PortableRecord {
  entryId?: string;
  role: "user" | "assistant" | "tool" | "system";
  blocks?: Block[];
  meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What an append stored: how many records, the session's next position, and theirs. */
export interface Receipt {
  appended: number;
  next: number;
  sourceOrders: number[];
}

/** One session's facts. */
export interface SessionInfo {
  name: string;
  records: number;
  parent: string | null;
  forkAt: number | null;
  [key: string]: unknown;
}

/** How a store is opened. */
export interface OpenOptions {
  /** `"processes"` (default: other processes may open the file too) or `"exclusive"`. */
  sharing?: "processes" | "exclusive";
  readOnly?: boolean;
  /** Open the search index with the store (default), so it follows every append. */
  indexEagerly?: boolean;
  /** How long a search waits for the index to catch up with earlier appends (default 30). */
  searchWaitSeconds?: number;
}

/** A token budget: the model's window, the most it may write, optional part budgets. */
export interface BudgetOptions {
  window?: number;
  maxOutput?: number;
  tail?: number;
  evidence?: number;
  history?: number;
}

/** What a search is filtered by. */
export interface SearchOptions {
  session?: string;
  role?: "user" | "assistant" | "tool" | "system";
  tool?: string;
  errorsOnly?: boolean;
  literal?: boolean;
  limit?: number;
  start?: number;
  end?: number;
}

/** A search hit. */
export interface Hit {
  session: string;
  sourceOrder: number;
  entryId: string;
  /** The block of the record that matched: `get(`${entryId}#${blockIndex}`)` reads it. */
  blockIndex: number;
  role: string;
  type: string;
  tool: string | null;
  isError: boolean;
  score: number;
  snippet: string;
  [key: string]: unknown;
}

/** A projection: the messages to send next, what was left out, and whether to compact. */
export interface Projection {
  messages: Array<{ role: string; blocks: Block[]; [key: string]: unknown }>;
  compactionDue: boolean;
  /** With `responsesItems`: the view as OpenAI Responses-API items. */
  items?: unknown[];
  [key: string]: unknown;
}

/** An annal store: an append-only, hash-chained journal of agent sessions, with projections
 * under a token budget, compaction, full-text search over every original, forks, export and
 * verification. Open one with `Store.open(path)`. */
export class Store {
  private constructor(private readonly inner: NativeStore) {}

  /** Opens the store at `path` (created if missing) and its search index beside it. */
  static async open(path: string, options: OpenOptions = {}): Promise<Store> {
    return new Store(await call(() => native.openStore(path, options)));
  }

  /** The store file. */
  get path(): string {
    return this.inner.path;
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.inner.closed;
  }

  /** Appends `records` to `session` as one atomic batch; with `expectedNext`, only if the
   * session is at that position (else `ConflictError`, nothing stored). */
  async append(session: string, records: PortableRecord[], options: { expectedNext?: number } = {}): Promise<Receipt> {
    const texts = records.map((record) => JSON.stringify(record));
    return parse(await call(() => this.inner.append(session, texts, options.expectedNext)));
  }

  /** `append`, then `sessionsMarked(names)` in a snapshot begun after it, in one call. */
  async appendMarked(
    session: string,
    records: PortableRecord[],
    options: { expectedNext?: number },
    names: string[],
  ): Promise<[Receipt, [string | null, Array<SessionInfo | null>]]> {
    const texts = records.map((record) => JSON.stringify(record));
    return parse(await call(() => this.inner.appendMarked(session, texts, options.expectedNext, names)));
  }

  /** Appends OpenAI Responses-API items (each as its JSON text), one record each under `ids`. */
  async appendItems(
    session: string,
    items: string[],
    ids: string[],
    options: { expectedNext?: number } = {},
  ): Promise<Receipt> {
    return parse(await call(() => this.inner.appendItems(session, items, ids, options.expectedNext)));
  }

  /** The Responses items of `session`'s records `[start, end)`, as `[sourceOrder, itemText]`. */
  async items(session: string, start = 0, end?: number): Promise<Array<[number, string]>> {
    return parse(await call(() => this.inner.items(session, start, end)));
  }

  /** Where the Agents session `id` stands from `generation` on (see `AnnalSession`). */
  async generationHead(id: string, generation: number): Promise<[string, number, number, number | null, boolean]> {
    return parse(await call(() => this.inner.generationHead(id, generation)));
  }

  /** The records of `session` in `[start, end)`, in the portable format. */
  async records(session: string, start = 0, end?: number): Promise<PortableRecord[]> {
    return parse(await call(() => this.inner.records(session, start, end)));
  }

  /** One session's facts, or `null` when there is no such session. */
  async session(name: string): Promise<SessionInfo | null> {
    return parse(await call(() => this.inner.session(name)));
  }

  /** The facts of each session named (`null` for one there is none of), in one snapshot. */
  async sessionsNamed(names: string[]): Promise<Array<SessionInfo | null>> {
    return parse(await call(() => this.inner.sessionsNamed(names)));
  }

  /** `sessionsNamed`, with the mark of the snapshot they were read in (null for a store
   * without a log), for `unchangedSince`. */
  async sessionsMarked(names: string[]): Promise<[string | null, Array<SessionInfo | null>]> {
    return parse(await call(() => this.inner.sessionsMarked(names)));
  }

  /** Whether no session was appended to, forked or made, by any process, since the snapshot
   * `mark` came from: told at once, on this thread, without waiting for a lock or a sync. False
   * when something did change, or when that cannot be told at once (another writer holds the
   * store's log): read the store then. */
  unchangedSince(mark: string): boolean {
    return this.inner.unchangedSince(mark);
  }

  /** Every session, in name order. */
  async sessions(): Promise<SessionInfo[]> {
    return parse(await call(() => this.inner.sessions()));
  }

  /** Forks `session` at `at` into `newName`, sharing records `[0, at)` without copying them. */
  async fork(session: string, at: number, newName: string): Promise<SessionInfo> {
    return parse(await call(() => this.inner.fork(session, at, newName)));
  }

  /** The view of `session` for the next model request under the budget (default a window of
   * 200,000 tokens, 32,000 of them for output). */
  async project(session: string, budget: BudgetOptions & { responsesItems?: boolean } = {}): Promise<Projection> {
    return parse(await call(() => this.inner.project(session, budget)));
  }

  /** Commits a checkpoint of `session` so later views keep a stable prefix. */
  async compact(session: string, budget: BudgetOptions & { force?: boolean } = {}): Promise<Record<string, unknown>> {
    return parse(await call(() => this.inner.compact(session, budget)));
  }

  /** Searches every original, best matches first. */
  async search(query: string, options: SearchOptions = {}): Promise<Hit[]> {
    return parse(await call(() => this.inner.search(query, options)));
  }

  /** The original named `id` (`entryId`, or `entryId#block`), verbatim; with `lines`
   * `[first, last]`, only those lines (from 1, inclusive) of each text. */
  async get(id: string, lines?: [number, number]): Promise<Record<string, unknown>> {
    return parse(await call(() => this.inner.get(id, lines?.[0], lines?.[1])));
  }

  /** `session` as annal JSONL (lossless) or Markdown. */
  async export(session: string, options: { format?: "jsonl" | "markdown"; redact?: boolean } = {}): Promise<string> {
    return call(() => this.inner.export(session, options.format, options.redact));
  }

  /** Recomputes every content hash and chain (of `session`, or of the whole store). */
  async verify(session?: string): Promise<{ ok: boolean; [key: string]: unknown }> {
    return parse(await call(() => this.inner.verify(session)));
  }

  /** Commits what the index has pending and closes the store; later calls throw
   * `ClosedError`. Resolves whether it closed now (false while another call still runs: it
   * closes when that returns). Closing twice is harmless. */
  async close(): Promise<boolean> {
    return parse(await call(() => this.inner.close()));
  }

  /** Throws `ClosedError` when the store was closed. */
  checkOpen(what: string): void {
    if (this.closed) {
      throw new ClosedError(`${what}: store ${this.path} is closed`);
    }
  }
}

function parse<T>(text: string): T {
  return JSON.parse(text) as T;
}
