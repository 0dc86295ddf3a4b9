// Checks of docs/openapi.json that Redocly's rules do not make (tools/openapi/lint.sh runs both):
//   1. the document is valid against the official OpenAPI 3.1 JSON Schema (in strict mode);
//   2. every request body refuses unknown fields (`additionalProperties: false` on each of its
//      object schemas), as allotd does, except the agent's join and heartbeat, which ignore them,
//      and the OpenAI-style calls, which go whole to a service's replica;
//   3. every operation has an operationId, a summary, one tag and 2xx and 4xx answers, and its
//      error answers use the shared Error schema.
// Usage: node lint.mjs [FILE] (default ../../docs/openapi.json). Exits 1 on any problem.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';

const here = dirname(fileURLToPath(import.meta.url));
const file = resolve(process.argv[2] ?? resolve(here, '../../docs/openapi.json'));
const doc = JSON.parse(readFileSync(file, 'utf8'));
const problems = [];

// 1. The official schema.
const validator = new Validator({ strict: true });
const result = await validator.validate(doc);
if (!result.valid) {
  for (const e of [].concat(result.errors)) problems.push(`schema: ${e.instancePath ?? ''} ${e.message ?? JSON.stringify(e)}`);
}

// Follows a local $ref ("#/components/schemas/X").
function deref(node) {
  let n = node;
  for (let hops = 0; n && n.$ref && hops < 20; ++hops) {
    n = n.$ref.slice(2).split('/').reduce((o, k) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  }
  return n;
}

// 2. Strict request bodies: every object schema reachable from a request body.
// The agent's calls ignore unknown fields; the OpenAI-style calls pass the body whole to a replica.
const lenient = new Set(['agentJoin', 'agentHeartbeat', 'createChatCompletion', 'createCompletion',
  'createEmbedding']);
function checkStrict(schema, where, allowOpen, seen) {
  const s = deref(schema);
  if (!s || typeof s !== 'object' || seen.has(s)) return;
  seen.add(s);
  if (s.type === 'object' && s.properties) {
    if (allowOpen ? typeof s.additionalProperties !== 'boolean' : s.additionalProperties !== false) {
      problems.push(`${where}: a request object schema without additionalProperties: ${allowOpen ? 'true or false' : 'false'}`);
    }
    for (const [name, p] of Object.entries(s.properties)) checkStrict(p, `${where}.${name}`, allowOpen, seen);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf']) for (const sub of s[key] ?? []) checkStrict(sub, where, allowOpen, seen);
  if (s.items) checkStrict(s.items, `${where}[]`, allowOpen, seen);
}

// 3. Operations.
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const ids = new Map();
for (const [path, item] of Object.entries(doc.paths ?? {})) {
  if (!/^\/[a-z0-9._/{}-]*$/.test(path)) problems.push(`${path}: not a plain path template`);
  for (const method of methods) {
    const op = item[method];
    if (!op) continue;
    const where = `${method.toUpperCase()} ${path}`;
    if (!op.operationId) problems.push(`${where}: no operationId`);
    else if (ids.has(op.operationId)) problems.push(`${where}: operationId ${op.operationId} also on ${ids.get(op.operationId)}`);
    else ids.set(op.operationId, where);
    if (!op.summary) problems.push(`${where}: no summary`);
    if (!Array.isArray(op.tags) || op.tags.length !== 1) problems.push(`${where}: needs exactly one tag`);
    const statuses = Object.keys(op.responses ?? {});
    // An operation that upgrades the connection answers 101 instead.
    if (!statuses.some((s) => s.startsWith('2') || s === '101')) problems.push(`${where}: no 2xx answer`);
    if (!statuses.some((s) => s.startsWith('4'))) problems.push(`${where}: no 4xx answer`);
    for (const status of statuses.filter((s) => /^[45]/.test(s))) {
      const schema = deref(op.responses[status])?.content?.['application/json']?.schema;
      if (schema?.$ref !== '#/components/schemas/Error') problems.push(`${where}: ${status} does not answer the Error schema`);
    }
    const body = op.requestBody && deref(op.requestBody);
    if (body) {
      for (const [type, media] of Object.entries(body.content ?? {})) {
        checkStrict(media.schema, `${where} body (${type})`, lenient.has(op.operationId), new Set());
      }
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(`error: ${p}`);
  console.error(`${file}: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(`${file}: valid OpenAPI ${doc.openapi}; ${Object.keys(doc.paths).length} paths, ${ids.size} operations; request bodies strict`);
