'use strict';

// Hosts for the remote-*.test.js suites and the remote pass of the shared
// suites (CORDON_TEST_REMOTE=unix): a real `cordon host --config FILE` child
// process on a Unix socket in a temp directory (loopback only, never a
// mock), and the pure-JS client of cordon/remote connected to it.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { cargoTargetDir } = require('../lib/platform-package');

const ROOT = path.join(__dirname, '..');
const CORDON = path.join(cargoTargetDir(), 'release', 'cordon');
const RUNNER = path.join(cargoTargetDir(), 'release', 'cordon-runner');
/** How long a host may take to create its socket (a loaded 2-core machine). */
const HOST_START_MS = 20_000;

/**
 * Ends a `cordon host` child that is still running: SIGTERM (it drains and
 * exits), SIGKILL if it lingers past 5 s; resolves once it has exited.
 */
async function terminate(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Still running, so 'exit' has not been emitted yet: this listener sees it.
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

/** The programs every test host serves: the runner, a few system tools, every top-level fixture (by file name). */
function defaultPrograms() {
  const programs = { 'cordon-runner': RUNNER, true: '/bin/true', false: '/bin/false', sh: '/bin/sh', cat: '/bin/cat', sleep: '/bin/sleep' };
  const fixtures = path.join(__dirname, 'fixtures');
  for (const entry of fs.readdirSync(fixtures, { withFileTypes: true })) {
    if (entry.isFile() && !entry.name.includes('.')) programs[entry.name] = path.join(fixtures, entry.name);
  }
  return programs;
}

/**
 * Starts `cordon host`: on a Unix socket in a temp directory, or where
 * `config.listen` says (`{tcp: '127.0.0.1:0'}` with `config.tls`: the port
 * the host chose is in `url`). `config` is merged over a default (the
 * programs above, a state directory in the temp directory). Resolves once
 * the host says it is listening. `binary`: another `cordon` to run (a
 * benchmark comparing builds); this checkout's by default.
 * @param {object} [config]
 * @param {{binary?: string}} [how]
 * @returns {Promise<{socket: string, url: string | null, child: import('node:child_process').ChildProcess, dir: string, output: () => string, stop: () => Promise<void>}>}
 */
async function startHost(config = {}, { binary = CORDON } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-remote-test-'));
  fs.chmodSync(dir, 0o755); // the sandbox uid traverses it to reach uploaded workspaces under stateDir
  const socket = path.join(dir, 'run', 'host.sock');
  fs.mkdirSync(path.dirname(socket), { mode: 0o700 });
  const file = path.join(dir, 'host.json');
  fs.writeFileSync(file, JSON.stringify({
    listen: { unix: socket },
    stateDir: path.join(dir, 'state'),
    ...config,
    programs: { ...defaultPrograms(), ...config.programs },
  }));
  const child = spawn(binary, ['host', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT'); // a test may have stopped it
    await terminate(child);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + HOST_START_MS;
  let listening;
  while (!(listening = /listening on (\S+)/.exec(output))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`cordon host did not start listening (exit ${child.exitCode}): ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = listening[1].startsWith('tls://') ? listening[1] : null;
  return { socket, url, child, dir, output: () => output, stop };
}

function openssl(args, cwd) {
  const run = require('node:child_process').spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

/**
 * Throwaway TLS material made with openssl in `dir` (files, as a host's
 * configuration names them): a CA, the host's certificate for 127.0.0.1,
 * a client certificate whose CN (the tenant) is `tenant-a`, and a client
 * certificate of another CA. Returns the paths and the PEM texts.
 */
function tlsMaterial(dir) {
  const key = (name) => openssl(['genpkey', '-algorithm', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`], dir);
  const ca = (name, cn) => {
    key(name);
    openssl(['req', '-x509', '-new', '-key', `${name}.key`, '-out', `${name}.pem`, '-days', '1', '-subj', `/CN=${cn}`], dir);
  };
  const leaf = (name, cn, issuer, ext) => {
    key(name);
    openssl(['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
    fs.writeFileSync(path.join(dir, `${name}.cnf`), ext);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial',
      '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.cnf`], dir);
  };
  ca('ca', 'cordon remote test CA');
  ca('other-ca', 'another CA');
  leaf('host', 'cordon-host', 'ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'tenant-a', 'ca', 'extendedKeyUsage=clientAuth\n');
  leaf('foreign', 'tenant-a', 'other-ca', 'extendedKeyUsage=clientAuth\n');
  const file = (name) => path.join(dir, name);
  const read = (name) => fs.readFileSync(file(name), 'utf8');
  return {
    file,
    ca: read('ca.pem'),
    otherCa: read('other-ca.pem'),
    client: { cert: read('client.pem'), key: read('client.key') },
    foreign: { cert: read('foreign.pem'), key: read('foreign.key') },
  };
}

module.exports = { startHost, terminate, tlsMaterial, defaultPrograms, CORDON, RUNNER, ROOT };

// ---- the remote pass of the shared suites (CORDON_TEST_REMOTE=unix) ----

/** Blocks this thread for `ms` (test support only: a host must exist before a suite's first spawn). */
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

let shared = null;

/**
 * One host for this test process, started synchronously on first use and
 * stopped when the process exits: on a Unix socket, or (`transport` "tls")
 * on 127.0.0.1 under mutual TLS with certificates made now. `programs` adds
 * to the default allowlist (only the first call's count).
 */
function sharedHost(programs = {}, transport = 'unix') {
  if (shared) return shared;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-remote-pass-'));
  fs.chmodSync(dir, 0o755);
  const socket = path.join(dir, 'run', 'host.sock');
  fs.mkdirSync(path.dirname(socket), { mode: 0o700 });
  const file = path.join(dir, 'host.json');
  const allowlist = { ...defaultPrograms(), ...programs };
  // The fixture runner is a Node script: its policy asks for 2 GiB of address space (code-mode-support.js hostilePolicy).
  const ceilings = { memoryBytes: 2 ** 31 };
  let listen = { unix: socket };
  let tlsConfig;
  let material = null;
  if (transport === 'tls') {
    const certs = path.join(dir, 'certs');
    fs.mkdirSync(certs, { mode: 0o700 });
    material = tlsMaterial(certs);
    listen = { tcp: '127.0.0.1:0' };
    tlsConfig = { cert: material.file('host.pem'), key: material.file('host.key'), clientCa: material.file('ca.pem') };
  }
  // The fixture runner is this Node: one outside the mirrored system
  // directories (an official binary in a cache, as CI uses) is bound by the
  // host's configuration, the only place extra binds can come from.
  const nodeDir = path.dirname(process.execPath);
  const extra = ['/usr/', '/bin/', '/sbin/', '/lib'].some((d) => nodeDir.startsWith(d)) ? [] : [{ path: nodeDir, access: 'read' }];
  fs.writeFileSync(file, JSON.stringify({ listen, tls: tlsConfig, stateDir: path.join(dir, 'state'), programs: allowlist, ceilings, extra }));
  const log = fs.openSync(path.join(dir, 'host.log'), 'w');
  const child = spawn(CORDON, ['host', '--config', file], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  process.on('exit', () => {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + HOST_START_MS;
  let listening;
  while (!(listening = /listening on (\S+)/.exec(fs.readFileSync(path.join(dir, 'host.log'), 'utf8')))) {
    if (Date.now() > deadline) throw new Error(`cordon host did not start listening: ${fs.readFileSync(path.join(dir, 'host.log'), 'utf8')}`);
    sleepSync(20);
  }
  const target = material
    ? { url: listening[1], tls: { ca: material.ca, ...material.client } }
    : { socket };
  const names = new Map(Object.entries(allowlist).map(([name, file2]) => [file2, name]));
  shared = { target, pid: child.pid, names };
  return shared;
}

/**
 * The local API's run surface over a shared host, for suites written against
 * `require('..')`: an absolute command[0] becomes its program name in the
 * host's allowlist (a path the host does not serve is refused by the client,
 * so the test fails loudly), as does Code Mode's runner.path.
 */
function remoteApi(programs = {}) {
  const { connectRemote } = require('../lib/remote');
  const hostInfo = sharedHost(programs, testRemote());
  const client = connectRemote(hostInfo.target);
  const program = (file) => hostInfo.names.get(file) ?? file;
  const runner = (options) => (options?.runner?.path ? { ...options, runner: { ...options.runner, path: program(options.runner.path) } } : options);
  return {
    ...client,
    spawnIsolated: (command, options) => client.spawnIsolated(Array.isArray(command) ? [program(command[0]), ...command.slice(1)] : command, options),
    createPool: (spawnOptions, poolOptions) => client.createPool(
      spawnOptions?.command ? { ...spawnOptions, command: [program(spawnOptions.command[0]), ...spawnOptions.command.slice(1)] } : spawnOptions, poolOptions),
    createCodeMode: (options) => client.createCodeMode(runner(options)),
    runnerPath: RUNNER,
    CordonError: require('../lib/errors').CordonError,
    /** Sandboxes run below the host: process censuses start there. */
    hostPid: hostInfo.pid,
  };
}

/** 'unix' or 'tls' when the shared suites run through a host (CORDON_TEST_REMOTE), else null. */
const testRemote = () => {
  const mode = process.env.CORDON_TEST_REMOTE;
  if (mode === undefined || mode === '') return null;
  if (mode !== 'unix' && mode !== 'tls') throw new Error(`CORDON_TEST_REMOTE=${mode}: "unix" or "tls" (docs/remote.md)`);
  return mode;
};

module.exports.sharedHost = sharedHost;
module.exports.remoteApi = remoteApi;
module.exports.testRemote = testRemote;
