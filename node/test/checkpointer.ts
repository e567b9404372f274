//! The initializer LangGraph's checkpointer validation suite (`@langchain/langgraph-checkpoint-
//! validation`) runs against (`test/validation.spec.mjs`): each checkpointer it makes is an
//! `AnnalSaver` over a store of its own in a fresh temporary folder, removed when the suite
//! destroys it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

import { AnnalSaver } from "../lib/langgraph";

const folders = new Map<AnnalSaver, string>();

export default {
  checkpointerName: "annal AnnalSaver",

  async createCheckpointer(): Promise<AnnalSaver> {
    const folder = mkdtempSync(path.join(tmpdir(), "annal-saver-"));
    const saver = new AnnalSaver(path.join(folder, "threads.redb"));
    await saver.store();
    folders.set(saver, folder);
    return saver;
  },

  async destroyCheckpointer(saver: AnnalSaver): Promise<void> {
    await saver.close();
    const folder = folders.get(saver);
    if (folder !== undefined) {
      rmSync(folder, { recursive: true, force: true });
    }
  },
};
