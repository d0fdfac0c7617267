#!/usr/bin/env node
'use strict';

// Import cycles between a Rust crate's modules, from its source text alone.
// Every `crate::…` path (in `use` lines and inline) and `super::…` path is
// resolved to the deepest module it names; an edge joins the module of the
// file that writes the path to that module (a folder's mod.rs and its
// children are modules like any other: plan/mod.rs importing a child that
// imports plan/mod.rs is a cycle).
// Test code (`#[cfg(test)]` modules, inline or in their own file) is left
// out unless `--tests`: a test may reach anywhere in the crate (live tests
// launch), which says nothing about the layering of what ships.
// Modules are then cut to `--depth` path components and the strongly
// connected components of more than one module are reported.
//
// Usage: node scripts/module-cycles.js [--depth N] [--tests] [--json] [crate src dir]
//   default dir crates/launcher/src, default depth: every module (deepest).
// Exit code 0 whether or not there are cycles; __test__/module-cycles.test.js
// asserts on the result (no cycle among the launcher's modules, stage
// folders importing only earlier stages).

const fs = require('node:fs');
const path = require('node:path');

/** Every .rs file under `dir`, with the module path it defines. */
function moduleFiles(dir) {
  const files = [];
  const walk = (sub) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.rs')) files.push(rel);
    }
  };
  walk('');
  return files.sort().map((rel) => ({ rel, module: moduleOf(dir, rel) }));
}

/**
 * The module a file defines: `a/b.rs` and `a/b/mod.rs` are `a::b`;
 * `lib.rs` is the crate root (''). A file included with
 * `#[path = "x_tests.rs"] mod tests;` belongs to its includer's module
 * (its `super::` is that module's parent's child), so it is attributed to
 * the includer: the test file of `a/b.rs` is `a::b::tests`.
 */
function moduleOf(dir, rel) {
  const parts = rel.replace(/\.rs$/, '').split(path.sep);
  const last = parts[parts.length - 1];
  if (last === 'lib' && parts.length === 1) return '';
  if (last === 'mod') parts.pop();
  const includer = pathIncluder(dir, rel);
  if (includer !== null) return `${moduleOf(dir, includer)}::tests`;
  return parts.join('::');
}

/** The file that includes `rel` through `#[path = "…"]`, or null. */
function pathIncluder(dir, rel) {
  const base = path.basename(rel);
  const folder = path.dirname(rel);
  for (const entry of fs.readdirSync(path.join(dir, folder))) {
    if (!entry.endsWith('.rs') || entry === base) continue;
    const text = fs.readFileSync(path.join(dir, folder, entry), 'utf8');
    if (text.includes(`#[path = "${base}"]`)) return path.join(folder, entry);
  }
  return null;
}

/** Source text without comments and string literals (paths in them are not imports). */
function code(text) {
  // One pass, so a `//` inside a string or a `"` inside a comment is seen
  // as what it is. Raw strings (r"…", r#"…"#), then strings, char literals
  // ('"', '{'; not lifetimes), line and block comments.
  return text.replace(
    /r(#*)"[\s\S]*?"\1|"(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\\n]|\\[^'\n]{1,10})'|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (m) => (m.startsWith('/') ? ' ' : '""'),
  );
}

/**
 * The paths a text names after `crate::` or `super::`, brace groups
 * expanded: `crate::{a::{b, c}, d}` → ['crate::a::b', 'crate::a::c', 'crate::d'].
 */
function paths(text) {
  const out = [];
  const re = /\b(crate|super)((?:\s*::\s*super)*)\s*::\s*/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    const prefix = m[1] + m[2].replace(/\s+/g, '');
    expand(text, re.lastIndex, prefix, out);
  }
  return out;
}

/** Parses one path (or brace group) at `at`, appending full paths to `out`; returns the end. */
function expand(text, at, prefix, out) {
  let i = at;
  const skip = () => { while (/\s/.test(text[i] ?? '')) i += 1; };
  skip();
  if (text[i] === '{') {
    i += 1;
    for (;;) {
      skip();
      if (text[i] === '}') return i + 1;
      if (i >= text.length) return i;
      i = expand(text, i, prefix, out);
      skip();
      if (text[i] === ',') i += 1;
    }
  }
  const ident = /^[A-Za-z_][A-Za-z0-9_]*|^\*/.exec(text.slice(i));
  if (!ident) { out.push(prefix); return i; }
  i += ident[0].length;
  const full = `${prefix}::${ident[0]}`;
  const sep = /^\s*::\s*/.exec(text.slice(i));
  if (sep) return expand(text, i + sep[0].length, full, out);
  out.push(full);
  return i;
}

/** The deepest known module a path names, from the module `from` it is written in. */
function resolve(p, from, modules) {
  const segs = p.split('::');
  let base = from === '' ? [] : from.split('::');
  if (segs[0] === 'crate') { base = []; segs.shift(); } else {
    while (segs[0] === 'super') { base = base.slice(0, -1); segs.shift(); }
  }
  let best = base.join('::');
  for (let n = 1; n <= segs.length; n += 1) {
    const candidate = [...base, ...segs.slice(0, n)].join('::');
    if (modules.has(candidate)) best = candidate; else break;
  }
  return best;
}

