//! annal for Node.js: `Store` (the journal, projections, search, forks, export, verify), the
//! error classes of each kind of failure, `AnnalSession` for the OpenAI Agents SDK and
//! `AnnalSaver` for LangGraph.js.

export * from "./errors";
export * from "./store";
export { AnnalSession, type AnnalSessionOptions, ITEM_JSON_KEY, type Item } from "./agents";
export { native } from "./native";
