//! The Vercel AI SDK (`ai`) with annal as its conversation store: each conversation is an annal
//! session; every message `generateText` and `streamText` take and give is appended as a record
//! (its text, tool calls and results as blocks, so `annal history search` and `annal ui` see
//! them); the next turn's history is annal's projection of the conversation under the model's
//! window, so a long conversation never overflows it, and what the projection left out stays
//! searchable.
//!
//! Runs offline with the SDK's own mock model in place of a provider's:
//! `npm run build && node dist/examples/vercel-ai.js [STORE]`. With a real provider, pass its
//! model (say `openai("gpt-5")` of `@ai-sdk/openai`) where `model` is made below.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

import { type Block, type PortableRecord, Store } from "../lib";

type Role = "system" | "user" | "assistant" | "tool";
/** A message of the AI SDK (`ModelMessage`), as far as this example reads one. */
interface Message {
  role: Role;
  content: string | Array<{ type: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown; output?: unknown }>;
}

/** The annal session of a conversation. */
const sessionOf = (conversation: string) => `ai:${conversation}`;

/** A message as a record: its parts as blocks. */
function record(message: Message): PortableRecord {
  const parts = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  const blocks: Block[] = [];
  for (const part of parts) {
    if (part.type === "text" && part.text) {
      blocks.push({ type: "text", text: part.text });
    } else if (part.type === "tool-call") {
      blocks.push({ type: "toolCall", callId: part.toolCallId ?? "", tool: part.toolName ?? "", input: part.input ?? {} });
    } else if (part.type === "tool-result") {
      const output = part.output as { value?: unknown } | undefined;
      const text = typeof output?.value === "string" ? output.value : JSON.stringify(output?.value ?? output);
      blocks.push({ type: "toolResult", callId: part.toolCallId ?? "", tool: part.toolName ?? "", isError: false, output: text });
    }
  }
  return { role: message.role, blocks };
}

/** The conversation's history for the next turn: annal's projection under the window, as
 * messages the SDK takes (tool exchanges as the text the projection keeps of them). */
async function history(store: Store, conversation: string, window: number): Promise<Message[]> {
  if ((await store.session(sessionOf(conversation))) === null) {
    return [];
  }
  const view = await store.project(sessionOf(conversation), { window, maxOutput: Math.floor(window / 4) });
  return view.messages.map((message) => {
    const text = message.blocks
      .map((block) => (typeof block.text === "string" ? block.text : typeof block.output === "string" ? block.output : ""))
      .filter((text) => text.length > 0)
      .join("\n");
    const role = message.role === "tool" ? "user" : (message.role as Role);
    return { role, content: text };
  });
}

async function main(): Promise<void> {
  const { generateText, streamText } = await import("ai");
  const { MockLanguageModelV3, simulateReadableStream } = await import("ai/test");
  const file = process.argv[2] ?? path.join(mkdtempSync(path.join(tmpdir(), "annal-ai-")), "chats.redb");
  const store = await Store.open(file);
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  };
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => ({
      content: [{ type: "text", text: `I have ${options.prompt.length} messages; the plan: batch the index commits. 🦀` }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: [],
    }),
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "按计划：" },
          { type: "text-delta", id: "t", delta: "先合并提交。" },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
        ],
      }),
    }),
  });

  const conversation = "planning";
  const window = 32_000;
  // Turn 1, with generateText: the user's message and the model's reply are stored.
  const ask: Message = { role: "user", content: "How do we make the importer faster?" };
  const first = await generateText({ model, messages: [...(await history(store, conversation, window)), ask] as never });
  await store.append(sessionOf(conversation), [ask, ...(first.response.messages as Message[])].map(record));

  // Turn 2, with streamText, in what could be a later process: the history is reloaded.
  const follow: Message = { role: "user", content: "再说一遍，用中文。" };
  const prior = await history(store, conversation, window);
  const streamed = streamText({ model, messages: [...prior, follow] as never });
  let text = "";
  for await (const delta of streamed.textStream) {
    text += delta;
  }
  await store.append(sessionOf(conversation), [follow, ...((await streamed.response).messages as Message[])].map(record));

  const hits = await store.search("batch index commits", { session: sessionOf(conversation) });
  console.log(`turn 1: ${first.text}`);
  console.log(`turn 2 (history of ${prior.length} messages): ${text}`);
  console.log(`stored: ${(await store.records(sessionOf(conversation))).length} records; search finds ${hits[0]?.entryId}`);
  if (prior.length !== 2 || hits.length === 0 || text !== "按计划：先合并提交。") {
    throw new Error("the conversation was not kept");
  }
  await store.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
