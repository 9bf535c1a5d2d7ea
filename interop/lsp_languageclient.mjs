// Interop check: vscode-languageclient (VS Code's LSP client, its node entry
// `vscode-languageclient/node`: `LanguageClient` over stdio) against the
// `lsp_server` example, headless in plain Node.js. The client needs the
// `vscode` API, which only exists inside VS Code; `require('vscode')` is
// pointed at vscode_stub.cjs (beside this file), which plays the editor. The
// client's own code runs unchanged: its initialize, its document sync from
// the editor's change events, its hover and completion providers, its
// diagnostics and progress handling, and its stop (shutdown, exit).
// Usage: node lsp_languageclient.mjs PATH/TO/lsp_server
import assert from 'node:assert/strict';
import { once } from 'node:events';
import Module, { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [server] = process.argv.slice(2);
if (!server) {
  console.error('usage: node lsp_languageclient.mjs PATH/TO/lsp_server');
  process.exit(2);
}

const require = createRequire(import.meta.url);
const stub = fileURLToPath(new URL('./vscode_stub.cjs', import.meta.url));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? stub : resolveFilename.call(this, request, ...rest);
};
const vscode = require('vscode');
const editor = vscode.__editor;
const {
  LanguageClient, ResponseError, TextDocumentSyncKind, TransportKind, WorkDoneProgress,
} = require('vscode-languageclient/node');
// The package exports no package.json; it sits two folders above lib/node/main.js.
const clientVersion = require(new URL('../../package.json', pathToFileURL(require.resolve('vscode-languageclient/node'))).pathname).version;

const TIMEOUT = 15000; // ms, for anything that waits on the server
const passed = [];
const check = (name) => { passed.push(name); console.log(`ok   ${name}`); };

async function until(what, predicate, ms = TIMEOUT) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// The server's stderr reaches the client's output channel; show it (and the
// client's own log lines) as the other checks show the servers' logs. The
// JSON-RPC trace (`lspServerExample.trace.server: verbose`) goes to its own
// channel, printed only when a check fails.
const trace = [];
editor.echo = (channel, line) => {
  if (channel === 'lsp_server trace') trace.push(line);
  else process.stderr.write(`  [${channel}] ${line}\n`);
};
editor.configuration.example = { greeting: 'hello from vscode-languageclient' };
editor.configuration.lspServerExample = { trace: { server: 'verbose' } };

// The client traces the wire when its trace channel's log level is Trace
// (VS Code's "Set Log Level..." on the channel).
const traceChannel = vscode.window.createOutputChannel('lsp_server trace');
traceChannel.logLevel = vscode.LogLevel.Trace;

const client = new LanguageClient(
  'lspServerExample',
  'lsp_server',
  { command: server, transport: TransportKind.stdio },
  {
    documentSelector: [{ scheme: 'file', language: 'plaintext' }],
    traceOutputChannel: traceChannel,
  },
);

const token = () => new vscode.CancellationTokenSource().token;
const at = (line, character) => new vscode.Position(line, character);
const diagnosticsOf = (uri) => editor.diagnosticCollections.map((c) => c.get(vscode.Uri.parse(uri))).find(Boolean) ?? [];
const spans = (diagnostics) => diagnostics.map((d) =>
  `${d.range.start.line}:${d.range.start.character}..${d.range.end.line}:${d.range.end.character}`);

