// A tool-using agent run in Node.js, traced by hand in the OpenTelemetry GenAI semantic
// conventions (invoke_agent > chat > execute_tool > chat) and exported with the JS SDK's
// own OTLP/HTTP exporter. Usage: node agent.mjs ENDPOINT json|protobuf QUESTION
import { trace, context } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";

const [endpoint, encoding, question] = process.argv.slice(2);
const Exporter = encoding === "protobuf" ? ProtoExporter : JsonExporter;
const sdk = new NodeSDK({
  serviceName: "node-weather-agent",
  traceExporter: new Exporter({ url: endpoint }),
});
sdk.start();
const tracer = trace.getTracer("node-weather-agent");

// The scripted model: asks for the weather tool, then answers from its result.
function model(messages) {
  const last = messages[messages.length - 1];
  if (last.role === "user" && last.parts[0].type === "text") {
    return { role: "assistant", parts: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Lyon" } }] };
  }
  return { role: "assistant", parts: [{ type: "text", content: "It is sunny in Lyon." }] };
}
const tools = { get_weather: ({ city }) => `sunny in ${city}, 24 °C` };

function inSpan(name, attributes, fn) {
  return tracer.startActiveSpan(name, { attributes }, (span) => {
    try {
      return fn(span);
    } finally {
      span.end();
    }
  });
}

inSpan("invoke_agent weather", {
  "gen_ai.operation.name": "invoke_agent",
  "gen_ai.agent.name": "weather",
  "gen_ai.conversation.id": "node-conversation-1",
}, (agentSpan) => {
  const messages = [{ role: "user", parts: [{ type: "text", content: question }] }];
  agentSpan.setAttribute("gen_ai.input.messages", JSON.stringify(messages));
  for (let turn = 0; turn < 4; turn++) {
    const reply = inSpan("chat scripted", {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "scripted",
      "gen_ai.input.messages": JSON.stringify(messages),
    }, (span) => {
      const out = model(messages);
      span.setAttribute("gen_ai.output.messages", JSON.stringify([out]));
      return out;
    });
    messages.push(reply);
    const calls = reply.parts.filter((p) => p.type === "tool_call");
    if (calls.length === 0) {
      agentSpan.setAttribute("gen_ai.output.messages", JSON.stringify([reply]));
      break;
    }
    for (const call of calls) {
      const result = inSpan(`execute_tool ${call.name}`, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.call.arguments": JSON.stringify(call.arguments),
      }, (span) => {
        const value = tools[call.name](call.arguments);
        span.setAttribute("gen_ai.tool.call.result", value);
        return value;
      });
      messages.push({ role: "tool", parts: [{ type: "tool_call_response", id: call.id, response: result }] });
    }
  }
  console.log(agentSpan.spanContext().traceId + " " + agentSpan.spanContext().spanId);
});
await sdk.shutdown();
