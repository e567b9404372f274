//! A scripted model provider for the Agents SDK: each turn it calls the `weather` tool once,
//! then answers with what the tool said and how many items its input held, so a test can tell
//! a run that saw its session's history from one that did not. No network.

import { Agent, type Model, type ModelProvider, type ModelRequest, type ModelResponse, Usage, tool } from "@openai/agents-core";

/** The answer the model gives after a tool output, naming how many input items it was given. */
export function answer(output: string, inputItems: number): string {
  return `天气 ${output} (saw ${inputItems} items) 🌦`;
}

class ScriptedModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = Array.isArray(request.input) ? request.input : [{ role: "user", content: request.input }];
    const last = input[input.length - 1] as { type?: string; output?: unknown; content?: unknown };
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    if (last.type === "function_call_result") {
      const given = last.output as string | { text?: unknown };
      const output = typeof given === "string" ? given : typeof given?.text === "string" ? given.text : JSON.stringify(given);
      return {
        usage,
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: answer(output, input.length) }],
          },
        ],
      };
    }
    const city = typeof last.content === "string" ? last.content.split(" ").pop() : "Zürich";
    return {
      usage,
      output: [
        {
          type: "function_call",
          callId: `call-${input.length}`,
          name: "weather",
          arguments: JSON.stringify({ city }),
          status: "completed",
        },
      ],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

export const provider: ModelProvider = { getModel: () => new ScriptedModel() };

export const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
  execute: async (input: unknown) => `sunny in ${(input as { city: string }).city}`,
});

export const agent = new Agent({ name: "forecaster", instructions: "Answer with the weather.", tools: [weather] });
