// The official TypeScript SDK's client (@modelcontextprotocol/sdk, npm) driving an MCP server over stdio, for
// the end-to-end tests of guard mcp (mcp_typescript_e2e_test.go). The SDK's directory is
// $GUARD_TEST_MCP_SDK; the scenario is the JSON of argv[2]:
//
//   {"command": ..., "args": [...], "calls": [{"name": ..., "arguments": {...}}], "pending": {"name": ..., "arguments": {...}}}
//
// It connects announcing no capability (as the MCP Inspector does), lists the tools, makes the calls in
// order and prints {"pid", "tools": [names], "results": [{"isError", "text"}]} as one line. With "pending" it
// then prints {"pid"} alone first, starts that call without waiting for it, and waits until its stdin closes.
import { pathToFileURL } from "node:url";
import path from "node:path";

const sdk = process.env.GUARD_TEST_MCP_SDK;
const load = (p) => import(pathToFileURL(path.join(sdk, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const spec = JSON.parse(process.argv[2]);
const client = new Client({ name: "ts-e2e-client", version: "1.0.0" }, { capabilities: {} });
const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: process.env, stderr: "inherit" });
await client.connect(transport);
if (spec.pending) {
  console.log(JSON.stringify({ pid: transport.pid }));
  client.callTool({ name: spec.pending.name, arguments: spec.pending.arguments }, undefined, { timeout: 3600000 }).catch(() => {});
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on("end", resolve));
  process.exit(0);
}
const out = { pid: transport.pid, tools: (await client.listTools()).tools.map((t) => t.name), results: [] };
for (const c of spec.calls || []) {
  const r = await client.callTool({ name: c.name, arguments: c.arguments });
  const text = (r.content || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
  out.results.push({ isError: !!r.isError, text });
}
console.log(JSON.stringify(out));
await client.close();
