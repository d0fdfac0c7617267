'use strict';

// Every relative link in the README and docs/ names a file of this
// repository: links to ../../shared/… (the project's working notes, outside
// the repository) resolved in one checkout layout and were dead for every
// reader of the repository or the package.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

/** The page without fenced code blocks and inline code, where `x](y)` is code, not a link. */
function prose(text) {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

test('every relative link in README.md and docs/*.md names an existing file inside the repository', () => {
  const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];
  const dead = [];
  let checked = 0;
  for (const page of pages) {
    for (const [, target] of prose(fs.readFileSync(path.join(ROOT, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target)) continue;
      const file = path.resolve(ROOT, path.dirname(page), target.split('#')[0]);
      checked += 1;
      if (path.relative(ROOT, file).startsWith('..') || !fs.existsSync(file)) dead.push(`${page}: ${target}`);
    }
  }
  assert.ok(checked > 10, `only ${checked} links found: the pattern is wrong`);
  assert.deepEqual(dead, []);
});
