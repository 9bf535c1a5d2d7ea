// Interop check: the OpenRPC documents our servers answer `rpc.discover`
// with, validated against the official OpenRPC meta-schema. Each document
// is fetched from a running example over stdio and checked three ways:
//
// 1. `validateOpenRPCDocument` of `@open-rpc/schema-utils-js` (the
//    meta-schema for the document's version, from `@open-rpc/spec-types`);
// 2. the meta-schema published as `@open-rpc/meta-schema`, with ajv and
//    ajv-formats (its JSON Schemas against `@json-schema-tools/meta-schema`,
//    draft 7);
// 3. `parseOpenRPCDocument` of schema-utils-js, which also dereferences
//    every `$ref`, so a reference that does not resolve fails.
//
// Usage: node openrpc_check.mjs PATH/TO/spec_server PATH/TO/calculator
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const require = createRequire(import.meta.url);
const { validateOpenRPCDocument, parseOpenRPCDocument } = require('@open-rpc/schema-utils-js');
const metaSchema = require('@open-rpc/meta-schema').default;
const jsonSchemaMetaSchema = require('@json-schema-tools/meta-schema').default;

const [specServer, calculator] = process.argv.slice(2);
if (!specServer || !calculator) {
  console.error('usage: node openrpc_check.mjs PATH/TO/spec_server PATH/TO/calculator');
  process.exit(2);
}

const passed = [];
const check = (name) => { passed.push(name); console.log(`ok   ${name}`); };

/// Starts `command args` with newline-delimited JSON-RPC on stdio, asks
/// `rpc.discover`, closes stdin and waits for the exit; returns the result.
async function discover(command, args = []) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit');
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}\n');
  let answer;
  for await (const line of lines) {
    answer = JSON.parse(line);
    if (answer.id === 1) break;
  }
  child.stdin.end();
  const [code] = await exited;
  assert.equal(code, 0, `${command} exited ${code}`);
  assert.ok(answer && answer.result, `no rpc.discover result: ${JSON.stringify(answer)}`);
  return answer.result;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
// The JSON Schema meta-schema's `$id` ends with a slash, and it refers to
// itself that way; the OpenRPC meta-schema refers to it without the slash.
ajv.addSchema(jsonSchemaMetaSchema);
ajv.addSchema({ ...jsonSchemaMetaSchema, $id: undefined }, 'https://meta.json-schema.tools');
const validateWithMetaSchema = ajv.compile({ ...metaSchema, $id: undefined, $schema: undefined });

async function validate(name, document) {
  const result = validateOpenRPCDocument(document);
  if (result !== true) {
    console.error(JSON.stringify(document, null, 2));
    assert.fail(`${name}: schema-utils-js validateOpenRPCDocument:\n${result.message}`);
  }
  check(`${name}: valid by validateOpenRPCDocument (@open-rpc/schema-utils-js)`);
  if (!validateWithMetaSchema(document)) {
    console.error(JSON.stringify(document, null, 2));
    assert.fail(`${name}: @open-rpc/meta-schema:\n${JSON.stringify(validateWithMetaSchema.errors, null, 2)}`);
  }
  check(`${name}: valid by @open-rpc/meta-schema (ajv)`);
  try {
    await parseOpenRPCDocument(JSON.stringify(document));
  } catch (e) {
    assert.fail(`${name}: parseOpenRPCDocument (dereferencing every $ref): ${e.message ?? e}`);
  }
  check(`${name}: every $ref resolves (parseOpenRPCDocument)`);
}

const method = (doc, name) => {
  const m = doc.methods.find((m) => m.name === name);
  assert.ok(m, `no method ${name}`);
  return m;
};

// --- spec_server: by-name params from a params struct, schemas under
// components, notifications -------------------------------------------------
{
  const doc = await discover(specServer);
  assert.equal(doc.info.title, 'spec_server');
  assert.equal(method(doc, 'subtract').paramStructure, 'by-name');
  assert.ok(Object.keys(doc.components?.schemas ?? {}).length > 0, 'spec_server: no components.schemas');
  await validate('spec_server rpc.discover', doc);
}

// --- calculator: params by name or position, typed errors with codes -------
{
  const doc = await discover(calculator, ['serve']);
  assert.equal(doc.info.title, 'calculator');
  const divide = method(doc, 'divide');
  assert.deepEqual(divide.params.map((p) => p.name), ['a', 'b']);
  assert.deepEqual(divide.errors, [
    { code: -32010, message: 'Division by zero' },
    { code: -32011, message: 'Overflow' },
  ]);
  await validate('calculator rpc.discover', doc);
}

console.log(`OpenRPC interop: ${passed.length} checks passed`);
