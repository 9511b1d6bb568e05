// A one-tool agent on the Vercel AI SDK: generateText with a tool, the model a scripted
// MockLanguageModelV3 (a tool call, then an answer), traced by the SDK's own telemetry
// (experimental_telemetry) through the OpenTelemetry JS SDK. Every span goes to
// livescore collect over OTLP/HTTP JSON, and the same OTLP JSON to a file for the test.
// Usage: node ai_sdk_agent.mjs '{"endpoint", "spansFile", "question", "toolResult",
// "answer", "conversation"}'; prints {"text"}.
import { appendFileSync } from "node:fs";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { generateText, stepCountIs, tool } from "ai";
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
};
// The SDK nests its spans through the active context: without a context manager every
// span would be a root.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new TracerProvider({
  spanProcessors: [
    // Batched: the whole trace reaches livescore collect in one request at the flush.
    new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: run.endpoint }) }),
    new SimpleSpanProcessor({ exporter: fileExporter }),
  ],
});
trace.setGlobalTracerProvider(provider);

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

const result = await generateText({
  model,
  system: "Answer weather questions with the tool.",
  prompt: run.question,
  tools: {
    get_weather: tool({
      description: "Current weather for a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => run.toolResult.replace("Lyon", city),
    }),
  },
  stopWhen: stepCountIs(4),
  experimental_telemetry: {
    isEnabled: true,
    functionId: "weather-agent",
    metadata: { sessionId: run.conversation, userId: "user-7" },
  },
});
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify({ text: result.text }));
