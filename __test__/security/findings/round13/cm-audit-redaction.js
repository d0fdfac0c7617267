'use strict';
// Code Mode audit record: the program's `code` is redacted (docs/code-mode.md › Audit record: values assigned to
// secret-looking keys, `headers['Authorization'] = …`, token-looking runs ≥ 20 characters). Spellings a program
// commonly uses for a credential, each inside a function never called; the secret is 10 characters (not a long
// token), so only the key-based rule can catch it. Control: the documented forms.
// Usage (root or uid 65534): node cm-audit-redaction.js
const { createCodeMode } = require(process.env.R13_PKG || '../../../..');
const S = 'Zq7SeCrEt9';
const documented = {
  'password: "X"': `const o = { password: "${S}" };`,
  'apiKey = X': `let apiKey = "${S}";`,
  "headers['Authorization'] = X": `const headers = {}; headers['Authorization'] = "Bearer ${S}";`,
};
const variants = {
  "Headers.set('Authorization', X)": `const h = new Headers(); h.set('Authorization', 'Bearer ${S}');`,
  "h.append('x-api-key', X)": `const h = new Headers(); h.append('x-api-key', '${S}');`,
  "new Headers([['authorization', X]])": `const h = new Headers([['authorization', 'Bearer ${S}']]);`,
  'URL userinfo in a string': `return fetch('https://ada:${S}@api.example.com/x');`,
  'query ?token=X in a string': `return fetch('https://api.example.com/x?token=${S}');`,
  "computed key ['password']: X": `const o = { ['password']: '${S}' };`,
  'backtick value password: `X`': 'const o = { password: `' + S + '` };',
  "parenthesised value password: ('X')": `const o = { password: ('${S}') };`,
  'comment before colon': `const o = { password /* pw */ : '${S}' };`,
  'newline before value': `const o = { password:\n    '${S}' };`,
  "Map([['password', X]])": `const m = new Map([['password', '${S}']]);`,
  "btoa('ada:X') Basic": `const b = 'Basic ' + btoa('ada:${S}');`,
  'JSON in a string': `const body = '{"password":"${S}"}';`,
  'env-style in template': 'const line = `PASSWORD=' + S + '`;',
  'String.raw value': 'const o = { password: String.raw`' + S + '` };',
  'concatenated value': `const o = { password: '${S.slice(0, 5)}' + '${S.slice(5)}' };`,
  'array destructure ["Authorization", X]': `const pair = ['Authorization', 'Bearer ${S}'];`,
  'setHeader call': `req.setHeader('Cookie', 'session=${S}');`,
  'object key "x-api-key"': `const h = { "x-api-key": "${S}" };`,
  'AWS secret key in a string (base64 with /: no run of 20)': `const k = 'wJalrXUtnFEMI/K7MDENG/${S}bPxRfiCY';`,
  'key with unicode escape': `const o = { "pass\\u0077ord": "${S}" };`,
};
(async () => {
  const mode = createCodeMode({ tools: [] });
  const check = async (set) => {
    const leaks = []; let errors = 0;
    for (const [k, line] of Object.entries(set)) {
      const code = `function unused(req) {\n  ${line}\n}\nreturn 1;`;
      const r = await mode.run(code);
      if (!r.ok) errors++;
      if (String(r.audit?.code).includes(S)) leaks.push(k + '  ⇒  ' + r.audit.code.split('\n')[1].trim().slice(0, 110));
    }
    return { leaks, errors };
  };
  try {
    const d = await check(documented); const v = await check(variants);
    console.log(`documented (control): ${Object.keys(documented).length - d.leaks.length}/${Object.keys(documented).length} redacted (runs not ok: ${d.errors})`); d.leaks.forEach((l) => console.log('  CLEAR', l));
    console.log(`variants: ${v.leaks.length}/${Object.keys(variants).length} in clear (runs not ok: ${v.errors})`); v.leaks.forEach((l) => console.log('  CLEAR', l));
    // the same redaction on console text (events and the audit's logs): lines a program prints
    const lines = { 'JSON.stringify({password})': `console.log(JSON.stringify({ password: '${S}' }));`, "'token=' + X": `console.log('token=' + '${S}');`, "'Authorization: Bearer ' + X": `console.log('Authorization: Bearer ' + '${S}');`, 'URL with userinfo': `console.log('https://ada:' + '${S}' + '@h/');`, 'AWS secret key (base64 with /)': `console.log('secret key wJalrXUtnFEMI/K7MDENG/' + '${S}bPxRfiCY');`, "'Authorization: Basic ' + X": `console.log('Authorization: Basic ' + '${S}');`, "'X-Api-Key: ' + X": `console.log('X-Api-Key: ' + '${S}');`, "'password: ' + X (control-like)": `console.log('password: ' + '${S}');` };
    const logLeaks = [];
    for (const [k, line] of Object.entries(lines)) {
      const r = await mode.run(`${line}\nreturn 1;`);
      const ev = (r.events || []).filter((e) => e.type === 'console').map((e) => e.text).join(' ');
      const au = JSON.stringify(r.audit?.logs || []);
      if (ev.includes(S) || au.includes(S)) logLeaks.push(`${k} ⇒ event text ${JSON.stringify(ev).slice(0, 80)}`);
    }
    console.log(`console lines: ${logLeaks.length}/${Object.keys(lines).length} in clear in events/audit logs`); logLeaks.forEach((l) => console.log('  CLEAR', l));
    console.log(d.leaks.length ? 'control failed' : (v.leaks.length || logLeaks.length) ? `FINDING: ${v.leaks.length} credential spellings kept in clear in the Code Mode audit record's code, ${logLeaks.length} in console text` : 'held');
  } finally { await mode.close(); }
})().catch((e) => { console.error(e); process.exitCode = 1; });
