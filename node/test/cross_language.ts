//! A LangGraph thread crosses languages: the Python package's `AnnalSaver` writes it from a
//! graph run, the Node `AnnalSaver` reads it and continues it with a LangGraph.js graph, the
//! Python saver reads the continuation back; `annal verify` passes, `annal history search` finds
//! what Node stored and `annal ui` shows it.
//!
//! Needs `ANNAL_PYTHON` (an interpreter with the `annal` package and LangGraph installed) and
//! `ANNAL_CLI` (the `annal` binary): `.ci/run` sets both and runs
//! `npm run test:cross-language`.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";

import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

import { AnnalSaver } from "../lib/langgraph";
import { scratch } from "./support";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: .ci/run sets it (see the comment at the top of this test)`);
  }
  return value;
}

function python(...args: string[]): string {
  const script = path.join(__dirname, "..", "..", "test", "cross_language.py");
  return execFileSync(required("ANNAL_PYTHON"), [script, ...args], { encoding: "utf8" });
}

function cli(...args: string[]): unknown {
  return JSON.parse(execFileSync(required("ANNAL_CLI"), [...args, "--json"], { encoding: "utf8" }));
}

/** The first page `annal ui` serves for the store, fetched as a browser would. */
async function uiPage(store: string, page: string): Promise<string> {
  const server = spawn(required("ANNAL_CLI"), ["ui", "--db", store, "--port", "0", "--no-open"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    // Its first line is `annal ui: URL`; a chunk may hold more than that line.
    const first: string = await new Promise((resolve, reject) => {
      let seen = "";
      server.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes("\n")) {
          resolve(seen.split("\n")[0]);
        }
      });
      server.once("error", reject);
      server.once("exit", (code) => reject(new Error(`annal ui exited with ${code}`)));
    });
    const url = first.slice(first.indexOf(": ") + 2).trim();
    const opened = await fetch(url, { redirect: "manual" });
    const cookie = opened.headers.get("set-cookie")?.split(";")[0] ?? "";
    const base = url.split("/?")[0];
    return await (await fetch(base + page, { headers: { cookie } })).text();
  } finally {
    server.kill();
  }
}

test("a thread written by the Python saver is read and continued by the Node saver", async () => {
  const { folder, remove } = scratch();
  try {
    const store = path.join(folder, "threads.redb");
    const written = JSON.parse(python("write", store, "crossing 🌉")) as string[];
    assert.deepEqual(written, ["plan the ledger 台帳", "echo: plan the ledger 台帳", "and the index", "echo: and the index"]);

    const saver = new AnnalSaver(store);
    const config = { configurable: { thread_id: "crossing 🌉" } };
    const before = await saver.getTuple(config);
    const messages = (before?.checkpoint.channel_values.messages ?? []) as Array<{ content: unknown }>;
    assert.deepEqual(
      messages.map((m) => m.content),
      written,
    );
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("echo", (state: typeof MessagesAnnotation.State) => {
        const last = state.messages[state.messages.length - 1];
        return { messages: [new AIMessage({ content: `node echo: ${last.content}`, id: `node-${state.messages.length}` })] };
      })
      .addEdge(START, "echo")
      .compile({ checkpointer: saver });
    const after = await graph.invoke({ messages: [new HumanMessage({ content: "from Node: the quokka", id: "n1" })] }, config);
    assert.equal(after.messages.length, 6);
    assert.equal(after.messages[5].content, "node echo: from Node: the quokka");
    await saver.close();

    // The Python saver reads the Node continuation back.
    const read = JSON.parse(python("read", store, "crossing 🌉")) as string[];
    assert.deepEqual(read.slice(4), ["from Node: the quokka", "node echo: from Node: the quokka"]);

    const report = cli("verify", "--db", store) as { ok: boolean };
    assert.equal(report.ok, true);
    const hits = cli("history", "search", "quokka", "--db", store) as Array<{ session: string; role: string }>;
    assert.ok(
      hits.some((hit) => hit.session === "langgraph:crossing 🌉" && hit.role === "user"),
      JSON.stringify(hits),
    );
    const page = await uiPage(store, `/session?name=${encodeURIComponent("langgraph:crossing 🌉")}`);
    assert.match(page, /from Node: the quokka/);
  } finally {
    remove();
  }
});
