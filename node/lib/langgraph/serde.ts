//! The serializer `AnnalSaver` uses by default: LangGraph.js's `JsonPlusSerializer`, which also
//! reads the messages a Python graph stored as JSON. Python's LangChain names a message class by
//! its legacy id (`["langchain", "schema", "messages", "HumanMessage"]`), which LangGraph.js
//! refuses ("Invalid namespace"); LangChain.js's id of the same class is
//! `["langchain_core", "messages", "HumanMessage"]`, which Python reads too. Values Python
//! stored as msgpack (its default) are not read here: a graph whose thread continues in Node
//! stores JSON (`node/test/cross_language.py` shows how).

import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

/** The legacy prefix of Python's message class ids, and what LangChain.js names it. */
const PYTHON_MESSAGES = ["langchain", "schema", "messages"];
const JS_MESSAGES = ["langchain_core", "messages"];

/** `value` with every constructor of a Python message renamed as LangChain.js names it. */
function renamed(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(renamed);
  }
  if (value === null || typeof value !== "object") {
    return value;
  }
  const object = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(object)) {
    out[name] = renamed(inner);
  }
  const id = object.id;
  const legacy =
    object.lc === 1 &&
    object.type === "constructor" &&
    Array.isArray(id) &&
    id.length === PYTHON_MESSAGES.length + 1 &&
    PYTHON_MESSAGES.every((part, index) => id[index] === part);
  if (legacy) {
    out.id = [...JS_MESSAGES, id[id.length - 1]];
  }
  return out;
}

/** One decoder for every value: making one a call cost as much as decoding a short value. */
const DECODER = new TextDecoder();

/** Whether `JSON.parse` alone gives what `JsonPlusSerializer` makes of `text`. Its reviver
 * copies every object and array (one promise each) and changes only objects with an `lc` key;
 * a text with no `"lc"` names none, unless a key is spelled with escapes. A `__proto__` key,
 * which the reviver's copy would turn into a prototype, takes the reviver's path too. */
function plain(text: string): boolean {
  return !text.includes('"lc"') && !text.includes("\\u") && !text.includes("__proto__");
}

/** LangGraph.js's serializer, reading Python's message ids as well. */
export class CrossLanguageSerializer extends JsonPlusSerializer {
  override async loadsTyped(type: string, data: Uint8Array | string): Promise<any> {
    if (type !== "json") {
      return super.loadsTyped(type, data);
    }
    const text = typeof data === "string" ? data : DECODER.decode(data);
    if (plain(text)) {
      return JSON.parse(text);
    }
    // Only a text that names Python's legacy ids is parsed twice.
    if (!text.includes('"schema"')) {
      return super.loadsTyped(type, text);
    }
    return super.loadsTyped(type, JSON.stringify(renamed(JSON.parse(text))));
  }
}
