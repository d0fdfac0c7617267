'use strict';
// Sessions: does every call settle under awkward callers? end() from inside onStdout, end() while an exec's stdin
// iterable never yields, a start()ed command's wait() after end(), onStdout that throws, odd timeoutMs values,
// exec while end() is in progress. Each case has a 15 s guard; "HUNG" is a finding. Control: a plain exec.
// Usage (root or uid 65534): node session-settle.js
const { withManager } = require('./h.js');
const guard = (p, ms = 15000) => Promise.race([p.then((v) => ({ ok: v }), (e) => ({ err: e.code || String(e) })), new Promise((r) => setTimeout(() => r('HUNG'), ms))]);
const show = (x) => x === 'HUNG' ? 'HUNG' : x.err ? 'rejected ' + x.err : 'resolved ' + JSON.stringify(x.ok && typeof x.ok === 'object' ? { exitCode: x.ok.exitCode, signal: x.ok.signal, timedOut: x.ok.timedOut, endReason: x.ok.endReason } : x.ok);
(async () => {
  const results = {};
  await withManager({}, async (sessions) => {
    let n = 0;
    const acq = () => sessions.acquire({ tenant: 't', conversation: 'c' + (n++) }, { tenant: 't' });
    const s0 = await acq();
    results.control = await guard(s0.exec(['echo', 'hi']));
    // 1. end() from inside onStdout
    const s1 = await acq(); let endP;
    results['end() inside onStdout: exec'] = await guard(s1.exec({ shell: 'bash', script: 'echo a; sleep 1; echo b; sleep 30' }, { onStdout: () => { if (!endP) endP = s1.end(); } }));
    results['end() inside onStdout: end'] = await guard(endP || Promise.resolve('no-call'));
    // 2. stdin iterable that never yields, end() meanwhile
    const s2 = await acq();
    const never = { [Symbol.asyncIterator]() { return { next: () => new Promise(() => {}) }; } };
    const e2 = s2.exec(['cat'], { stdin: never });
    await new Promise((r) => setTimeout(r, 500));
    const end2 = s2.end();
    results['never-yielding stdin: exec after end()'] = await guard(e2);
    results['never-yielding stdin: end()'] = await guard(end2);
    // 3. start() then end(); wait() and kill() after
    const s3 = await acq();
    const h = await s3.start({ shell: 'bash', script: 'sleep 60' });
    results['start: end()'] = await guard(s3.end());
    results['start: wait() after end()'] = await guard(h.wait());
    results['start: kill() after end()'] = await guard(Promise.resolve().then(() => h.kill()));
    // 4. onStdout throws
    const s4 = await acq();
    results['onStdout throws'] = await guard(s4.exec({ shell: 'bash', script: 'echo x; sleep 0.2; echo y' }, { onStdout: () => { throw new Error('boom'); } }));
    results['after onStdout threw: next exec'] = await guard(s4.exec(['true']));
    // 5. odd timeoutMs
    for (const t of [0, -1, 0.5, 1e308, NaN, Infinity, 2 ** 31, '5']) results[`timeoutMs ${String(t)}`] = await guard(s4.exec({ shell: 'bash', script: 'sleep 1' }, { timeoutMs: t }), 20000);
    // 6. exec issued while end() runs
    const s6 = await acq(); await s6.exec(['true']);
    const end6 = s6.end(); const e6 = s6.exec(['sleep', '5']);
    results['exec during end()'] = await guard(e6); results['end() with exec racing'] = await guard(end6);
    // 7. stdin Readable that errors midway
    const { Readable } = require('node:stream');
    const s7 = await acq();
    const bad = new Readable({ read() { this.push('abc'); setTimeout(() => this.destroy(new Error('src-fail')), 50); } });
    results['stdin Readable errors'] = await guard(s7.exec(['cat'], { stdin: bad }));
    results['after stdin error: next exec'] = await guard(s7.exec(['true']));
  });
  for (const [k, v] of Object.entries(results)) console.log(k.padEnd(42), show(v));
  const hung = Object.entries(results).filter(([, v]) => v === 'HUNG').map(([k]) => k);
  console.log(results.control === 'HUNG' || results.control.err ? 'control failed' : hung.length ? `FINDING: calls that never settled (15 s): ${hung.join('; ')}` : 'held');
})().catch((e) => { console.error(e); process.exitCode = 1; });
