//! `AnnalSession`: a session of the OpenAI Agents SDK for JavaScript (`Session` of
//! `@openai/agents-core`) kept in an annal store, with the layout of the Python package's
//! `annal.agents.AnnalSession`, so a session written from either language reads from the other.
//!
//! Each item is one record that keeps the item's own JSON text, so it reads back exactly as it
//! came; its text, calls and outputs are blocks too, so projections and search see them. Nothing
//! is deleted: `popItem` and `clearSession` end the session's generation with a seal record, then
//! fork it (sharing what stays, without copying) into the next, `<sessionId>~pop<N>`, which the
//! session shows from then on. Every earlier item stays in the store, searchable and verifiable.

import { randomUUID } from "node:crypto";

import type { AgentInputItem, Session } from "@openai/agents-core";

import { AnnalError, BadInputError, ClosedError, ConflictError } from "./errors";
import { native } from "./native";
import { Hit, Store } from "./store";

/** An item of the Agents SDK: a JSON object. */
export type Item = AgentInputItem;

/** The one key of the object that holds an item the store cannot keep as a JSON object of its
 * own (a value that is not an object), as its JSON text. */
export const ITEM_JSON_KEY = "annal.itemJson";

/** The longest session id: entry ids embed it, and they have a limit of their own. */
const SESSION_ID_BYTES_MAX = 256;

/** How a session shows its history. */
export interface AnnalSessionOptions {
  /** The model's context window in tokens: with it, `getItems()` without a limit returns the
   * session's projection under the window (compacting when due) instead of every item. */
  window?: number;
  /** The most the model may write (default `min(32000, window / 4)`). */
  maxOutput?: number;
  /** Tokens of the window kept free of history for the run's own input, tools and
   * instructions (default an eighth of the window). */
  reserve?: number;
}

/** An OpenAI Agents SDK session kept in an annal store (an open `Store`, shared by any number
 * of sessions, or the path of one, opened and owned by this session). */
export class AnnalSession implements Session {
  readonly sessionId: string;
  private readonly window?: number;
  private readonly heldBack: number = 0;
  private readonly opened: Promise<Store>;
  private readonly ownsStore: boolean;
  private generation = 0;
  private closed = false;

  constructor(store: Store | string, sessionId: string, options: AnnalSessionOptions = {}) {
    checkSessionId(sessionId);
    this.sessionId = sessionId;
    const { window, maxOutput, reserve } = options;
    if (window === undefined && (maxOutput !== undefined || reserve !== undefined)) {
      throw new BadInputError("maxOutput and reserve need window: they are parts of its budget");
    }
    if (window !== undefined) {
      const output = maxOutput ?? Math.min(32_000, Math.floor(whole(window, "window", 1) / 4));
      const kept = reserve ?? Math.floor(window / 8);
      whole(output, "maxOutput", 0);
      whole(kept, "reserve", 0);
      if (output + kept >= window) {
        throw new BadInputError(`maxOutput ${output} and reserve ${kept} leave nothing of window ${window}`);
      }
      this.window = window;
      // The reserve is planned for as more output: what the budget holds back from history.
      this.heldBack = output + kept;
    }
    this.ownsStore = !(store instanceof Store);
    this.opened = store instanceof Store ? Promise.resolve(store) : Store.open(store);
    // A path that cannot be opened fails the first call, not an unhandled rejection.
    this.opened.catch(() => undefined);
  }

  // The SDK's Session interface.

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The session's items, oldest first: the latest `limit` verbatim (0 or less: none); without
   * a limit, the projection under the window when one was given, or every item. */
  async getItems(limit?: number): Promise<Item[]> {
    const store = await this.store();
    const [head, length] = await this.head(store);
    if (length === 0) {
      return [];
    }
    if (limit !== undefined) {
      return this.latest(store, head, length, limit);
    }
    if (this.window !== undefined) {
      return this.projected(store, head);
    }
    return (await store.items(head, 0, length)).map(([, text]) => decode(text));
  }

  /** Appends `items` as one atomic batch, each kept verbatim. */
  async addItems(items: Item[]): Promise<void> {
    const store = await this.store();
    if (items.length === 0) {
      return;
    }
    const texts = items.map((item, index) => encode(item, index));
    // Ids name the generation and position, and a token of this call: two writers racing for
    // one position meet the expected-position check, not a shared id.
    const token = randomUUID().replaceAll("-", "").slice(0, 12);
    const held = new Set<number>();
    for (;;) {
      const [head, length] = await this.head(store);
      const ids = texts.map((_, n) => `agents:${head}:${length + n}:${token}`);
      try {
        await store.appendItems(head, texts, ids, { expectedNext: length });
        return;
      } catch (error) {
        if (error instanceof ConflictError) {
          continue; // another writer appended, or sealed this generation, first
        }
        // An object the store does not take as a Responses item of its own: held as its text,
        // as a value that is not an object is. Nothing was stored; refused even so, it fails.
        const index = error instanceof BadInputError ? refusedItem(error.message, ids) : undefined;
        if (index === undefined || held.has(index)) {
          throw error;
        }
        held.add(index);
        texts[index] = JSON.stringify({ [ITEM_JSON_KEY]: texts[index] });
      }
    }
  }

