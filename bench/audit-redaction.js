'use strict';

// The cost of a session audit record's command redaction (lib/sessions/audit.js:
// the shell credential forms of redact-command.js, then Code Mode's source
// redaction) on hostile commands of a quarter, half and all of MAX KiB (384:
// the adversarial test's size): a linear scan takes about 4x as long at the
// full size as at a quarter; a quadratic one 16x. On a loaded machine the
// ratios at 384 KiB are noise (GC, other processes): a larger MAX (8192)
// shows the trend (round 9, R9-8).
// Median ms over N records per shape and size.
// Usage: node bench/audit-redaction.js [records=5] [maxKiB=384]

const { auditRecord } = require('../lib/sessions/audit');

const RECORDS = Number(process.argv[2] ?? 5);
const MAX_KIB = Number(process.argv[3] ?? 384);
const SIZES = [MAX_KIB / 4, MAX_KIB / 2, MAX_KIB];
const KIB = 1024;
const fill = (unit, bytes) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
const SHAPES = {
  'curl -u without colon': (n) => `curl ${fill('-u a ', n)}`,
  'curl -u colon-less long word': (n) => `curl -u ${fill('a', n)}`,
  'URL authority without @': (n) => fill('://a:b', n),
  'secret header names': (n) => fill('Authorization:', n),
  'header with scheme words': (n) => fill('authorization: bearer ', n),
  'mysql -p words': (n) => `mysql ${fill('-p ', n)}`,
  '--token flags': (n) => fill('--token ', n),
  'quote runs in a program word': (n) => fill('"\';)', n),
  'separators': (n) => fill('; && | ', n),
  'colons in one word': (n) => fill('a:', n),
  'non-secret names with colons': (n) => fill('abcde:', n),
  'shell -c chains': (n) => fill('bash -c ', n),
  'password= chain (source pass)': (n) => fill('password=', n),
  'unclosed quotes (source pass)': (n) => `password="${fill('"\\', n)}`,
  // Round 11 (R11-3): quoted keys and values, auth tuples, Samba and openssl forms.
  'quoted keys never closed': (n) => fill('{"password":"', n),
  'escaped quoted keys': (n) => fill('\\"token\\":\\"', n),
  'auth tuples never finished': (n) => fill('auth=("a", auth=(\'', n),
  'smbclient -U words': (n) => `smbclient ${fill('-U a ', n)}`,
  'openssl -pass words': (n) => `openssl ${fill('-pass pass: ', n)}`,
};

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function time(script) {
  const out = [];
  for (let i = 0; i < RECORDS; i += 1) {
    const started = performance.now();
    auditRecord({ session: 's', scope: { tenant: 't', conversation: 'c' }, actor: 'a', operation: 'exec', argv: ['bash', '-c', script] });
    out.push(performance.now() - started);
  }
  return median(out);
}

console.log(`${'shape'.padEnd(34)} ${SIZES.map((k) => `${k} KiB`.padStart(9)).join(' ')}  ratio`);
for (const [name, make] of Object.entries(SHAPES)) {
  const [a, b, c] = SIZES.map((k) => time(make(k * KIB)));
  console.log(`${name.padEnd(34)} ${a.toFixed(2).padStart(9)} ${b.toFixed(2).padStart(9)} ${c.toFixed(2).padStart(9)}  ${(c / a).toFixed(1)}x`);
}
