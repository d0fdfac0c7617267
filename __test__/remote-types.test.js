'use strict';

// cordon/remote's declarations (lib/remote/index.d.ts, .d.mts): a consumer
// compiles under `tsc --strict --module nodenext` as CommonJS and as ESM; a
// host path where the remote API takes uploaded files does not.

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
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-remote-types-'));
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(modules, 'cordon'));
  for (const types of ['node', 'json-schema']) fs.symlinkSync(path.join(ROOT, 'node_modules', '@types', types), path.join(modules, '@types', types));
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
  }));
});

after(() => fs.rmSync(project, { recursive: true, force: true }));

const CONSUMER = `
import { connectRemote, CordonError, type RemoteClient, type RemoteExecution } from 'cordon/remote';

export async function use(): Promise<number | null> {
  const remote: RemoteClient = connectRemote({ socket: '/run/cordon/host.sock' }, { slackMs: 5000 });
  const tls = connectRemote({ url: 'tls://127.0.0.1:7443', tls: { ca: 'CA', cert: 'C', key: 'K' }, token: 't' });
  void tls;
  const execution: RemoteExecution = remote.spawnIsolated(['cordon-runner'], {
    policy: remote.readOnly(), deadlineMs: 1000, workspace: { files: { 'a.txt': 'x', 'b.bin': Buffer.from([1]) } },
  });
  const clamped = execution.remote?.clamped;
  void clamped;
  const mode = remote.createCodeMode({ tools: [] });
  const run = await mode.run('return 1;');
  const pool = remote.createPool({ command: ['cordon-runner'], policy: remote.profile('untrusted') }, { size: 1 });
  await pool.close();
  try {
    return (await execution.wait()).returncode;
  } catch (error) {
    if (error instanceof CordonError && error.code === 'ERR_CORDON_REMOTE_TIMEOUT') return run.ok ? 1 : 0;
    throw error;
  } finally {
    await remote.close();
  }
}
`;

function check(source, file) {
  for (const name of ['consumer.ts', 'consumer.mts']) fs.rmSync(path.join(project, name), { force: true });
  fs.writeFileSync(path.join(project, file), source);
  return spawnSync(TSC, ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', timeout: 300_000 });
}

test('a consumer of cordon/remote type-checks with tsc --strict, as CommonJS and as ESM', () => {
  for (const file of ['consumer.ts', 'consumer.mts']) {
    const result = check(CONSUMER, file);
    assert.equal(result.status, 0, `${file}: ${result.stdout}${result.stderr}`);
  }
});

test('a workspace given as a host directory fails to type-check against cordon/remote', () => {
  const result = check(CONSUMER.replace("workspace: { files: { 'a.txt': 'x', 'b.bin': Buffer.from([1]) } }", "workspace: '/srv/data'"), 'consumer.ts');
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /consumer\.ts.*error TS\d+/);
});
