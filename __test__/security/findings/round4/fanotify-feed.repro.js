'use strict';
// Finding R4-1: fanotify is not filtered. A sandbox marks a host-bound
// directory (/usr/bin) with FAN_OPEN_EXEC|FAN_EVENT_ON_CHILD and reads, by
// name, every program any host process executes from it — the live feed
// round 3 closed for inotify (seccomp denies inotify_init*), reopened
// through fanotify_init(FAN_REPORT_DFID_NAME), unprivileged since Linux 5.13.
// Run as root: `node fanotify-feed.repro.js`. Prints OPEN/blocked for a root
// provider and for a provider of uid 65534.
const { spawn } = require('node:child_process');
const h = require('../../harness');
const { build } = require('./run');

const probe = build();

const script = `
const execution = cordon.spawnIsolated([${JSON.stringify(probe)}, 'fanotify', '/usr/bin', '4'], { policy: cordon.readOnly() });
let text = '';
execution.stderr.on('data', (c) => { text += c; });
execution.protocol.resume();
execution.wait().then((o) => { process.stdout.write(JSON.stringify({ text, uid: o.receipt.identity ?? null, alloc: o.receipt.uidAllocation ?? null })); });
`;

async function main() {
  for (const asNobody of [false, true]) {
    // runProvider is synchronous (spawnSync): host activity comes from a helper shell.
    const helper = spawn('/bin/sh', ['-c', 'for i in $(seq 1 30); do /usr/bin/true; /usr/bin/id >/dev/null; sleep 0.2; done'], { stdio: 'ignore' });
    const run = h.runProvider(script, { asNobody });
    helper.kill();
    const who = asNobody ? 'provider uid 65534' : 'root provider';
    if (run.skip || run.error) { console.log(`${who}: ${run.skip ?? run.error}`); continue; }
    const line = /^RESULT fanotify-feed (\S+) (.*)$/m.exec(run.value.text);
    console.log(`${who}: ${line ? `${line[1] === 'open' ? 'OPEN' : 'blocked'}: ${line[2]}` : `no result: ${run.value.text}`}`);
  }
}
main();
