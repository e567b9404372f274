//! LangGraph's checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`,
//! every spec: getTuple, list, put, putWrites, deleteThread, getDeltaChannelHistory) against
//! `AnnalSaver`, run by vitest as the package's README describes for a test suite. Its CLI,
//! `validate-checkpointer`, cannot load an initializer in release 1.1.1: its runner imports
//! `checkpointerTestInitializerSchema` and `findPackageRoot`, which that release's build does
//! not export. This runs the same `specTest` the CLI would, over the compiled initializer.

import { validate } from "@langchain/langgraph-checkpoint-validation";

import initializer from "../dist/test/checkpointer.js";

validate(initializer.default ?? initializer);
