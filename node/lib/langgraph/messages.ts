//! A graph's conversation as annal records, as the Python package's `annal.langgraph` writes
//! them: each new message of the `messages` channel becomes a record of its role (user,
//! assistant with its tool calls, tool result, system), so search, the viewer, export and
//! projections see the graph's conversation as any agent's.

import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

import type { Block, PortableRecord } from "../store";
import { META_KEY, type ThreadLog, key, loadable } from "./thread";

/** The channel whose messages become records (the one `MessagesAnnotation` uses). */
export const MESSAGES_CHANNEL = "messages";

const ROLES: Record<string, PortableRecord["role"]> = {
  human: "user",
  ai: "assistant",
  tool: "tool",
  system: "system",
  chat: "user",
};

/** What a message object of `@langchain/core` looks like to this module. */
interface MessageLike {
  id?: string;
  type?: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; name?: string; args?: unknown }>;
  tool_call_id?: string;
  name?: string;
  status?: string;
  getType?: () => string;
  _getType?: () => string;
}

function typeOf(message: MessageLike): string | undefined {
  if (message === null || typeof message !== "object") {
    return undefined;
  }
  if (typeof message.getType === "function") {
    return message.getType();
  }
  if (typeof message._getType === "function") {
    return message._getType();
  }
  return typeof message.type === "string" ? message.type : undefined;
}

/** A message's content as text: a string as itself, a list of parts as their texts. */
function text(content: unknown): string {
  if (typeof content === "string") {
    return content;
  }
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "string" ? part : typeof part?.text === "string" ? part.text : undefined))
      .filter((part): part is string => part !== undefined)
      .join("\n");
  }
  return content === undefined || content === null ? "" : String(content);
}

/** What tells two versions of one message apart (a message replaced under its id). */
function fingerprint(message: MessageLike): string {
  const calls = message?.tool_calls;
  return JSON.stringify([typeOf(message) ?? "", text(message?.content), calls?.length ? calls : ""]);
}

/** The record of one message, or undefined for what is not a message of a conversation. */
export function messageRecord(message: MessageLike, entryId: string, ns: string, checkpointId: string) {
  const role = ROLES[typeOf(message) ?? ""];
  if (role === undefined) {
    return undefined;
  }
  const said = text(message.content);
  const blocks: Block[] = [];
  if (role === "tool") {
    blocks.push({
      type: "toolResult",
      callId: String(message.tool_call_id ?? ""),
      tool: String(message.name ?? ""),
      isError: message.status === "error",
      output: said,
    });
  } else if (said) {
    blocks.push({ type: "text", text: said });
  }
  for (const call of message.tool_calls ?? []) {
    const block: Block = { type: "toolCall", callId: String(call.id ?? ""), tool: String(call.name ?? "") };
    if (call.args !== null && typeof call.args === "object") {
      block.input = call.args;
    } else {
      block.inputText = JSON.stringify(call.args ?? null);
    }
    blocks.push(block);
  }
  const part = { kind: "message", ns, checkpoint: checkpointId, id: message.id ?? null };
  const record: PortableRecord = { entryId, role, blocks, meta: { [META_KEY]: part } };
  return record;
}

/** The messages of `messages` not in `known` (id to fingerprint), or changed since; and what
 * is known after them. */
export function newMessages(messages: unknown, known: Map<string, string>): [MessageLike[], Map<string, string>] {
  if (!Array.isArray(messages)) {
    return [[], known];
  }
  const fresh: MessageLike[] = [];
  const after = new Map<string, string>();
  messages.forEach((message: MessageLike, index) => {
    const id = message?.id ?? `#${index}`;
    const mark = fingerprint(message);
    after.set(id, mark);
    if (known.get(id) !== mark) {
      fresh.push(message);
    }
  });
  return [fresh, after];
}

/** The messages of the parent checkpoint's state (id to fingerprint): what a put's messages are
 * new against. */
export async function knownMessages(
  serde: SerializerProtocol,
  log: ThreadLog,
  ns: string,
  parent: string | null,
): Promise<Map<string, string>> {
  const entry = parent === null ? undefined : log.checkpoints.get(key(ns, parent));
  if (entry === undefined) {
    return new Map();
  }
  const checkpoint = await serde.loadsTyped(entry.checkpoint[0], loadable(entry.checkpoint));
  const version = checkpoint?.channel_versions?.[MESSAGES_CHANNEL];
  const blob = log.blobs.get(key(ns, MESSAGES_CHANNEL, version));
  if (blob === undefined || blob[1][0] === "empty") {
    return new Map();
  }
  return newMessages(await serde.loadsTyped(blob[1][0], loadable(blob[1])), new Map())[1];
}
