//! One turn of an Agents SDK run in its own process, its history kept in an `AnnalSession`:
//! `node agents_run.js STORE SESSION QUESTION` prints the run's final output.

import { Runner } from "@openai/agents-core";

import { AnnalSession } from "../lib";
import { agent, provider } from "./scripted";

async function main(): Promise<void> {
  const [store, sessionId, question] = process.argv.slice(2);
  const session = new AnnalSession(store, sessionId);
  const runner = new Runner({ modelProvider: provider, tracingDisabled: true });
  const result = await runner.run(agent, question, { session });
  process.stdout.write(`${result.finalOutput}\n`);
  await session.close();
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
  process.exit(1);
});
