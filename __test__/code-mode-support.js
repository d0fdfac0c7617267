'use strict';

// Shared by the code-mode integration tests: the real package entry point,
// the fixture runner, sample tools, and a process census of live sandboxes.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const remote = require('./remote-support');

const HOSTILE_SOURCE = path.join(__dirname, 'fixtures', 'fake-runner-hostile');
/** Directories every sandbox mirrors read-only (docs/policy.md). */
const MIRRORED = ['/usr/', '/bin/', '/sbin/', '/lib'];
/** The running Node, resolved: the fixture runs on it, inside the sandbox. */
const NODE = fs.realpathSync(process.execPath);

/**
 * A fixture runner (a Node script), as a world-readable copy whose shebang is
 * the running Node (not a fixed /usr/bin/node, which a machine may lack or
 * which may be another version), in a temp dir the sandbox uid can read when
 * the provider is root (a checkout under a 0700 /root is not). Made once per
 * process and fixture.
 */
function runnableFixture(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cordon-${name}-`));
  fs.chmodSync(dir, 0o755);
  const file = path.join(dir, name);
  const body = fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8').replace(/^#!.*\n/, `#!${NODE}\n`);
  fs.writeFileSync(file, body, { mode: 0o755 });
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return file;
}
const HOSTILE_RUNNER = runnableFixture(path.basename(HOSTILE_SOURCE));
/**
 * The API under test: this package, or with CORDON_TEST_REMOTE=unix the same
 * run surface through a `cordon host` child process that serves the fixture runner too.
 */
const cordon = remote.testRemote() ? remote.remoteApi({ 'fake-runner-hostile': HOSTILE_RUNNER }) : require('..');

/**
 * The fixture runner is a Node script, and V8 reserves far more address space
 * than QuickJS: under the presets' 256 MiB RLIMIT_AS it dies before its first
 * line ("Failed to reserve virtual memory for CodeRange"). Node 20 and 22
 * start under 1 GiB, Node 24 does not: it gets 2 GiB.
 * A Node outside the mirrored system directories (an official binary in a
 * cache, say) is mounted read-only at its own path.
 */
function hostilePolicy() {
  const policy = JSON.parse(JSON.stringify(cordon.readOnly()));
  policy.resources.memoryBytes = 2 ** 31;
  // A remote host refuses extra binds from the wire: the shared test host
  // binds this Node's directory from its own configuration (remote-support.js).
  if (!MIRRORED.some((dir) => NODE.startsWith(dir)) && !remote.testRemote()) {
    policy.filesystem.extra = [{ path: path.dirname(NODE), access: 'read' }];
  }
  return policy;
}

/** A Code Mode host over the real sandbox; `runner: 'hostile'` selects the fixture runner. */
function codeMode({ runner, ...options } = {}) {
  if (runner === 'hostile') {
    return cordon.createCodeMode({ tools: [], policy: hostilePolicy(), ...options, runner: { path: HOSTILE_RUNNER, stop: { graceMs: 300, forceMs: 1000 } } });
  }
  return cordon.createCodeMode({ tools: [], ...options, ...(runner ? { runner } : {}) });
}

const ORDERS = Object.freeze([
  { id: 'A-1', customer: 'ada', status: 'open', total: 120.5, card: { number: '4111111111111111', token: 'tok_live_1' } },
  { id: 'A-2', customer: 'bob', status: 'shipped', total: 40, card: { number: '5500000000000004', token: 'tok_live_2' } },
  { id: 'A-3', customer: 'ada', status: 'open', total: 15.25, card: { number: '340000000000009', token: 'tok_live_3' } },
]);

/** Orders tools over an in-memory store; `calls` records what handlers actually ran. */
function orderTools(calls = []) {
  return [
    {
      name: 'orders.search', description: 'Search orders by customer and status', effect: 'read',
      inputSchema: { type: 'object', properties: { customer: { type: 'string' }, status: { enum: ['open', 'shipped'] } }, additionalProperties: false },
      handler: (args) => { calls.push(['orders.search', args]); return ORDERS.filter((o) => (!args.customer || o.customer === args.customer) && (!args.status || o.status === args.status)); },
      project: (orders) => orders.map(({ id, status, total }) => ({ id, status, total })),
    },
    {
      name: 'orders.get', description: 'Get one order by id', effect: 'read',
      inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: '^A-[0-9]+$' } }, required: ['id'], additionalProperties: false },
      handler: (args) => { calls.push(['orders.get', args]); return ORDERS.find((o) => o.id === args.id) ?? null; },
    },
    {
      name: 'orders.cancel', description: 'Cancel an order', effect: 'write',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
      handler: (args) => { calls.push(['orders.cancel', args]); return { cancelled: args.id }; },
    },
  ];
}

/** A read tool with a given handler, for one-off behaviours. */
function tool(name, handler, extra = {}) {
  return { name, description: `test tool ${name}`, effect: 'read', inputSchema: { type: 'object' }, handler, ...extra };
}

function readStat(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return { pid: Number(pid), comm, ppid };
  } catch {
    return null; // the process ended while we looked
  }
}

/** Every process below `rootPid` (any depth), and all processes by pid. */
function descendants(rootPid) {
  const procs = fs.readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name)).map(readStat).filter(Boolean);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const descends = (p) => {
    for (let cur = p, hops = 0; cur && hops < 64; cur = byPid.get(cur.ppid), hops += 1) if (cur.ppid === rootPid) return true;
    return false;
  };
  return { mine: procs.filter(descends), byPid };
}

/** Pids of the cordon-runner processes below `rootPid`, ascending. */
function runnerPids(rootPid = cordon.hostPid ?? process.pid) {
  return descendants(rootPid).mine.filter((p) => p.comm === 'cordon-runner').map((p) => p.pid).sort((a, b) => a - b);
}

/**
 * Sandboxes alive below this test process, counted two ways: outermost bwrap
 * processes and cordon-runner processes.
 */
function sandboxCensus(rootPid = cordon.hostPid ?? process.pid) {
  const { mine, byPid } = descendants(rootPid);
  return {
    bwrap: mine.filter((p) => p.comm === 'bwrap' && byPid.get(p.ppid)?.comm !== 'bwrap').length,
    runners: mine.filter((p) => p.comm === 'cordon-runner').length,
  };
}

/** Runs every program on `mode`, `concurrency` at a time; the results in program order. */
async function runAll(mode, codes, concurrency) {
  const runs = new Array(codes.length);
  let next = 0;
  const worker = async () => {
    while (next < codes.length) {
      const index = next;
      next += 1;
      runs[index] = await mode.run(codes[index]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return runs;
}

module.exports = { cordon, codeMode, runAll, orderTools, tool, sandboxCensus, runnerPids, runnableFixture, hostilePolicy, HOSTILE_RUNNER, ORDERS };
