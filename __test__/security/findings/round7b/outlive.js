'use strict';
// Outlive end(): double fork, setsid, ignore signals, stopped processes; leftovers after end().
const L = require('./lib');
const asNobody = process.argv[2] !== 'root';
const dir = L.scratch(asNobody);
const tag = 'atk21b-outlive-' + process.pid;
const body = `
  const s = await m.acquire(scope('c1'), actor);
  const r = async (name, script, o) => { const x = await sh(s, script, o).catch((e) => ({ err: e.code + ' ' + e.message })); out({ name, ...x }); };
  await r('spawn', \`
    (setsid bash -c 'trap "" TERM HUP INT; exec -a ${tag}-a sleep 300' </dev/null >/dev/null 2>&1 &) ;
    (nohup bash -c 'exec -a ${tag}-b sleep 300' </dev/null >/dev/null 2>&1 &) ;
    (bash -c 'exec -a ${tag}-c sleep 300' & ) </dev/null >/dev/null 2>&1;
    (sh -c 'kill -STOP \\$\\$; exec sleep 300' &) </dev/null >/dev/null 2>&1;
    echo data > /tmp/${tag}; echo data > /dev/shm/${tag};
    sleep 0.3; ps -eo pid,ppid,stat,comm 2>/dev/null || true\`);
  out({ holders: fs.readdirSync('/proc').filter((p) => /^\\\\d+$/.test(p)).filter((p) => { try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').includes('session-holder'); } catch { return false; } }) });
  const rc = await s.end();
  out({ endReason: rc.endReason, contained: rc.sandbox?.receipt?.containmentConfirmed });
  out({ rootAfter: fs.readdirSync(dir + '/root') });
`;
const res = L.run(dir, body, { asNobody });
for (const l of res.lines) console.log(JSON.stringify(l).slice(0, 2000));
console.log('status', res.status, res.signal, res.stderr.slice(0, 1500));
console.log('tagged procs left:', L.withTag(tag));
console.log('procs of owner uids:', asNobody ? L.procsOfUids(1342177280, 1342177280 + 131072) : L.procsOfUids(1879048193, 1879113727));
console.log('holders left:', L.withTag('session-holder'));
const fsn = require('node:fs');
console.log('host /tmp,/dev/shm leftovers:', fsn.readdirSync('/tmp').filter((n) => n.includes(tag)), fsn.readdirSync('/dev/shm').filter((n) => n.includes(tag)));
