//! What the tests share: a store in a fresh temporary folder, removed after the test, and text
//! as agents meet it (multi-byte spaces, CJK, emoji, combining marks, very long lines).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

/** A fresh folder, and a function that removes it. */
export function scratch(): { folder: string; remove: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), "annal-node-"));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Texts of the kinds transcripts hold. */
export const TEXTS = [
  "plain ASCII: cargo test -p annal-query",
  "ideographic\u3000space and\u00a0no-break space",
  "中文：把索引的提交合并到一个事务里。",
  "emoji 🦀🚀 and a family 👩‍👩‍👧",
  "combining marks: e\u0301 a\u0308 n\u0303",
  "a very long line " + "lorem ipsum dolor sit amet ".repeat(2000),
];

/** A seeded generator (mulberry32), so a failing run can be repeated. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
