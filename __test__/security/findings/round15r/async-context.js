'use strict';
// R15r: the async context a pulled protocol 'data' listener runs in. fd 3's
// chunks are delivered by napi_make_callback(env, NULL async context, global,
// ...) from the poll callback (src/loop_callback.rs make_callback), no longer
// through the run's threadsafe function (an async resource created at spawn).
//  Part 1: a provider that tags work with AsyncLocalStorage around
//   spawnIsolated reads als.getStore() in its listeners. Controls: the same
//   run's stderr 'data' (threadsafe function), a child-process pipe made
//   inside the same als.run.
//  Part 2: run A's protocol listener calls als.enterWith() (a per-message
//   context); run B, spawned later inside als.run({req:'B'}), reads the store
//   in its own protocol listener. With every pulled call sharing one resource
//   (globalThis, async id 0) A's store shows up in B's listener.
const path = require('node:path');
const { AsyncLocalStorage, executionAsyncId, executionAsyncResource } = require('node:async_hooks');
const { spawn } = require('node:child_process');
const PKG = process.env.R14_PKG || path.resolve(__dirname, '../../../..');
const cordon = require(PKG);
const als = new AsyncLocalStorage();
const run = (cmd) => { const e = cordon.spawnIsolated(['/bin/sh', '-c', cmd], { policy: cordon.readOnly() }); return e; };
(async () => {
  const seen = {};
  await als.run({ req: 'r1' }, async () => {
    const ex = run('echo frame >&3; echo err >&2; sleep 0.2; echo frame2 >&3');
    ex.protocol.on('data', () => { (seen.protocolData ??= []).push(als.getStore()?.req ?? null); seen.protocolAsyncId = executionAsyncId(); seen.resourceIsGlobal = executionAsyncResource() === globalThis; });
    ex.stderr.on('data', () => { seen.stderrData = als.getStore()?.req ?? null; });
    const ch = spawn('/bin/sh', ['-c', 'echo x'], { stdio: ['ignore', 'pipe', 'ignore'] });
    ch.stdout.on('data', () => { seen.childPipeData = als.getStore()?.req ?? null; });
    const closed = new Promise((r) => ch.on('close', r));
    await ex.wait();
    await closed;
  });
  // Part 2
  const a = als.run({ req: 'A' }, () => run('echo a >&3'));
  a.stderr.resume();
  a.protocol.on('data', () => { als.enterWith({ req: 'A-message' }); });
  await a.wait();
  const b = als.run({ req: 'B' }, () => run('sleep 0.1; echo b >&3'));
  b.stderr.resume();
  b.protocol.on('data', () => { seen.runBSees = als.getStore()?.req ?? null; });
  await b.wait();
  const s = `node ${process.version}: ${JSON.stringify(seen)}`;
  const lost = (seen.protocolData || []).some((v) => v !== 'r1') && seen.childPipeData === 'r1';
  const leaked = seen.runBSees === 'A-message';
  console.log(lost || leaked ? `FINDING: ${leaked ? 'run A\'s store leaks into run B\'s listener; ' : ''}${lost ? 'spawn-time store lost; ' : ''}${s}` : `held (${s})`);
})();
