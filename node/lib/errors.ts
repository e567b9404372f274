//! What annal throws: one `Error` subclass per kind of failure, each with the one-line message
//! the `annal` command prints for the same failure (without its `annal:` prefix), named as the
//! Python package's exceptions. A failed call stores nothing of what it was given, and loses
//! nothing stored.

/** A call on a store failed; the base of every annal error. Each subclass is one kind of
 * failure, the same kind that sets the `annal` command's exit status. */
export class AnnalError extends Error {
  /** The kind's name, as `docs/errors.md` lists it (`"bad input"`, `"not found"`, ...). */
  readonly kind: string = "internal";
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** What was given cannot be stored or asked: a malformed record, a name in use, a budget too
 * small, a query that does not parse. */
export class BadInputError extends AnnalError {
  override readonly kind = "bad input";
}

/** No session, entry or block by that name or id. */
export class NotFoundError extends AnnalError {
  override readonly kind = "not found";
}

/** An append named the position it expected the session to be at (`expectedNext`) and another
 * writer got there first: nothing was appended. Read the session again and retry. */
export class ConflictError extends AnnalError {
  override readonly kind = "conflict";
  constructor(
    message: string,
    /** The position the append expected. */
    readonly expected?: number,
    /** The session's next position. */
    readonly actual?: number,
  ) {
    super(message);
  }
}

/** Another process held the store's write lock (or a compaction claim) for too long. */
export class BusyError extends AnnalError {
  override readonly kind = "busy";
}

/** The store cannot be written by this handle: opened read-only, or its file is. */
export class ReadOnlyError extends AnnalError {
  override readonly kind = "read-only";
}

/** The store was closed. */
export class ClosedError extends AnnalError {
  override readonly kind = "closed";
}

/** An earlier I/O error on the write path stopped writes: open the store again and retry.
 * Nothing acknowledged was lost. */
export class PoisonedError extends AnnalError {
  override readonly kind = "poisoned";
}

/** An append to a session shared through a fleet went to a named fork of it. */
export class ForkedError extends AnnalError {
  override readonly kind = "forked";
}

/** Stored bytes failed their hash, checksum or validation; `Store.verify()` lists them. */
export class CorruptedError extends AnnalError {
  override readonly kind = "corrupted";
}

/** The file is of a format or version this build does not read: upgrade annal. */
export class UnsupportedError extends AnnalError {
  override readonly kind = "unsupported";
}

/** The operating system refused: a file could not be read, written or synced. */
export class StorageIoError extends AnnalError {
  override readonly kind = "i/o";
}

/** A failure inside annal that fits no other class: a bug to report. */
export class InternalError extends AnnalError {
  override readonly kind = "internal";
}

/** Every class, by its name (the names the addon reports). */
export const ERROR_CLASSES = {
  AnnalError,
  BadInputError,
  NotFoundError,
  ConflictError,
  BusyError,
  ReadOnlyError,
  ClosedError,
  PoisonedError,
  ForkedError,
  CorruptedError,
  UnsupportedError,
  StorageIoError,
  InternalError,
} as const;

/** What begins the message of every error the addon raises (`node/src/errors.rs`). */
const MARK = "annal-error:";

/** The annal error an addon call rejected with; any other error as it is. */
export function translate(error: unknown): unknown {
  if (!(error instanceof Error) || !error.message.startsWith(MARK)) {
    return error;
  }
  let body: { class?: string; message?: string; expected?: number; actual?: number };
  try {
    body = JSON.parse(error.message.slice(MARK.length));
  } catch {
    return new InternalError(error.message);
  }
  const message = body.message ?? "";
  if (body.class === "ConflictError") {
    return new ConflictError(message, body.expected, body.actual);
  }
  const known = ERROR_CLASSES[body.class as keyof typeof ERROR_CLASSES];
  return known ? new known(message) : new InternalError(message);
}

/** `call`'s value, its failure thrown as an annal error. */
export async function native<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw translate(error);
  }
}
