// A one-tool Mastra agent, its model a scripted AI SDK MockLanguageModelV3 (a tool call,
// then an answer), traced by @mastra/observability and exported by @mastra/otel-exporter:
// to livescore collect over OTLP/HTTP JSON, and the same spans as OTLP JSON to a file for
// the test. Usage: node mastra_agent.mjs '{"endpoint", "spansFile", "question",
// "toolResult", "answer", "conversation"}'; prints {"text"}.
import { appendFileSync } from "node:fs";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

const run = JSON.parse(process.argv[2]);
const fileExporter = {
  export(spans, done) {
    const json = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));
    appendFileSync(run.spansFile, json + "\n");
    done({ code: 0 });
  },
  shutdown: async () => {},
  forceFlush: async () => {},
};

const usage = { inputTokens: { total: 10, noCache: 10 }, outputTokens: { total: 5, text: 5 } };
const model = new MockLanguageModelV3({
  modelId: "scripted",
  doGenerate: [
    {
      content: [{ type: "tool-call", toolCallId: "call-1", toolName: "get_weather", input: JSON.stringify({ city: "Lyon" }) }],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    },
    {
      content: [{ type: "text", text: run.answer }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    },
  ],
});

const getWeather = createTool({
  id: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => run.toolResult.replace("Lyon", city),
});
const agent = new Agent({
  id: "weather-agent",
  name: "weather",
  instructions: "Answer weather questions with the tool.",
  model,
  tools: { get_weather: getWeather },
});
const otlp = { custom: { endpoint: run.endpoint, protocol: "http/json" } };
const mastra = new Mastra({
  agents: { weather: agent },
  logger: false,
  observability: new Observability({
    configs: {
      otel: {
        serviceName: "mastra-weather-agent",
        exporters: [
          new OtelExporter({ provider: otlp, signals: { logs: false } }),
          // The same spans into the file (the exporter wants a provider even so).
          new OtelExporter({ provider: otlp, exporter: fileExporter, signals: { logs: false } }),
        ],
      },
    },
  }),
});
// The thread and resource of a memory: no memory is configured, Mastra still traces them.
const result = await mastra.getAgent("weather").generate(run.question, {
  memory: { thread: run.conversation, resource: "user-7" },
});
await mastra.shutdown(); // flushes the exporters' batches
console.log(JSON.stringify({ text: result.text }));
