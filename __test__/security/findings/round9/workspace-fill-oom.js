'use strict';
// R9: with the defaults (workspaceBytes 256 MiB, the preset's 256 MiB memory ceiling), a
// command that fills the session workspace is OOM-killed before the tmpfs is full: the
// tmpfs pages it writes are charged to the session's memory cgroup, whose ceiling is no
// larger than the workspace. The agent dies with it, the session ends
// (ERR_CORDON_SESSION_AGENT_FAILED) and its workspace (every file of the conversation)
// is removed. docs/sessions.md: "Filling it fails inside the sandbox with ENOSPC".
// (A root provider with a memory cgroup; a non-root provider has rlimits only.)
//   node workspace-fill-oom.js           defaults: VULNERABLE when the fill is killed / session ends
//   node workspace-fill-oom.js control   workspaceBytes 64 MiB: the fill ends in ENOSPC, session lives
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  const control = process.argv[2] === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-fill-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({
    secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(),
    authorize: () => true, ...(control ? { workspaceBytes: 64 << 20 } : {}),
  });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  try {
    await s.writeFile('notes.md', '# the conversation so far\n');
    // 10 MB files until the workspace refuses one (ENOSPC) — what a model downloading a dataset does
    const script = 'i=0; while head -c 10000000 /dev/zero > /workspace/part$i 2>/dev/null; do i=$((i+1)); done; echo "stopped at part$i: $(du -sm /workspace | cut -f1) MB"';
    let fill;
    try {
      const r = await s.exec({ shell: 'bash', script }, { timeoutMs: 120_000 });
      fill = `exit ${r.exitCode} signal ${r.signal}: ${r.stdout.trim()}`;
    } catch (e) { fill = `rejected ${e.code}`; }
    console.log('fill:', fill);
    let after;
    try { after = `alive, notes.md = ${JSON.stringify(String(await s.readFile('notes.md')))}`; } catch (e) { after = `gone (${e.code})`; }
    console.log('session after the fill:', after);
    let next = 'not run';
    if (after.startsWith('alive')) {
      try { const r = await s.exec(['echo', 'next command'], { timeoutMs: 30_000 }); next = `exit ${r.exitCode} signal ${r.signal} ${JSON.stringify(r.stdout)}`; } catch (e) { next = `rejected ${e.code}`; }
    }
    console.log('the next command:', next);
    const receipt = await s.end();
    console.log('end:', receipt.endReason, 'oomKills', receipt.sandbox?.receipt?.confinement?.cgroupOutcome?.oomKills);
    const ok = after.startsWith('alive') && /stopped at/.test(fill) && next.startsWith('exit 0');
    console.log(control ? (ok ? 'control ok' : 'control FAILED') : (ok ? 'held' : 'VULNERABLE: filling the workspace ends in an OOM kill, not ENOSPC'));
  } finally {
    await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
