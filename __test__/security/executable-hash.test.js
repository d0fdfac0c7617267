'use strict';

// Issue 18 A2: the receipt's executableSha256 names the bytes that ran. The
// launcher used to cache the hash by (device, inode, size, mtime): a
// sandbox that can write the executable (or anyone on the host) rewrote it
// at the same size and put the mtime back, and the next run of the same
// provider recorded the old hash — running the new bytes (non-root
// provider) or the old staged copy instead of the file named (root
// provider). Now the executable is hashed and staged from one descriptor,
// the copy is what runs, and the cache key includes the change time, which
// user space cannot put back.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const h = require('./harness');

const skip = h.skipReason();

/** Same size, different bytes: `echo one`, `echo two`, `echo six`. */
const version = (word) => `#!/bin/sh\necho ${word}\n`;
const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * In one provider process (the hash cache is per process): run the program,
 * have a sandbox rewrite it with its mtime put back, run it again, rewrite
 * it from the host the same way, run it a third time. Returns each run's
 * output and receipt hash.
 */
function rewriteBetweenRuns(dir, asNobody) {
  const prog = path.join(dir, 'prog');
  const rewrite = (word) => `touch -r ${'$P'} ${'$P'}.ref && printf '#!/bin/sh\\necho ${word}\\n' > ${'$P'} && touch -r ${'$P'}.ref ${'$P'} && rm ${'$P'}.ref`;
  const script = `
    const { execFileSync } = require('node:child_process');
    const fs = require('node:fs');
    const runOnce = (command, options) => new Promise((resolve, reject) => {
      const ex = cordon.spawnIsolated(command, { deadlineMs: 30000, ...options });
      let out = '';
      ex.stderr.on('data', (d) => { out += d; });
      ex.protocol.resume();
      ex.wait().then((r) => resolve({ out: out.trim(), sha: r.receipt.command.executableSha256, returncode: r.returncode }), reject);
    });
    const mtime = () => fs.statSync(${JSON.stringify(prog)}, { bigint: true }).mtimeNs.toString();
    (async () => {
      const prog = ${JSON.stringify(prog)};
      const first = await runOnce([prog], { policy: cordon.readOnly() });
      const before = mtime();
      const inside = await runOnce(['/bin/sh', '-c', ${JSON.stringify(rewrite('two').replaceAll('$P', '/workspace/prog'))}],
        { policy: cordon.workspaceWrite(), workspace: ${JSON.stringify(dir)} });
      const afterInside = mtime();
      const second = await runOnce([prog], { policy: cordon.readOnly() });
      // A root provider rewrites it from the host too. A uid-65534 one
      // cannot put back the mtime of a file its sandbox's owner id owns
      // (utimensat needs the owner): that half is root's only.
      const hostRewrite = ${JSON.stringify(!asNobody)};
      if (hostRewrite) execFileSync('/bin/sh', ['-c', ${JSON.stringify(rewrite('six').replaceAll('$P', prog))}]);
      const afterHost = hostRewrite ? mtime() : afterInside;
      const third = hostRewrite ? await runOnce([prog], { policy: cordon.readOnly() }) : null;
      process.stdout.write(JSON.stringify({ first, inside, second, third, mtimes: [before, afterInside, afterHost] }));
    })();
  `;
  return h.runProvider(script, { asNobody, timeoutMs: 120_000 });
}

for (const asNobody of [false, true]) {
  const label = asNobody ? 'a provider of uid 65534' : 'a root provider';
  const needsRoot = process.geteuid() !== 0 ? 'needs root to give the program to the sandbox identity' : false;
  test(`a same-size rewrite with the mtime put back, from a sandbox and from the host, is what the next run of ${label} runs and records`, { skip: skip ?? needsRoot, timeout: 150_000 }, async () => {
    const dir = fs.mkdtempSync('/var/tmp/cordon-exec-hash-');
    try {
      fs.chmodSync(dir, 0o755);
      const prog = path.join(dir, 'prog');
      fs.writeFileSync(prog, version('one'), { mode: 0o755 });
      // The sandbox identity owns the directory, as a caller's writable
      // workspace. A uid-65534 provider's sandboxes run as its first
      // subordinate owner id (never as 65534).
      const owner = asNobody ? h.nobodyOwner() : { uid: h.SANDBOX_UID, gid: h.SANDBOX_UID };
      assert.ok(owner, 'uid 65534 has a subordinate range (.ci/run adds one)');
      fs.chownSync(dir, owner.uid, owner.gid);
      fs.chownSync(prog, owner.uid, owner.gid);

      // Older than the launcher's racy window (2 s), so the first hash is cached.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const run = rewriteBetweenRuns(dir, asNobody);
      assert.equal(run.error, undefined, run.error);
      const { first, inside, second, third, mtimes } = run.value;
      assert.deepEqual(first, { out: 'one', sha: sha256(version('one')), returncode: 0 });
      assert.equal(inside.returncode, 0, `the sandbox rewrote the program: ${inside.out}`);
      assert.equal(new Set(mtimes).size, 1, `the mtime was put back each time: ${mtimes}`);
      assert.deepEqual(second, { out: 'two', sha: sha256(version('two')), returncode: 0 }, 'after the sandbox\'s rewrite');
      if (!asNobody) assert.deepEqual(third, { out: 'six', sha: sha256(version('six')), returncode: 0 }, 'after the host\'s rewrite');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
