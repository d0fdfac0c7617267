'use strict';

// The launcher's layout as a specification (issue 18 part D): its modules
// import one another without cycles, and its stage folders read as the
// launch — each imports only the stages before it. scripts/module-cycles.js
// reads the `crate::`/`super::` paths of the source (test code left out).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { graph, cycles } = require('../scripts/module-cycles.js');

const ROOT = path.resolve(__dirname, '..');
const LAUNCHER = path.join(ROOT, 'crates', 'launcher', 'src');
const RUNNER = path.join(ROOT, 'crates', 'runner', 'src');

// The launch sequence. A stage may import the stages before it and the
// shared base (error codes, events); the drivers (launch.rs, supervisor/,
// host_probe/ for `cordon doctor`) may import anything but are imported by
// no stage.
const STAGES = ['request', 'host', 'plan', 'run', 'observe', 'receipt'];
const BASE = ['error_code', 'events'];
const DRIVERS = ['launch', 'supervisor', 'host_probe'];

/** A crate in a temp dir: `files` maps a relative path to its text. */
function scratchCrate(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-cycles-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

test('the cycle finder sees a cycle through a brace import, a folder module and super::, and ignores test code', (t) => {
  const dir = scratchCrate({
    'lib.rs': 'pub mod a;\npub mod b;\n',
    'a/mod.rs': 'pub mod inner;\nuse crate::{b::{self, Thing}};\npub struct Outer;\n',
    'a/inner.rs': 'pub struct Inner;\n',
    'b.rs': '// crate::c is a comment\nconst S: &str = "crate::c";\npub fn f() -> super::a::Outer { todo!() }\n'
      + '#[cfg(test)]\nmod tests { use crate::c::X; }\n',
    'c.rs': 'use crate::a::inner::Inner;\n#[cfg(test)]\n#[path = "c_tests.rs"]\nmod tests;\n',
    'c_tests.rs': 'use crate::b::f;\n',
  });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const edges = graph(dir, 0);
  assert.deepEqual(cycles(edges), [['a', 'b']]);
  assert.deepEqual([...edges.get('c')], ['a::inner']);
  assert.deepEqual(cycles(graph(dir, 0, { tests: true })), [['a', 'b', 'c']]);
});

test('no two launcher modules import each other, directly or through others', () => {
  assert.deepEqual(cycles(graph(LAUNCHER, 0)), []);
});

test('each launcher stage folder imports only the stages before it', () => {
  const edges = graph(LAUNCHER, 1);
  const tops = fs.readdirSync(LAUNCHER).filter((n) => n !== 'snapshots').map((n) => n.replace(/\.rs$/, ''));
  const known = new Set([...STAGES, ...BASE, ...DRIVERS, 'lib', 'live_support', 'test_skip']);
  assert.deepEqual(tops.filter((n) => !known.has(n)), [], 'a new top-level module belongs in a stage folder (or in this test\'s list)');
  const wrong = [];
  for (const [from, targets] of edges) {
    for (const to of targets) {
      const ok = BASE.includes(to)
        || DRIVERS.includes(from)
        || (STAGES.includes(from) && STAGES.indexOf(to) >= 0 && STAGES.indexOf(to) < STAGES.indexOf(from))
        || (BASE.includes(from) && BASE.indexOf(to) < BASE.indexOf(from));
      if (!ok) wrong.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the runner has no import cycle', () => {
  // execute <-> extensions was broken (execute_rule.rs), evaluation <->
  // tool_bridge too (parse_ceiling lives in canonical_json.rs, beside the
  // spelling it bounds), fetch_bridge <-> tool_bridge as well (the fetch
  // frames and count both bridges use live in fetch_frames.rs).
  assert.deepEqual(cycles(graph(RUNNER, 0)), []);
});
