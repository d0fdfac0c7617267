'use strict';
// Code Mode fetch: the program asks for `accept-encoding: gzip` itself; the upstream answers a gzip bomb
// (~100 KB on the wire, 100 MB inflated). Is maxResponseBytes (1 MiB) applied to the inflated body, or is the
// body inflated at all? Provider RSS before/after. Control: a plain 2 MiB body (RESPONSE_TOO_LARGE).
const http = require('node:http');
const zlib = require('node:zlib');
const { createCodeMode } = require('../../../..');
(async () => {
  const bomb = zlib.gzipSync(Buffer.alloc(100 * 1024 * 1024));
  const server = http.createServer((req, res) => {
    if (req.url === '/plain') { res.end(Buffer.alloc(2 * 1024 * 1024, 97)); return; }
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/octet-stream', 'content-length': bomb.length }); res.end(bomb);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  const mode = createCodeMode({ tools: [], network: { allow: [`127.0.0.1:${port}`], allowPrivate: true }, limits: { timeoutMs: 20000 } });
  const rss = () => Math.round(process.memoryUsage().rss / 1048576);
  const code = (p, h) => `try { const r = await fetch('http://127.0.0.1:${port}${p}', {headers: ${JSON.stringify(h)}}); const b = await r.arrayBuffer(); return r.status + ' ' + b.byteLength + ' ' + r.headers.get('content-encoding'); } catch (e) { return 'threw ' + e.message + ' ' + (e.cause && e.cause.code); }`;
  const r0 = rss();
  const c = await mode.run(code('/plain', {}));
  const p = await mode.run(code('/bomb', { 'accept-encoding': 'gzip' }));
  console.log(`wire ${bomb.length} B gzip; control: ${c.ok ? c.result : c.error.kind}; probe: ${p.ok ? p.result : p.error.kind + ' ' + p.error.message}; provider RSS ${r0} → ${rss()} MB`);
  const inflated = p.ok && /^200 (\d+)/.test(p.result) && Number(p.result.split(' ')[1]) > 1048576;
  console.log(inflated ? 'FINDING: inflated body past maxResponseBytes' : 'held');
  await mode.close(); server.close();
})().catch((e) => { console.error(e); process.exit(1); });