async function main() {
  // start: spawn, initialize, initialized ----------------------------------------------
  await client.start();
  const proc = client.serverProcess;
  const exited = once(proc, 'exit');
  const init = client.initializeResult;
  assert.equal(init.serverInfo.name, 'lsp_server example');
  assert.equal(init.capabilities.hoverProvider, true);
  assert.ok(init.capabilities.completionProvider);
  assert.deepEqual(init.capabilities.textDocumentSync, { openClose: true, change: 2 });
  assert.equal(init.capabilities.positionEncoding, 'utf-16');
  check(`start(): initialize -> ${init.serverInfo.name} ${init.serverInfo.version}, hover, completion, incremental sync, positionEncoding utf-16`);

  const configured = () => editor.output.find(({ line }) => line.includes('configuration: '));
  await until('the logged configuration', configured);
  assert.match(configured().line, /configuration: \[\{"greeting":"hello from vscode-languageclient"\}\]/);
  check(`initialized: workspace/configuration answered from workspace.getConfiguration, server logged "${configured().line.replace(/^.*?(configuration: )/, '$1')}"`);

  // didOpen --------------------------------------------------------------------
  // 'ü' and 'ß' are 1 UTF-16 unit each (2 bytes), the emoji 2 units (4 bytes).
  const uri = 'file:///interop/languageclient.txt';
  const document = editor.open(uri, 'plaintext', 'grüße 😀 TODO one\nsecond line');
  await until('diagnostics after didOpen', () => diagnosticsOf(uri).length === 1);
  const [first] = diagnosticsOf(uri);
  assert.deepEqual(spans([first]), ['0:9..0:13']);
  assert.equal(first.severity, vscode.DiagnosticSeverity.Warning);
  assert.equal(first.message, 'a TODO is left');
  assert.equal(first.source, 'lsp_server');
  check('open -> didOpen -> publishDiagnostics: 1 Warning "a TODO is left" (lsp_server) at 0:9..0:13, in the diagnostic collection');

  const hover = async () => {
    const result = await editor.provider('Hover', document).provideHover(document, at(0, 0), token());
    assert.ok(result instanceof vscode.Hover, `hover: ${result}`);
    return result.contents.map((c) => c.value).join('');
  };
  assert.equal(await hover(), '6 words');
  check('the client\'s hover provider -> textDocument/hover -> "6 words"');

  // Incremental didChange after the emoji -----------------------------------------------
  assert.equal(client.getFeature('textDocument/didChange').syncKind, TextDocumentSyncKind.Incremental);
  await editor.edit(document, [{ range: new vscode.Range(0, 9, 0, 9), text: 'words worlds ' }]);
  await until('diagnostics after the edit', () => spans(diagnosticsOf(uri))[0] === '0:22..0:26');
  assert.equal(await hover(), '8 words');
  check('edit after the emoji (0:9) -> incremental didChange -> the TODO moves to 0:22..0:26, hover "8 words"');

  // A second TODO and a prefix, then completion ---------------------------------------
  await editor.edit(document, [{ range: new vscode.Range(1, 11, 1, 11), text: '\n😀 TODO wor' }]);
  await until('2 diagnostics', () => diagnosticsOf(uri).length === 2);
  assert.deepEqual(spans(diagnosticsOf(uri)), ['0:22..0:26', '2:3..2:7']);
  check('edit adding a line with a second TODO -> 2 diagnostics, 0:22..0:26 and 2:3..2:7');

  const completion = await editor.provider('CompletionItem', document)
    .provideCompletionItems(document, at(2, 11), token(), { triggerKind: vscode.CompletionTriggerKind.Invoke });
  const items = Array.isArray(completion) ? completion : completion.items;
  assert.deepEqual(items.map((i) => i.label).sort(), ['words', 'worlds']);
  assert.ok(items.every((i) => i.kind === vscode.CompletionItemKind.Text), items.map((i) => i.kind).join());
  check('the client\'s completion provider after "😀 TODO wor" (2:11) -> words, worlds (CompletionItemKind.Text)');
  assert.equal(await hover(), '11 words');
  check('hover after the second edit -> "11 words"');

  // example/slow: progress on a token the server creates ------------------------------
  assert.deepEqual(await client.sendRequest('example/slow', { ms: 200 }), { sleptMs: 200 });
  await until('the progress to end', () => editor.progress.length === 1 && editor.progress[0].done);
  const [shown] = editor.progress;
  assert.equal(shown.options.title, 'Sleeping');
  assert.equal(shown.reports.length, 9, JSON.stringify(shown.reports));
  check('example/slow {ms: 200} -> window/workDoneProgress/create: window.withProgress "Sleeping", 9 reports, done');

  // ... and on the request's own workDoneToken.
  const values = [];
  const listening = client.onProgress(WorkDoneProgress.type, 'vscode-1', (value) => values.push(value));
  assert.deepEqual(await client.sendRequest('example/slow', { ms: 200, workDoneToken: 'vscode-1' }), { sleptMs: 200 });
  await until('progress end on vscode-1', () => values.at(-1)?.kind === 'end');
  listening.dispose();
  assert.deepEqual(values.map((v) => v.kind), ['begin', ...Array(9).fill('report'), 'end']);
  assert.equal(editor.progress.length, 1, 'no token created for a request with a workDoneToken');
  check('example/slow with workDoneToken -> client.onProgress: begin, 9 reports, end');

  // Cancelled with a CancellationToken ($/cancelRequest) -------------------------------
  const cancelledValues = [];
  client.onProgress(WorkDoneProgress.type, 'vscode-2', (value) => cancelledValues.push(value));
  const source = new vscode.CancellationTokenSource();
  const slow = client.sendRequest('example/slow', { ms: 60000, workDoneToken: 'vscode-2' }, source.token);
  await until('progress begin on vscode-2', () => cancelledValues.length > 0);
  const cancelledAt = Date.now();
  source.cancel();
  await assert.rejects(slow, (e) => e instanceof ResponseError && e.code === -32800);
  const elapsed = Date.now() - cancelledAt;
  assert.ok(elapsed < 5000, `${elapsed} ms`);
  await until('progress end on vscode-2', () => cancelledValues.at(-1)?.kind === 'end');
  assert.equal(cancelledValues.at(-1).message, 'cancelled');
  check(`example/slow cancelled (CancellationTokenSource.cancel) -> -32800 after ${elapsed} ms, progress end "cancelled"`);

  // close, stop ------------------------------------------------------------------------
  // The client sends didClose a few ticks after the editor's event; stop()
  // called before that drops it ("Sending document notification
  // textDocument/didClose failed. Error: Starting server failed"), so wait
  // for the feature to say it was sent.
  const closeFeature = client.getFeature('textDocument/didClose');
  const closeSent = new Promise((resolve) => {
    const listening = closeFeature.onNotificationSent((event) => { listening.dispose(); resolve(event); });
  });
  await editor.close(document);
  assert.equal((await closeSent).params.textDocument.uri, uri);
  assert.deepEqual(editor.messages, [], 'no message shown to the user');
  const failures = editor.output.filter(({ channel, line }) => channel !== traceChannel.name && /failed/i.test(line));
  assert.deepEqual(failures, [], 'the client logged no failure');
  await client.stop();
  const [code, signal] = await exited;
  assert.deepEqual(editor.output.filter(({ channel, line }) => channel !== traceChannel.name && /failed/i.test(line)), []);
  assert.equal(code, 0, `exit code ${code}, signal ${signal}`);
  check('close, then stop() -> didClose, shutdown, exit; the server exits with code 0');
  assert.ok(trace.some((l) => l.includes("Sending request 'shutdown")), 'shutdown in the trace');
  assert.ok(trace.some((l) => l.includes("Sending notification 'exit'")), 'exit in the trace');
  assert.ok(trace.some((l) => l.includes("Sending notification 'textDocument/didClose'")), 'didClose in the trace');
}

try {
  await main();
  console.log(`vscode-languageclient ${clientVersion} interop: ${passed.length} checks passed`);
  process.exit(0);
} catch (e) {
  console.error(`FAIL ${e.stack ?? e}\n\nthe client's trace (the last 150 lines):\n${trace.join('\n').split('\n').slice(-150).join('\n')}`);
  process.exit(1);
}
