// Interop check: the official MCP TypeScript SDK's Client over stdio against
// the `mcp_server` example. Usage: node mcp_client.mjs PATH/TO/mcp_server
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const server = process.argv[2];
if (!server) {
  console.error('usage: node mcp_client.mjs PATH/TO/mcp_server');
  process.exit(2);
}

const passed = [];
const check = (name) => { passed.push(name); console.log(`ok   ${name}`); };

const transport = new StdioClientTransport({ command: server, args: [], stderr: 'inherit' });
const client = new Client({ name: 'interop-mcp-client', version: '1.0.0' });
// The SDK reports protocol surprises here (a progress report for a finished
// call, a response nobody waits for): there must be none.
const protocolErrors = [];
client.onerror = (e) => protocolErrors.push(String(e));
await client.connect(transport);
const version = client.getServerVersion();
assert.equal(version.name, 'jsonrpc-runtime-mcp-example');
assert.ok(client.getServerCapabilities().tools, 'capabilities.tools');
check(`initialize (server ${version.name} ${version.version})`);

await client.ping();
check('ping');

const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'echo', 'sleep']);
check('tools/list: echo, add, sleep');

const echo = await client.callTool({ name: 'echo', arguments: { text: 'héllo wörld' } });
assert.deepEqual(echo.content, [{ type: 'text', text: 'héllo wörld' }]);
assert.ok(!echo.isError);
check('tools/call echo');

const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
assert.equal(add.content[0].text, '5');
check('tools/call add 2 + 3 = 5');

const unknown = await client.callTool({ name: 'nope', arguments: {} });
assert.equal(unknown.isError, true);
check('unknown tool -> isError: true');

await assert.rejects(
  client.callTool({ name: 'add', arguments: { a: 'x', b: 1 } }),
  (e) => e.code === -32602,
);
check('bad arguments -> -32602');

const progress = [];
const slept = await client.callTool(
  { name: 'sleep', arguments: { ms: 200 } },
  undefined,
  { onprogress: (p) => progress.push(p) },
);
assert.equal(slept.content[0].text, 'slept 200 ms');
assert.ok(progress.length > 0, 'progress reports arrived');
const values = progress.map((p) => p.progress);
assert.deepEqual(values, [...values].sort((a, b) => a - b), 'progress increases');
assert.deepEqual(protocolErrors, [], 'every report arrived while the call was open');
check(`tools/call sleep with progress: ${values.join(',')} of ${progress[0].total}, all before the result`);

// Cancellation: the SDK sends notifications/cancelled when the signal aborts.
const controller = new AbortController();
const started = Date.now();
const cancelled = client.callTool(
  { name: 'sleep', arguments: { ms: 60000 } },
  undefined,
  { signal: controller.signal, onprogress: () => {} },
);
setTimeout(() => controller.abort('interop test'), 100);
await assert.rejects(cancelled);
check(`tools/call sleep cancelled with AbortSignal after ${Date.now() - started} ms`);

// The session stays usable after a cancellation.
const again = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
assert.equal(again.content[0].text, 'still here');
check('session usable after cancellation');

assert.deepEqual(protocolErrors, []);
await client.close();
check('close (stdin ended, server exited)');
console.log(`MCP interop: ${passed.length} checks passed`);
