'use strict';

// R6-1: an upload path's directories were not counted against the session's
// entry bound (MAX_FILES = 10 000, "a bound on inodes as well as bytes").
// Empty files 1000 directories deep: 40 files make 40 040 inodes on the
// host's disk (stateDir/workspaces), for 0 bytes of the uploadBytes ceiling.
// At ~2000 directories per 4 KiB path and 10 000 files, one session could
// make ~20 million inodes. Run after `npm run build`, from the repo root:
//   node __test__/security/findings/round6/upload-inodes.repro.js
// Prints OPEN (with the inode count) or FIXED (the host refused the upload).

const fs = require('node:fs');
const path = require('node:path');
const { startHost } = require('../../../remote-support');
const { frame, rawSession, sleep, UPLOAD } = require('./raw');

const FILES = 40;
const DEPTH = 1000;


function countInodes(dir) {
  let n = 0;
  const stack = [dir];
  while (stack.length) {
    const at = stack.pop();
    let entries = [];
    try { entries = fs.readdirSync(at, { withFileTypes: true }); } catch { continue; }
    for (const e of entries) {
      n += 1;
      if (e.isDirectory()) stack.push(path.join(at, e.name));
    }
  }
  return n;
}

async function main() {
  const host = await startHost();
  const workspaces = path.join(host.dir, 'state', 'workspaces');
  const { socket, received } = await rawSession(host.socket);
  const deep = 'a/'.repeat(DEPTH);
  for (let i = 0; i < FILES; i += 1) socket.write(frame(UPLOAD, { path: `f${i}/${deep}x`, data: '' }));
  await sleep(5000);
  const early = countInodes(workspaces);
  await sleep(5000);
  const inodes = countInodes(workspaces);
  const refused = received().includes(Buffer.from('files and directories'));
  socket.destroy();
  await host.stop();
  if (refused) console.log(`FIXED: the host refused the uploads (entries bound); ${early} inodes at 5 s, ${inodes} at 10 s`);
  else console.log(`OPEN: ${FILES} empty files made ${inodes} inodes under ${workspaces} (bound claims 10000)`);
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
