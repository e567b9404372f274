//! LangGraph.js persistence in annal: `AnnalSaver`, a checkpointer keeping each thread as annal
//! sessions of append-only, hash-chained records, in the layout the Python package's
//! `annal.langgraph` uses, so a thread written from one language reads from the other.

export { AnnalSaver } from "./saver";
export { MESSAGES_CHANNEL } from "./messages";
export { CrossLanguageSerializer } from "./serde";
export { threadSession } from "./thread";