  /** Takes the newest item off what the session shows and returns it (undefined when empty).
   * The item stays in the store, in the generation it was added to. */
  async popItem(): Promise<Item | undefined> {
    const store = await this.store();
    for (;;) {
      const [head, length, generation] = await this.head(store);
      const last = await lastRecordItems(store, head, length);
      if (last.length === 0) {
        return undefined;
      }
      const [order, text] = last[last.length - 1];
      if (await this.seal(store, head, length, order, generation)) {
        return decode(text);
      }
    }
  }

  /** Makes the session show no items; every item stays in the store. */
  async clearSession(): Promise<void> {
    const store = await this.store();
    for (;;) {
      const [head, length, generation] = await this.head(store);
      if (length === 0 || (await this.seal(store, head, length, 0, generation))) {
        return;
      }
    }
  }

  // annal's own.

  /** Searches what this session has ever held (also items popped, cleared or left out of a
   * projection), best matches first. */
  async search(query: string, limit = 10): Promise<Hit[]> {
    const store = await this.store();
    const found: Hit[] = [];
    for (let generation = 0; generation <= this.generation; generation += 1) {
      const session = native.generationName(this.sessionId, generation);
      if ((await store.session(session)) === null) {
        continue;
      }
      found.push(...(await store.search(query, { session, limit })));
    }
    // A fork's search sees what it inherits: each record once, the best hits first.
    const seen = new Set<string>();
    const once = found.filter((hit) => {
      const id = `${hit.entryId}#${hit.blockIndex}`;
      return !seen.has(id) && seen.add(id) !== undefined;
    });
    return once.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  /** The annal session this session shows now: its name, records, and generation. */
  async head(store?: Store): Promise<[string, number, number]> {
    const open = store ?? (await this.store());
    for (;;) {
      const [name, length, generation, sealedAt, nextTaken] = await open.generationHead(this.sessionId, this.generation);
      this.generation = Math.max(this.generation, generation);
      if (sealedAt === null) {
        return [name, length, generation];
      }
      // A sealed generation is finished: its fork made, if its sealer did not get to it.
      const successor = native.generationName(this.sessionId, generation + 1);
      if (nextTaken) {
        throw taken(this.sessionId, successor, name);
      }
      await fork(open, this.sessionId, name, sealedAt, successor);
    }
  }

  /** Closes the session: later calls throw `ClosedError`. Closes the store when this session
   * opened it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.ownsStore) {
      await (await this.opened).close();
    }
  }

  private async store(): Promise<Store> {
    if (this.closed) {
      throw new ClosedError(`AnnalSession ${JSON.stringify(this.sessionId)} is closed`);
    }
    const store = await this.opened;
    store.checkOpen(`AnnalSession ${JSON.stringify(this.sessionId)}`);
    return store;
  }

  private async latest(store: Store, head: string, length: number, limit: number): Promise<Item[]> {
    if (limit <= 0) {
      return [];
    }
    let start = Math.max(0, length - limit);
    for (;;) {
      const found = await store.items(head, start, length);
      // A record another agent wrote may make several items, or none: read back further.
      if (found.length >= limit || start === 0) {
        return found.slice(-limit).map(([, text]) => decode(text));
      }
      start = Math.max(0, start - limit);
    }
  }

  /** The projection of `head` under the window as items, compacting first when due. */
  private async projected(store: Store, head: string): Promise<Item[]> {
    const budget = { window: this.window, maxOutput: this.heldBack };
    let view = await store.project(head, { ...budget, responsesItems: true });
    const stats = view.stats as { compactionDue: boolean; source: { kind: string } };
    if (stats.compactionDue) {
      try {
        await store.compact(head, budget);
        view = await store.project(head, { ...budget, responsesItems: true });
      } catch (error) {
        // The view derived above already fits: a compaction that could not be made (another
        // process holds its claim, a read-only store) does not fail the run.
        if (error instanceof BadInputError || !(error instanceof AnnalError)) {
          throw error;
        }
      }
    }
    if ((view.stats as typeof stats).source.kind === "live") {
      return (await store.items(head)).map(([, text]) => decode(text));
    }
    return (view.items ?? []).map((item) => unwrap(item));
  }

  /** Ends `head` (at `length` records) so its successor keeps its first `keep`; false when
   * another writer moved it first. */
  private async seal(store: Store, head: string, length: number, keep: number, generation: number): Promise<boolean> {
    const successor = native.generationName(this.sessionId, generation + 1);
    const existing = await store.session(successor);
    if (existing !== null && existing.parent !== head) {
      throw taken(this.sessionId, successor, head);
    }
    const token = randomUUID().replaceAll("-", "").slice(0, 12);
    const seal = {
      entryId: `agents:${head}:seal:${length}:${token}`,
      role: "system" as const,
      meta: { [native.SEAL_KEY]: { keep, next: successor } },
    };
    try {
      await store.append(head, [seal], { expectedNext: length });
    } catch (error) {
      if (error instanceof ConflictError) {
        return false;
      }
      throw error;
    }
    await fork(store, this.sessionId, head, keep, successor);
    return true;
  }
}

/** Makes `successor`, unless a racing caller already did (at the same point: a seal names one). */
async function fork(store: Store, id: string, head: string, keep: number, successor: string): Promise<void> {
  try {
    await store.fork(head, keep, successor);
  } catch (error) {
    if (!(error instanceof BadInputError)) {
      throw error;
    }
    const made = await store.session(successor);
    if (made === null) {
      throw error;
    }
    if (made.parent !== head || made.forkAt !== keep) {
      throw taken(id, successor, head);
    }
  }
}

function taken(id: string, successor: string, head: string): BadInputError {
  return new BadInputError(
    `session ${JSON.stringify(successor)} exists and is not a fork of ${JSON.stringify(head)}: ` +
      `session ${JSON.stringify(id)} cannot take its next generation`,
  );
}

/** The items of the newest record below `length` that holds any (seals hold none). */
async function lastRecordItems(store: Store, head: string, length: number): Promise<Array<[number, string]>> {
  let start = length;
  while (start > 0) {
    start = Math.max(0, start - 16);
    const found = await store.items(head, start, length);
    if (found.length > 0) {
      const order = found[found.length - 1][0];
      return found.filter(([o]) => o === order);
    }
  }
  return [];
}

function checkSessionId(sessionId: string): void {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new BadInputError("a session id must be a non-empty string");
  }
  if (sessionId.includes(native.GENERATION_MARK)) {
    throw new BadInputError(
      `session id ${JSON.stringify(sessionId)}: ${JSON.stringify(native.GENERATION_MARK)} names a session's generations`,
    );
  }
  const bytes = Buffer.byteLength(sessionId);
  if (bytes > SESSION_ID_BYTES_MAX) {
    throw new BadInputError(`session id of ${bytes} bytes: at most ${SESSION_ID_BYTES_MAX}`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(sessionId)) {
    throw new BadInputError(`session id ${JSON.stringify(sessionId)}: a session id cannot contain control characters`);
  }
}

function whole(value: number, what: string, least: number): number {
  if (!Number.isInteger(value) || value < least) {
    throw new BadInputError(`${what} ${value}: expected a whole number, ${least} or more`);
  }
  return value;
}

/** The JSON text `item` is stored as: its own when it is an object; otherwise an object of
 * `ITEM_JSON_KEY` holding its text. */
function encode(item: unknown, index: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(item);
  } catch (error) {
    throw new BadInputError(`item ${index} of the batch is not JSON: ${(error as Error).message}`);
  }
  if (text === undefined) {
    throw new BadInputError(`item ${index} of the batch is not JSON`);
  }
  const plain = item !== null && typeof item === "object" && !Array.isArray(item);
  if (plain && !wraps(item)) {
    return text;
  }
  return JSON.stringify({ [ITEM_JSON_KEY]: text });
}

/** Which item of a batch the store's refusal names, by its index or its entry id. */
function refusedItem(message: string, ids: string[]): number | undefined {
  const found = /\bitem (\d+): not a Responses item/.exec(message);
  if (found !== null && Number(found[1]) < ids.length) {
    return Number(found[1]);
  }
  const index = ids.findIndex((id) => message.includes(`"${id}"`));
  return index < 0 ? undefined : index;
}

function wraps(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    ITEM_JSON_KEY in value
  );
}

function unwrap(value: unknown): Item {
  if (wraps(value) && typeof value[ITEM_JSON_KEY] === "string") {
    return JSON.parse(value[ITEM_JSON_KEY] as string) as Item;
  }
  return value as Item;
}

function decode(text: string): Item {
  return unwrap(JSON.parse(text));
}
