'use strict';

// Redaction of event values and of source for the audit record.

const test = require('node:test');
const assert = require('node:assert/strict');
const { redactValue, MAX_REDACT_NODES } = require('../lib/code-mode/redact');
const { redactSource, truncateUtf8 } = require('../lib/code-mode/redact-source');
const { buildAuditRecord, AUDIT_SOURCE_BYTES } = require('../lib/code-mode/audit');

test('values under secret-looking keys are redacted at any depth, whatever their type', () => {
  const redacted = redactValue({
    user: 'bob',
    count: 3,
    nested: { deeper: [{ accessToken: 'abc', ok: true }, { 'X-Api-Key': { k: 1 } }] },
    Authorization: 'Bearer x', session_cookie: 'c', privateKey: 'p', db_password: 'p', credentials: ['a'], clientSecret: 's',
  });
  assert.deepEqual(redacted, {
    user: { type: 'string', utf8Bytes: 3 },
    count: 3,
    nested: { deeper: [{ accessToken: '[REDACTED]', ok: true }, { 'X-Api-Key': '[REDACTED]' }] },
    Authorization: '[REDACTED]', session_cookie: '[REDACTED]', privateKey: '[REDACTED]', db_password: '[REDACTED]',
    credentials: '[REDACTED]', clientSecret: '[REDACTED]',
  });
});

test('a "__proto__" key in the arguments stays an own key of the redacted copy and is redacted like any other', () => {
  const redacted = redactValue(JSON.parse('{"__proto__":{"password":"hunter2","note":"n"},"a":1}'));
  assert.deepEqual(Object.keys(redacted), ['__proto__', 'a']);
  assert.equal(Object.getPrototypeOf(redacted), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(redacted, '__proto__').value, { password: '[REDACTED]', note: { type: 'string', utf8Bytes: 1 } });
  assert.equal(JSON.stringify(redacted), '{"__proto__":{"password":"[REDACTED]","note":{"type":"string","utf8Bytes":1}},"a":1}');
});

test('other strings become their UTF-8 size, so no content reaches an event', () => {
  assert.deepEqual(redactValue(['héllo', '']), [{ type: 'string', utf8Bytes: 6 }, { type: 'string', utf8Bytes: 0 }]);
  assert.deepEqual(redactValue('top'), { type: 'string', utf8Bytes: 3 });
});

test('redacted values are bounded in breadth and depth', () => {
  const wide = redactValue(Array.from({ length: 1000 }, (_, i) => i));
  assert.equal(wide.length, 65);
  assert.deepEqual(wide[64], { type: 'omitted', entries: 936 });
  let deep = { leaf: 1 };
  for (let i = 0; i < 100; i += 1) deep = { child: deep };
  const text = JSON.stringify(redactValue(deep));
  assert.match(text, /"truncated":true/);
  assert.ok(text.length < 1000);
});

test('a redacted value is bounded in total size, not only per level: 64³ numbers keep about a thousand', () => {
  const cube = JSON.parse(JSON.stringify(Array.from({ length: 64 }, () => Array.from({ length: 64 }, () => Array(64).fill(0)))));
  const count = (value) => (value !== null && typeof value === 'object' ? 1 + Object.values(value).reduce((n, v) => n + count(v), 0) : 1);
  const redacted = redactValue({ data: cube });
  const nodes = count(redacted);
  // Past the budget only the containers already open (at most 16 deep, 64 wide) finish with markers.
  assert.ok(nodes <= MAX_REDACT_NODES + 16 * 64 * 2, `${nodes} nodes kept`);
  assert.ok(nodes >= MAX_REDACT_NODES / 2, `${nodes} nodes kept: the budget should be used, not skipped`);
  assert.deepEqual(redacted.data.at(-1), { type: 'array', truncated: true });
  assert.deepEqual(redacted.data[0][0].slice(0, 2), [0, 0], 'the start of the value keeps its shape');
  assert.ok(JSON.stringify(redacted).length < 64 * 1024, 'an event stays small enough to log');
});

test('source redaction removes assigned secrets and token-looking strings and keeps the rest', () => {
  const code = [
    'const apiKey = "sk-live-abc";',
    "const r = await tools['auth.login']({ user: 'bob', password: 'hunter2' });",
    'headers["Authorization"] = "Bearer eyJhbGciOiJIUzI1NiJ9.payload";',
    'const gh = "ghp_abcdefghijklmnop1234567890";',
    'if (a === b && c => 1) return r.orders.length;',
  ].join('\n');
  const out = redactSource(code);
  for (const secret of ['sk-live-abc', 'hunter2', 'eyJhbGciOiJIUzI1NiJ9', 'ghp_abcdefghijklmnop1234567890']) {
    assert.ok(!out.includes(secret), `${secret} leaked: ${out}`);
  }
  assert.ok(out.includes("user: 'bob'"));
  assert.ok(out.includes('if (a === b && c => 1) return r.orders.length;'));
  assert.ok(out.includes("tools['auth.login']"));
});

