'use strict';
// Another local user (uid 61235) created the sessions root first, mode 0777
// (or it is a symlink to their directory). Does the manager refuse it, or
// mount workspaces in a directory that user controls (who could then swap
// <root>/<key> for a link between the provider's mkdir and its mount)?
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../../..');
async function main() {
  const A = 61235;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-r5-root-'));
  fs.chmodSync(base, 0o777);
  for (const mode of ['dir', 'link']) {
    const root = path.join(base, `sessions-${mode}`);
    const theirs = path.join(base, `theirs-${mode}`);
    const cmd = mode === 'dir' ? `mkdir -m 0777 ${root}` : `mkdir -m 0777 ${theirs} && ln -s ${theirs} ${root}`;
    spawnSync('/bin/sh', ['-c', cmd], { uid: A, gid: A });
    try {
      const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true });
      const s = await m.acquire({ tenant: 't', conversation: mode }, { id: 'a' });
      const st = fs.lstatSync(path.dirname(s.workspace));
      console.log(`${mode}: ACCEPTED: workspace ${s.workspace} in a directory of uid ${st.uid} mode ${(st.mode & 0o7777).toString(8)}${mode === 'link' ? ' (through a link of uid ' + A + ')' : ''}`);
      await s.end();
    } catch (e) {
      console.log(`${mode}: refused ${e.code} ${e.message.slice(0, 200)}`);
    }
  }
  fs.rmSync(base, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
