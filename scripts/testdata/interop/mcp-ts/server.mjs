// The official TypeScript SDK's server, over stdio, for llmtoolkit's
// mcp.Connect: its "snapshot" tool answers with a text, a PNG image, a WAV
// audio clip and an embedded PDF resource, bytes made by the generator
// main.go's tsBytes shares.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

// tsBytes is a prefix, then n bytes of a linear congruential generator.
function tsBytes(prefix, n) {
  const head = Buffer.from(prefix, "latin1");
  const out = Buffer.alloc(head.length + n);
  head.copy(out);
  let x = 38;
  for (let i = head.length; i < out.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const server = new Server({ name: "ts-interop", version: "0.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: "snapshot", description: "Takes a snapshot.", inputSchema: { type: "object", properties: {} } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name !== "snapshot") throw new Error(`unknown tool ${req.params.name}`);
  return {
    content: [
      { type: "text", text: "a snapshot from TypeScript" },
      { type: "image", mimeType: "image/png", data: tsBytes("\x89PNG\r\n\x1a\n", 300000).toString("base64") },
      { type: "audio", mimeType: "audio/wav", data: tsBytes("RIFF", 40000).toString("base64") },
      {
        type: "resource",
        resource: { uri: "file:///docs/report.pdf", mimeType: "application/pdf", blob: tsBytes("%PDF-1.7\n", 50000).toString("base64") },
      },
    ],
  };
});
await server.connect(new StdioServerTransport());
