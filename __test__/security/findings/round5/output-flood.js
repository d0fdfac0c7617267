'use strict';
// Output floods: exec with a 1 MiB cap while the command writes 400 MiB;
// start() background commands flooding and never waited; a background
// writer that outlives its command. Measures provider RSS and loop stalls.
const { manager, withTimeout } = require('./session-common');
async function main() {
  const m = manager();
  const s = await m.sessions.acquire({ tenant: 't', conversation: 'flood' }, { id: 'a' });
  const rss = () => (process.memoryUsage().rss / 2 ** 20).toFixed(0);
  let maxGap = 0; let last = Date.now();
  const iv = setInterval(() => { const n = Date.now(); maxGap = Math.max(maxGap, n - last); last = n; }, 5);
  console.log('rss0', rss());
  const t0 = Date.now();
  const r = await s.exec({ shell: 'bash', script: 'head -c 400000000 /dev/zero; head -c 400000000 /dev/zero >&2' }, { timeoutMs: 120000 });
  console.log(`flood exec: kept ${r.stdout.length + r.stderr.length} outputBytes ${r.outputBytes} truncated ${r.truncated} exit ${r.exitCode} ${Date.now() - t0} ms rss ${rss()} gap ${maxGap}`);
  // 7 background floods never waited
  const handles = [];
  for (let i = 0; i < 7; i++) handles.push(await s.start({ shell: 'bash', script: 'exec cat /dev/zero' }));
  await new Promise((res) => setTimeout(res, 20000));
  console.log(`after 20 s of 7 un-waited background floods: rss ${rss()} MiB, max loop gap ${maxGap} ms`);
  // A command whose background child keeps writing to the command's stdout after it exits
  const r2 = await withTimeout(s.exec({ shell: 'bash', script: '(while :; do echo leak; done) & echo done' }, { timeoutMs: 5000 }), 30000);
  console.log('exec with lingering writer:', r2.settled ? JSON.stringify({ exit: r2.value?.exitCode, bytes: r2.value?.outputBytes, err: r2.error?.code }) : 'no settle');
  const b = await withTimeout(s.exec(['/bin/true']), 10000);
  console.log('8th command while 7 floods run:', b.settled ? (b.value ? 'ran' : b.error.code) : 'no settle');
  for (const h of handles) h.kill('SIGKILL');
  const w = await withTimeout(Promise.all(handles.map((h) => h.wait())), 15000);
  console.log('background waits:', w.settled ? w.value?.map((x) => x.outputBytes).join(',') : 'no settle');
  clearInterval(iv);
  const t1 = Date.now();
  const e = await withTimeout(s.end(), 30000);
  console.log('end', e.settled ? `${Date.now() - t1} ms removed=${e.value.workspace.removed}` : 'no settle', 'rss', rss());
  m.cleanup();
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
