//! The native addon, loaded from where `napi build` puts it (`native/`, beside `dist/`).

import * as path from "node:path";

export type Native = typeof import("../native/index.js");
export type NativeStore = import("../native/index.js").NativeStore;

// A runtime path: the compiled file sits in dist/lib, the addon in native/.
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const native: Native = require(path.join(__dirname, "..", "..", "native", "index.js"));