function cut(module, depth) {
  if (module === '') return '(lib)';
  return depth ? module.split('::').slice(0, depth).join('::') : module;
}

const related = (a, b) => a === b || a === '' || b === '';

const TEST_MOD = /#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*([;{])/g;

/** The child modules a file declares under `#[cfg(test)]` (`mod x;`). */
function testChildren(text, module) {
  const out = [];
  for (const m of text.matchAll(TEST_MOD)) if (m[2] === ';') out.push(module === '' ? m[1] : `${module}::${m[1]}`);
  return out;
}

/** `text` without its inline `#[cfg(test)] mod x { … }` blocks. */
function withoutInlineTests(text) {
  let out = text;
  for (;;) {
    const m = [...out.matchAll(TEST_MOD)].find((x) => x[2] === '{');
    if (!m) return out;
    let depth = 0;
    let i = m.index + m[0].length - 1;
    for (; i < out.length; i += 1) {
      if (out[i] === '{') depth += 1;
      if (out[i] === '}') { depth -= 1; if (depth === 0) break; }
    }
    out = out.slice(0, m.index) + out.slice(i + 1);
  }
}

/** The module graph of the crate at `dir`, cut to `depth` (0: every module). */
function graph(dir, depth, { tests = false } = {}) {
  const files = moduleFiles(dir);
  const modules = new Set(files.map((f) => f.module));
  const texts = new Map(files.map((f) => [f.rel, code(fs.readFileSync(path.join(dir, f.rel), 'utf8'))]));
  const testModules = new Set(files.flatMap((f) => testChildren(texts.get(f.rel), f.module)));
  const isTest = (m) => [...testModules].some((t) => m === t || m.startsWith(`${t}::`));
  const edges = new Map();
  for (const { rel, module } of files) {
    if (!tests && isTest(module)) continue;
    // A file's `tests` submodule (inline or #[path]) is part of the module.
    const from = module.replace(/::tests$/, '');
    const text = tests ? texts.get(rel) : withoutInlineTests(texts.get(rel));
    // `super::` in an inline `mod tests` names the file's own module.
    for (const p of paths(text)) {
      const target = resolve(p, module.endsWith('::tests') ? module : from, modules).replace(/::tests$/, '');
      if (related(from, target)) continue;
      const a = cut(from, depth);
      const b = cut(target, depth);
      if (a === b) continue;
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a).add(b);
    }
  }
  return edges;
}

/** Strongly connected components of more than one node (Tarjan), sorted. */
function cycles(edges) {
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next); low.set(v, next); next += 1;
    stack.push(v); onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const scc = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/** The longest chain of imports (levels) in the graph with each cycle collapsed. */
function levels(edges) {
  const sccOf = new Map();
  for (const scc of cycles(edges)) for (const v of scc) sccOf.set(v, scc.join('+'));
  const node = (v) => sccOf.get(v) ?? v;
  const dag = new Map();
  for (const [a, bs] of edges) {
    for (const b of bs) {
      if (node(a) === node(b)) continue;
      if (!dag.has(node(a))) dag.set(node(a), new Set());
      dag.get(node(a)).add(node(b));
    }
  }
  const memo = new Map();
  const depthOf = (v) => {
    if (memo.has(v)) return memo.get(v);
    memo.set(v, 1);
    let d = 1;
    for (const w of dag.get(v) ?? []) d = Math.max(d, 1 + depthOf(w));
    memo.set(v, d);
    return d;
  };
  let max = 0;
  for (const v of dag.keys()) max = Math.max(max, depthOf(v));
  return max;
}

module.exports = { graph, cycles, levels };

if (require.main === module) {
  process.stdout.on('error', (e) => { if (e.code !== 'EPIPE') throw e; });
  const args = process.argv.slice(2);
  const depthAt = args.indexOf('--depth');
  const depth = depthAt >= 0 ? Number(args.splice(depthAt, 2)[1]) : 0;
  const json = args.includes('--json');
  const tests = args.includes('--tests');
  const dir = args.find((a) => !a.startsWith('--')) ?? path.join(__dirname, '..', 'crates', 'launcher', 'src');
  const edges = graph(dir, depth, { tests });
  const found = cycles(edges);
  if (json) {
    process.stdout.write(`${JSON.stringify({ cycles: found, levels: levels(edges) })}\n`);
  } else {
    process.stdout.write(`${found.length} cycle(s) at depth ${depth || 'all'}; ${levels(edges)} import levels\n`);
    for (const scc of found) {
      process.stdout.write(`  ${scc.join(' <-> ')}\n`);
      for (const v of scc) {
        const into = [...(edges.get(v) ?? [])].filter((w) => scc.includes(w)).sort();
        process.stdout.write(`    ${v} -> ${into.join(', ')}\n`);
      }
    }
  }
}
