'use strict';
// Code Mode fetch: does a lower-case forbidden method (trace/connect/track) reach the upstream
// when the program subverts fetch.js's normalisation? Control: plain 'TRACE' (documented refused).
const http = require('node:http');
const { createCodeMode } = require('../../../..');
(async () => {
  const seen = [];
  const server = http.createServer((req, res) => { seen.push(req.method + ' ' + req.url + ' ' + JSON.stringify(req.headers)); res.end('ok ' + req.method); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  const mode = createCodeMode({ tools: [], network: { allow: [`127.0.0.1:${port}`], allowPrivate: true } });
  const url = `http://127.0.0.1:${port}/x`;
  const variants = {
    control_plain_TRACE: `try { const r = await fetch('${url}', {method:'TRACE'}); return r.status + ' ' + await r.text(); } catch (e) { return 'threw ' + e.message; }`,
    plain_trace: `try { const r = await fetch('${url}', {method:'trace'}); return r.status + ' ' + await r.text(); } catch (e) { return 'threw ' + e.message; }`,
    sub_upper_trace: `const U = String.prototype.toUpperCase; String.prototype.toUpperCase = function () { return String(this); }; String.prototype.toLowerCase = function () { return String(this); };
      try { const r = await fetch('${url}', {method:'trace'}); return r.status + ' ' + await r.text(); } catch (e) { return 'threw ' + e.message; }`,
    sub_upper_connect: `String.prototype.toUpperCase = function () { return String(this); };
      try { const r = await fetch('${url}', {method:'connect'}); return r.status + ' ' + await r.text(); } catch (e) { return 'threw ' + e.message; }`,
    sub_upper_Trace_mixed: `String.prototype.toUpperCase = function () { return String(this); };
      try { const r = await fetch('${url}', {method:'tRaCe'}); return r.status + ' ' + await r.text(); } catch (e) { return 'threw ' + e.message; }`,
  };
  const out = {};
  for (const [k, code] of Object.entries(variants)) {
    const before = seen.length;
    const res = await mode.run(code);
    out[k] = { ok: res.ok, result: res.result, error: res.error && (res.error.kind + '/' + res.error.code + ' ' + (res.error.message||'')).slice(0, 160), upstream: seen.slice(before) };
  }
  console.log(JSON.stringify(out, null, 1));
  const reached = Object.entries(out).filter(([, v]) => v.upstream.length);
  console.log(out.control_plain_TRACE.upstream.length ? 'control failed' : reached.length ? 'FINDING: ' + reached.map(([k]) => k).join(', ') + ' reached the upstream' : 'held');
  await mode.close(); server.close();
})().catch((e) => { console.error(e); process.exit(1); });
