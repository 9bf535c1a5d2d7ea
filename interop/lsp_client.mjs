// Interop check: vscode-jsonrpc (the JSON-RPC library under VS Code's LSP
// client) against the `lsp_server` example and `spec_server --content-length`.
// Usage: node lsp_client.mjs PATH/TO/lsp_server PATH/TO/spec_server
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  CancellationTokenSource,
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';

const [lspServer, specServer] = process.argv.slice(2);
if (!lspServer || !specServer) {
  console.error('usage: node lsp_client.mjs PATH/TO/lsp_server PATH/TO/spec_server');
  process.exit(2);
}

const passed = [];
const check = (name) => { passed.push(name); console.log(`ok   ${name}`); };

function start(command, args = []) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const errors = [];
  connection.onError(([e]) => errors.push(String(e)));
  return { child, connection, errors, exited: once(child, 'exit') };
}

// --- lsp_server -----------------------------------------------------------

{
  const { child, connection, errors, exited } = start(lspServer);
  const logs = [];
  const progress = new Map(); // token -> values
  const configurationAsked = [];
  connection.onRequest('workspace/configuration', (params) => {
    configurationAsked.push(params);
    return params.items.map(() => ({ greeting: 'hello from vscode-jsonrpc' }));
  });
  connection.onRequest('window/workDoneProgress/create', ({ token }) => {
    progress.set(token, []);
    return null;
  });
  connection.onNotification('window/logMessage', (p) => logs.push(p));
  connection.onNotification('$/progress', ({ token, value }) => {
    if (!progress.has(token)) progress.set(token, []);
    progress.get(token).push(value);
  });
  connection.listen();

  await assert.rejects(
    connection.sendRequest('textDocument/hover', { textDocument: { uri: 'file:///a.txt' }, position: { line: 0, character: 0 } }),
    (e) => e instanceof ResponseError && e.code === -32002,
  );
  check('hover before initialize -> -32002');

  const init = await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    clientInfo: { name: 'interop-lsp-client', version: '1.0.0' },
    capabilities: { workspace: { configuration: true }, window: { workDoneProgress: true } },
  });
  assert.equal(init.capabilities.hoverProvider, true);
  assert.equal(init.capabilities.textDocumentSync.change, 2);
  assert.equal(init.capabilities.positionEncoding, 'utf-16');
  check('initialize: hoverProvider, incremental textDocumentSync, positionEncoding utf-16');

  await connection.sendNotification('initialized', {});
  while (logs.length === 0) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(configurationAsked, [{ items: [{ section: 'example' }] }]);
  assert.match(logs[0].message, /hello from vscode-jsonrpc/);
  check(`initialized: server asked workspace/configuration, logged "${logs[0].message}"`);

  const uri = 'file:///a.txt';
  await connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'plaintext', version: 1, text: 'one two three' },
  });
  let hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
  assert.equal(hover.contents.value, '3 words');
  check('didOpen + hover -> "3 words"');

  // Incremental changes: "w " inserted at the start, 200 times.
  const origin = { line: 0, character: 0 };
  for (let v = 2; v <= 201; v++) {
    await connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: v },
      contentChanges: [{ range: { start: origin, end: origin }, text: 'w ' }],
    });
  }
  hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
  assert.equal(hover.contents.value, '203 words');
  assert.equal(logs.filter((l) => l.type === 2).length, 0, 'no warning');
  check('200 incremental didChange then hover -> "203 words", in order');

  // Progress on a token the server creates (no workDoneToken sent).
  const slow = await connection.sendRequest('example/slow', { ms: 100 });
  assert.deepEqual(slow, { sleptMs: 100 });
  const [created] = [...progress.keys()];
  const kinds = progress.get(created).map((v) => v.kind);
  assert.equal(kinds[0], 'begin');
  assert.equal(kinds.at(-1), 'end');
  const percentages = progress.get(created).filter((v) => v.kind === 'report').map((v) => v.percentage);
  assert.deepEqual(percentages, [...percentages].sort((a, b) => a - b));
  check(`example/slow with window/workDoneProgress/create: ${kinds.length} $/progress values, begin..end, in order`);

  // Progress on the request's own workDoneToken.
  const slow2 = await connection.sendRequest('example/slow', { ms: 100, workDoneToken: 'w1' });
  assert.deepEqual(slow2, { sleptMs: 100 });
  const own = progress.get('w1').map((v) => v.kind);
  assert.equal(own[0], 'begin');
  assert.equal(own.at(-1), 'end');
  check(`example/slow with workDoneToken: ${own.length} $/progress values, begin..end`);

  // Cancellation with a CancellationToken: $/cancelRequest, answered -32800.
  const source = new CancellationTokenSource();
  const started = Date.now();
  const cancelled = connection.sendRequest('example/slow', { ms: 60000, workDoneToken: 'w2' }, source.token);
  setTimeout(() => source.cancel(), 100);
  await assert.rejects(cancelled, (e) => e instanceof ResponseError && e.code === -32800);
  const afterCancel = Date.now() - started;
  assert.equal(progress.get('w2').at(-1).kind, 'end');
  check(`example/slow cancelled with a CancellationToken -> -32800 after ${afterCancel} ms, progress ended`);

  assert.equal(await connection.sendRequest('shutdown'), null);
  check('shutdown -> null');
  await assert.rejects(
    connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } }),
    (e) => e instanceof ResponseError && e.code === -32600,
  );
  check('request after shutdown -> -32600');
  await connection.sendNotification('exit');
  const [code] = await exited;
  assert.equal(code, 0);
  check('exit after shutdown -> process exit code 0');
  assert.deepEqual(errors, []);
  connection.dispose();
}

// --- lsp_server: exit without shutdown -------------------------------------

{
  const { connection, exited } = start(lspServer);
  connection.listen();
  await connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
  await connection.sendNotification('exit');
  const [code] = await exited;
  assert.equal(code, 1);
  check('exit without shutdown -> process exit code 1');
  connection.dispose();
}

// --- spec_server --content-length ------------------------------------------

{
  const { child, connection, errors, exited } = start(specServer, ['--content-length']);
  connection.listen();
  // vscode-jsonrpc sends several arguments as a by-position array, and one
  // object argument as by-name params.
  assert.equal(await connection.sendRequest('subtract', 42, 23), 19);
  assert.equal(await connection.sendRequest('subtract', { minuend: 42, subtrahend: 23 }), 19);
  check('spec_server --content-length: subtract by position and by name = 19');
  await assert.rejects(
    connection.sendRequest('foobar'),
    (e) => e instanceof ResponseError && e.code === -32601,
  );
  check('spec_server --content-length: unknown method -> -32601');
  child.stdin.end();
  const [code] = await exited;
  assert.equal(code, 0);
  assert.deepEqual(errors, []);
  check('spec_server: exits 0 when stdin ends');
  connection.dispose();
}

console.log(`LSP interop: ${passed.length} checks passed`);