test('an unquoted secret value is redacted whole, through its base64 "/", "+" and "=", up to whitespace, a quote or "&"', () => {
  const cases = {
    'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY && ls': 'export AWS_SECRET_ACCESS_KEY=[REDACTED] && ls',
    'curl https://h/x?token=ab/c+d==&user=bob': 'curl https://h/x?token=[REDACTED]&user=bob',
    'PASSWORD=p/a+s=s\'x\' next': 'PASSWORD=[REDACTED]\'x\' next',
    'const apiKey = getKey(user); other()': 'const apiKey = [REDACTED](user); other()',
    'x = {password: {a: 1}}': 'x = {password: {a: 1}}',
  };
  for (const [input, expected] of Object.entries(cases)) assert.equal(redactSource(input), expected, input);
});

/** Redacts each input, asserting each took under 1 s: a regression to super-linear behaviour takes seconds to minutes. */
function redactsEachQuickly(t, inputs) {
  for (const [name, input] of Object.entries(inputs)) {
    const started = performance.now();
    redactSource(input);
    const ms = performance.now() - started;
    t.diagnostic(`redactSource ${name} (${input.length} chars): ${ms.toFixed(1)} ms`);
    assert.ok(ms < 1000, `${name} took ${ms} ms`);
  }
}

test('source redaction of 1 MiB adversarial inputs stays linear: each shape finishes under 1 s (a super-linear scan takes minutes)', (t) => {
  const MiB = 1 << 20;
  const inputs = {
    'one long word': 'a'.repeat(MiB),
    'key= repeated': 'password='.repeat(MiB / 9),
    'quoted keys': '"token":'.repeat(MiB / 8),
    'unclosed quote': `"${'a1'.repeat(MiB / 2)}`,
    'backslashes': `"${'\\'.repeat(MiB)}`,
    'key: open quote': 'secret: "'.repeat(MiB / 9),
    'key= slash runs': `password=${'a/'.repeat(MiB / 2)}`,
    'key=/ repeated': 'token=/'.repeat(MiB / 7),
  };
  redactsEachQuickly(t, inputs);
});

test('string contents scanned as code, URL userinfo, string-key pairs, schemes and hyphenated names stay linear on 256 KiB adversarial inputs (round 13, R13-2)', (t) => {
  const KiB256 = 1 << 18;
  // A super-linear scan of any of these takes minutes at this size.
  const inputs = {
    'nested quotes': '\'"`'.repeat(KiB256 / 3),
    'keys in strings': '\'"password":"'.repeat(KiB256 / 13),
    'userinfo': 'https://a@'.repeat(KiB256 / 10),
    'one authority of @': `x://${'@'.repeat(KiB256)}`,
    'string-key pairs': '\'token\', '.repeat(KiB256 / 9),
    'schemes': 'Authorization: Bearer '.repeat(KiB256 / 22),
    'hyphenated names': 'X-Api-'.repeat(KiB256 / 6),
    'parentheses after a key': 'password: ('.repeat(KiB256 / 11),
  };
  redactsEachQuickly(t, inputs);
});

test('the source redaction reads credentials inside strings, string-key pairs, URL userinfo, a scheme before the token and hyphenated header names (round 13, R13-2)', () => {
  const S = 'Zq7SeCrEt9';
  const forms = {
    [`h.set('Authorization', 'Bearer ${S}');`]: "h.set('Authorization', 'Bearer [REDACTED]');",
    [`h.append('x-api-key', '${S}');`]: "h.append('x-api-key', '[REDACTED]');",
    [`new Headers([['authorization', 'Bearer ${S}']]);`]: "new Headers([['authorization', 'Bearer [REDACTED]']]);",
    [`new Map([['password', '${S}']]);`]: "new Map([['password', '[REDACTED]']]);",
    [`req.setHeader('Cookie', 'session=${S}');`]: "req.setHeader('Cookie', '[REDACTED]');",
    [`fetch('https://ada:${S}@api.example.com/x');`]: "fetch('https://[REDACTED]@api.example.com/x');",
    [`fetch('https://api.example.com/x?token=${S}&a=1');`]: "fetch('https://api.example.com/x?token=[REDACTED]&a=1');",
    [`const body = '{"password":"${S}"}';`]: 'const body = \'{"password":"[REDACTED]"}\';',
    [`const line = \`PASSWORD=${S}\`;`]: 'const line = `PASSWORD=[REDACTED]`;',
    [`const o = { password: ('${S}') };`]: "const o = { password: ('[REDACTED]') };",
    [`const o = { "pass\\u0077ord": "${S}" };`]: 'const o = { "pass\\u0077ord": "[REDACTED]" };',
    [`Authorization: Bearer ${S}`]: 'Authorization: Bearer [REDACTED]',
    [`Authorization: Basic ${S}`]: 'Authorization: Basic [REDACTED]',
    [`X-Api-Key: ${S}`]: 'X-Api-Key: [REDACTED]',
    [`psql postgres://ada:${S}@h/db`]: 'psql postgres://ada:[REDACTED]@h/db',
  };
  for (const [source, expected] of Object.entries(forms)) assert.equal(redactSource(source), expected, source);
  // Look-alikes kept: a literal after a secret-looking key, names in a list, a URL without userinfo, a subtraction.
  for (const source of ['{"passwordless": true}', "['user', 'name']", "fetch('https://h:8080/a@b')", 'const n = a - b;', 'ssh ssh://ada@h/']) {
    assert.equal(redactSource(source), source);
  }
});

