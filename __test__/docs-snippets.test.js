'use strict';

// The docs are executable: every fenced JavaScript, TypeScript and shell
// snippet of README.md and docs/*.md runs, as written, against this checkout
// (a throwaway project where `cordon` is this package and its bin is on
// `npx`), and must exit 0 within SNIPPET_TIMEOUT_MS.
//
// Opt-out, only for a snippet that is a fragment on purpose (it needs your
// model, your MCP connection, a clone, or it is the CI's own commands): put
//   <!-- snippet: fragment (why) -->
// on the line right before its opening fence. The reason is required. Blocks
// fenced with other languages (json, text, …) are not code and are not run.
//
// How a snippet runs:
// - js/javascript/mjs: as an ES module (top-level await, `import … from 'cordon'`);
// - cjs: as CommonJS;
// - ts/typescript: types stripped with amaro (as Code Mode does), then as an ES module;
// - sh/bash/shell: `bash -euo pipefail -c`, in the throwaway project directory.
// Each gets a fresh working directory; nothing it writes outlives the test.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const RUNNERS = {
  js: 'mjs', javascript: 'mjs', mjs: 'mjs', cjs: 'cjs', ts: 'ts', typescript: 'ts', sh: 'sh', bash: 'sh', shell: 'sh',
};
const FRAGMENT = /^<!--\s*snippet:\s*fragment\s*\((.+)\)\s*-->\s*$/;
const SNIPPET_TIMEOUT_MS = 120_000;

/** Every fenced block of `file`: {file, line, language, code, fragment}. */
function snippets(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(`{3,})(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end].startsWith(open[1])) end += 1;
    const language = open[2].toLowerCase();
    if (RUNNERS[language]) {
      const marker = FRAGMENT.exec(lines[i - 1] ?? '');
      found.push({ file, line: i + 1, language, code: lines.slice(i + 1, end).join('\n'), fragment: marker ? marker[1] : null });
    }
    i = end;
  }
  return found;
}

/**
 * A throwaway project: node_modules holds this checkout as `cordon` (and its bin),
 * and links to the checkout's own dependencies (ai, zod, the MCP SDK, …).
 */
function project(t) {
  const dir = fs.mkdtempSync(path.join(ROOT, '.docs-snippets-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name === '.bin' || name.startsWith('.')) continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
  fs.symlinkSync(ROOT, path.join(modules, 'cordon'));
  fs.symlinkSync(path.join(ROOT, 'bin', 'cordon.js'), path.join(modules, '.bin', 'cordon'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"private": true}\n');
  return dir;
}

function run(snippet, dir) {
  const kind = RUNNERS[snippet.language];
  const env = { ...process.env, PATH: [path.dirname(process.execPath), process.env.PATH].join(path.delimiter) };
  const options = { cwd: dir, env, encoding: 'utf8', timeout: SNIPPET_TIMEOUT_MS };
  if (kind === 'sh') return spawnSync('bash', ['-euo', 'pipefail', '-c', snippet.code], options);
  let code = snippet.code;
  if (kind === 'ts') code = require('amaro').transformSync(code, { mode: 'strip-only' }).code;
  const file = path.join(dir, `snippet.${kind === 'cjs' ? 'cjs' : 'mjs'}`);
  fs.writeFileSync(file, code);
  return spawnSync(process.execPath, [file], options);
}

const all = DOCS.flatMap(snippets);

test('the docs have snippets, and every opt-out names its reason', () => {
  assert.ok(all.length >= 8, `found ${all.length} snippets`);
  const runnable = all.filter((s) => s.fragment === null);
  assert.ok(runnable.length >= all.length / 2, 'at least half of the snippets run; fragments are the exception');
});

for (const snippet of all) {
  const name = `${snippet.file}:${snippet.line} (${snippet.language}) runs as written`;
  test(name, (t) => {
    if (snippet.fragment) {
      // A deliberate fragment: not run (its reason is in the doc, next to it).
      t.diagnostic(`fragment: ${snippet.fragment}`);
      return;
    }
    const result = run(snippet, project(t));
    assert.equal(result.error, undefined, String(result.error));
    assert.equal(result.status, 0, `exit ${result.status} ${result.signal ?? ''}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`);
  });
}

/** GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` dropped, spaces to dashes. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

test('every relative link of README.md and docs/*.md reaches a file of this repository, and its #anchor a heading there', () => {
  const broken = [];
  for (const file of DOCS) {
    // Links in prose only: fenced blocks and inline code (`tools[name](args)`) are not links.
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [where, anchor] = target.split('#');
      const resolved = where === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), where);
      if (!resolved.startsWith(`${ROOT}${path.sep}`) || !fs.existsSync(resolved)) {
        broken.push(`${file}: ${target} (no such file in the repository)`);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      const headings = fs.readFileSync(resolved, 'utf8').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, '')));
      if (!headings.includes(anchor)) broken.push(`${file}: ${target} (no heading #${anchor})`);
    }
  }
  assert.deepEqual(broken, []);
});
