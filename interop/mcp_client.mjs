// Interop check: the official MCP TypeScript SDK's Client against the
// `mcp_server` example, over stdio (StdioClientTransport) and over
// Streamable HTTP (StreamableHTTPClientTransport against
// `mcp_server --http 127.0.0.1:0`). Usage: node mcp_client.mjs PATH/TO/mcp_server
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = process.argv[2];
if (!server) {
  console.error('usage: node mcp_client.mjs PATH/TO/mcp_server');
  process.exit(2);
}

const passed = [];
const check = (name) => { passed.push(name); console.log(`ok   ${name}`); };

/// Waits until one of `logs` matches `pattern` (the server's stderr).
async function logged(logs, pattern, ms = 5000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const line = logs.find((l) => pattern.test(l));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`no server log line matches ${pattern}:\n${logs.join('\n')}`);
}

/// Every check, through `transport`; `logs` (HTTP only) is the server's stderr.
async function suite(label, transport, logs) {
  const client = new Client(
    { name: 'interop-mcp-client', version: '1.0.0' },
    { capabilities: { roots: {} } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file:///interop', name: 'interop' }],
  }));
  // The SDK reports protocol surprises here (a progress report for a
  // finished call, a response nobody waits for): there must be none.
  const protocolErrors = [];
  client.onerror = (e) => protocolErrors.push(String(e));
  await client.connect(transport);
  const version = client.getServerVersion();
  assert.equal(version.name, 'jsonrpc-runtime-mcp-example');
  assert.ok(client.getServerCapabilities().tools, 'capabilities.tools');
  if (label === 'http') {
    assert.match(transport.sessionId ?? '', /^[0-9a-f]{32}$/, 'an Mcp-Session-Id');
    check(`${label}: initialize (server ${version.name} ${version.version}, session ${transport.sessionId})`);
  } else {
    check(`${label}: initialize (server ${version.name} ${version.version})`);
  }

  await client.ping();
  check(`${label}: ping`);

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'echo', 'roots', 'sleep']);
  check(`${label}: tools/list: echo, add, sleep, roots`);

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'héllo wörld' } });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'héllo wörld' }]);
  assert.ok(!echo.isError);
  check(`${label}: tools/call echo`);

  const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
  assert.equal(add.content[0].text, '5');
  check(`${label}: tools/call add 2 + 3 = 5`);

  await assert.rejects(
    client.callTool({ name: 'nope', arguments: {} }),
    (e) => e.code === -32602,
  );
  check(`${label}: unknown tool -> -32602`);

  // This SDK negotiates 2025-11-25, where arguments that do not fit are a
  // tool error the model can correct.
  const bad = await client.callTool({ name: 'add', arguments: { a: 'x', b: 1 } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /invalid arguments for `add`/);
  check(`${label}: bad arguments -> isError: true (2025-11-25)`);

  const roots = await client.callTool({ name: 'roots', arguments: {} });
  assert.equal(roots.content[0].text, 'file:///interop (interop)');
  check(`${label}: tools/call roots: the server called roots/list on the client and got its answer`);

  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ['example://readme']);
  const readme = await client.readResource({ uri: 'example://readme' });
  assert.match(readme.contents[0].text, /jsonrpc-mcp/);
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['example://echo/{text}']);
  const echoed = await client.readResource({ uri: 'example://echo/hi' });
  assert.equal(echoed.contents[0].text, 'hi');
  await assert.rejects(client.readResource({ uri: 'example://nope' }), (e) => e.code === -32002);
  check(`${label}: resources: list, read, templates, -32002 for an unknown URI`);

  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => [p.name, p.arguments.map((a) => [a.name, a.required])]), [
    ['review', [['code', true], ['focus', false]]],
  ]);
  const review = await client.getPrompt({ name: 'review', arguments: { code: 'x = 1', focus: 'typos' } });
  assert.equal(review.messages[0].role, 'user');
  assert.equal(review.messages[0].content.text, 'Review this code, looking for typos:\n\nx = 1');
  check(`${label}: prompts: list with arguments, get`);

  const completed = await client.complete({
    ref: { type: 'ref/prompt', name: 'review' },
    argument: { name: 'focus', value: 'b' },
  });
  assert.deepEqual(completed.completion.values, ['bugs', 'bounds checks']);
  check(`${label}: completion/complete for a prompt argument`);

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
  check(`${label}: tools/call sleep with progress: ${values.join(',')} of ${progress[0].total}, all before the result`);

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
  check(`${label}: tools/call sleep cancelled with AbortSignal after ${Date.now() - started} ms`);
  if (logs) {
    const line = await logged(logs, /sleep \(request \S+\) stopped after/);
    check(`${label}: the cancellation reached the server (${line.replace(/^mcp_server: /, '')})`);
  }

  // The session stays usable after a cancellation.
  const again = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
  assert.equal(again.content[0].text, 'still here');
  check(`${label}: session usable after cancellation`);

  assert.deepEqual(protocolErrors, []);
  if (logs) {
    const session = transport.sessionId;
    await transport.terminateSession();
    assert.equal(transport.sessionId, undefined);
    await logged(logs, new RegExp(`session ${session} ended: the client deleted it`));
    check(`${label}: terminateSession (DELETE ended session ${session})`);
    // Closing aborts the SDK's own GET stream, which it reports through
    // `onerror`: no protocol error, so not checked past this point.
    await client.close();
  } else {
    await client.close();
    check(`${label}: close (stdin ended, server exited)`);
  }
}

await suite('stdio', new StdioClientTransport({ command: server, args: [], stderr: 'inherit' }));

// Streamable HTTP: the server listens on a port of its own choosing and
// says where on stderr.
const child = spawn(server, ['--http', '127.0.0.1:0'], { stdio: ['ignore', 'inherit', 'pipe'] });
const logs = [];
const url = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: child.stderr });
  lines.on('line', (line) => {
    process.stderr.write(`${line}\n`);
    logs.push(line);
    const listening = line.match(/^mcp_server: listening on (\S+)$/);
    if (listening) resolve(listening[1]);
  });
  child.on('exit', (code) => reject(new Error(`mcp_server --http exited early (${code})`)));
});
await suite('http', new StreamableHTTPClientTransport(new URL(url)), logs);
child.kill('SIGTERM');
const [code, signal] = await once(child, 'exit');
assert.equal(code, 0, `exit code (signal ${signal})`);
check('http: SIGTERM: the server drained and exited 0');
console.log(`MCP interop: ${passed.length} checks passed`);