test('the audit record of a 1 MiB adversarial source is built in under 1 s, keeps at most 4 KiB and no secret', (t) => {
  const MiB = 1 << 20;
  const inputs = [
    'password='.repeat(MiB / 9), '"token":'.repeat(MiB / 8), 'secret: "'.repeat(MiB / 9),
    `"${'a1'.repeat(MiB / 2)}`, 'a'.repeat(MiB), `api_key = "${'k9'.repeat(MiB / 2)}"; password = "hunter2"`,
  ];
  for (const code of inputs) {
    const started = performance.now();
    const record = buildAuditRecord({
      executionId: 'e1', parentId: null, mode: 'execute', code, tools: [], limits: {}, ok: true,
      metrics: {}, receipt: {}, startedAt: 0,
    });
    const ms = performance.now() - started;
    t.diagnostic(`audit of ${code.slice(0, 12)}… (${code.length} chars): ${ms.toFixed(2)} ms`);
    assert.ok(Buffer.byteLength(record.code) <= AUDIT_SOURCE_BYTES);
    assert.ok(!record.code.includes('hunter2') && !record.code.includes('k9k9k9k9k9k9k9k9k9k9k9'));
    // A bound for a shared machine, not a measurement (the diagnostic above
    // is): a scan of the whole source that went super-linear takes minutes.
    assert.ok(ms < 1000, `took ${ms} ms`);
  }
});

test('stopping the scan early keeps exactly the prefix a full scan would produce', () => {
  // Seeded pseudo-random sources built from the pieces the redactor reacts to.
  let seed = 12345;
  const next = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const pieces = ['password', 'token', ' = ', ': ', '"', "'", '`', 'abc', ' ', '\n', 'AKIA1234567890ABCDEFGH',
    'é', '[', ']', '(', ')', '=>', '==', 'x'.repeat(300), 'q9'.repeat(40), 'headers', "['Authorization']"];
  for (let round = 0; round < 300; round += 1) {
    let code = '';
    const count = 20 + next(400);
    for (let k = 0; k < count; k += 1) code += pieces[next(pieces.length)];
    for (const limit of [16, 64, 257, 1024]) {
      const full = truncateUtf8(redactSource(code), limit);
      const early = truncateUtf8(redactSource(code, { maxOutputChars: limit }), limit);
      assert.deepEqual(early, full, `round ${round}, limit ${limit}`);
    }
  }
});

test('event redaction of 1 MiB adversarial keys and strings takes linear time', (t) => {
  const MiB = 1 << 20;
  const value = { ['_-'.repeat(MiB / 2)]: 'x', ['pass'.repeat(MiB / 4)]: 1, s: 'é'.repeat(MiB / 2) };
  const started = performance.now();
  const out = redactValue(value);
  const ms = performance.now() - started;
  t.diagnostic(`redactValue 3 MiB of keys and strings: ${ms.toFixed(1)} ms`);
  assert.deepEqual(out.s, { type: 'string', utf8Bytes: MiB });
  assert.ok(Object.keys(out).every((key) => key.length <= 129), 'long keys are cut');
  assert.ok(ms < 1000, `took ${ms} ms`);
});

test('the audit record redacts the whole source before cutting it to 4 KiB', () => {
  const secret = 'zz9-plural-z-alpha-77777777';
  const code = `${'x'.repeat(AUDIT_SOURCE_BYTES - 12)}; token = "${secret}"`;
  const record = buildAuditRecord({
    executionId: 'e1', parentId: null, mode: 'execute', code, tools: [], limits: {}, ok: true,
    metrics: {}, receipt: { invocationId: 'e1', b: 1 }, startedAt: 0,
  });
  assert.equal(record.codeTruncated, true);
  assert.ok(Buffer.byteLength(record.code) <= AUDIT_SOURCE_BYTES);
  assert.ok(!record.code.includes('zz9'), record.code.slice(-40));
  assert.match(record.receiptDigest, /^sha256:[0-9a-f]{64}$/);
});

test('an empty receipt has no digest rather than a digest of nothing', () => {
  const record = buildAuditRecord({ executionId: 'e', parentId: null, mode: 'inspect', code: 'return 1', tools: [], limits: {}, ok: false,
    error: { kind: 'timeout' }, metrics: {}, receipt: {}, startedAt: 0 });
  assert.equal(record.receiptDigest, null);
  assert.deepEqual(record.outcome, { ok: false, kind: 'timeout', code: undefined });
});

test('UTF-8 truncation never splits a character', () => {
  assert.deepEqual(truncateUtf8('aé', 2), { text: 'a', truncated: true });
  assert.deepEqual(truncateUtf8('aé', 3), { text: 'aé', truncated: false });
});
