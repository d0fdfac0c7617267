'use strict';

// defineTool types a handler's `args` from its schema (index.d.ts): a JSON
// Schema literal, a zod 4 schema (Standard Schema), an AI SDK jsonSchema<T>().
// Checked with the real `tsc --strict`; each `@ts-expect-error` line must be an
// error, so a type that degraded to `any` fails the compile ("unused directive").

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
let project;

before(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-tool-types-'));
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(modules, 'cordon'));
  for (const name of ['zod', 'ai']) fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  for (const types of ['node', 'json-schema']) fs.symlinkSync(path.join(ROOT, 'node_modules', '@types', types), path.join(modules, '@types', types));
  // incremental: a later check re-checks only what changed (tsc-consumer.js).
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, incremental: true, tsBuildInfoFile: 'tsbuildinfo', module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
  }));
});

after(() => fs.rmSync(project, { recursive: true, force: true }));

const CONSUMER = `
import { createCodeMode, defineTool } from 'cordon';
import { z } from 'zod';
import { jsonSchema } from 'ai';

const fromLiteral = defineTool({
  name: 'orders.get', description: 'Get an order', effect: 'read',
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string' }, qty: { type: 'integer' }, status: { enum: ['open', 'shipped'] }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['id'],
  },
  handler: (args) => {
    const id: string = args.id;
    const qty: number | undefined = args.qty;
    const status: 'open' | 'shipped' | undefined = args.status;
    const tags: string[] | undefined = args.tags;
    // @ts-expect-error id is a string, not a number
    const wrong: number = args.id;
    // @ts-expect-error qty is optional
    const sure: number = args.qty;
    // @ts-expect-error no such property
    void args.nope;
    return { id, qty, status, tags, wrong, sure };
  },
});

const fromZod = defineTool({
  name: 'users.find', description: 'Find users', effect: 'read',
  inputSchema: z.object({ email: z.string(), limit: z.number().optional() }),
  handler: async (args) => {
    const email: string = args.email;
    // @ts-expect-error email is a string
    const n: number = args.email;
    return [email, n, args.limit];
  },
});

const fromAiSdk = defineTool({
  name: 'search', description: 'Search', effect: 'read',
  inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
  handler: (args) => {
    const q: string = args.q;
    // @ts-expect-error q is a string
    const n: number = args.q;
    return q + n;
  },
});

export const codeMode = createCodeMode({ tools: [fromLiteral, fromZod, fromAiSdk], strictSchemas: true });
`;

function check(source) {
  fs.writeFileSync(path.join(project, 'consumer.ts'), source);
  return spawnSync(TSC, ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', timeout: 300_000 });
}

test('defineTool types handler args from a JSON Schema literal, a zod 4 schema and an AI SDK schema (tsc --strict)', () => {
  const result = check(CONSUMER);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('a handler that misuses its typed args fails to type-check', () => {
  const result = check(CONSUMER.replace('return { id, qty, status, tags, wrong, sure };', 'return args.id.toFixed(2);'));
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+: Property 'toFixed' does not exist on type 'string'/);
});

test('defineTool returns the tool unchanged and createCodeMode accepts it', () => {
  const { defineTool, createCodeMode } = require('..');
  const tool = { name: 't', description: 'd', effect: 'read', inputSchema: { type: 'object' }, handler: () => 1 };
  assert.equal(defineTool(tool), tool);
  assert.ok(createCodeMode({ tools: [defineTool(tool)] }));
});
