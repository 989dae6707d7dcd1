// The official TypeScript SDK's client against llmtoolkit's mcp.Serve over
// stdio: node client.mjs SHA256 SIZE CMD [ARGS...] runs CMD as the server,
// calls its "snapshot" tool and checks that the answer holds the text and
// a PNG image whose bytes have that SHA-256 and size.
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [wantSHA, wantSize, command, ...args] = process.argv.slice(2);
const fail = (msg) => {
  console.error(`TypeScript SDK client: ${msg}`);
  process.exit(1);
};
setTimeout(() => fail("no answer in 60 s"), 60_000).unref();

const client = new Client({ name: "llmtoolkit-interop", version: "0.0.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const { tools } = await client.listTools();
if (!tools.some((t) => t.name === "snapshot")) fail(`no snapshot tool in ${JSON.stringify(tools)}`);

const res = await client.callTool({ name: "snapshot", arguments: {} });
if (res.isError) fail(`the call failed: ${JSON.stringify(res.content)}`);
const texts = res.content.filter((c) => c.type === "text").map((c) => c.text);
const images = res.content.filter((c) => c.type === "image");
if (texts.join("\n") !== "snapshot.png: image/png, 256x256") fail(`text: ${JSON.stringify(texts)}`);
if (images.length !== 1) fail(`${images.length} images in ${JSON.stringify(res.content.map((c) => c.type))}`);
const [image] = images;
if (image.mimeType !== "image/png") fail(`mime type ${image.mimeType}`);
const data = Buffer.from(image.data, "base64");
const sha = createHash("sha256").update(data).digest("hex");
if (data.length !== Number(wantSize) || sha !== wantSHA) {
  fail(`image: ${data.length} bytes, sha256 ${sha}; want ${wantSize} bytes, sha256 ${wantSHA}`);
}
await client.close();
console.log(`TypeScript SDK client against mcp.Serve: ${texts[0]}, then image/png, ${data.length} bytes, sha256 ${sha}: byte for byte`);
