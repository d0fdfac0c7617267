'use strict';

// Section 12: what a program's fetch costs. A 1 KiB response from a loopback
// server, fetched `fetches` times in one Code Mode run (each timed inside the
// program with performance.now(): frame out, the host's admission and
// request, frame back, Response built) vs the same fetches from this Node
// process, interleaved run by run: Node's own fetch (undici, keep-alive, the
// baseline) and node:http with a fresh connection per request (what the host
// does per fetch: one pinned connection each).

const http = require('node:http');
const { createCodeMode } = require('..');
const { sectionRows, nowMs } = require('./stats');

const BODY = Buffer.alloc(1024, 'x');

function program(url, fetches) {
  return `const times = [];
for (let i = 0; i < ${fetches}; i++) {
  const t = performance.now();
  const r = await fetch('${url}');
  const body = await r.text();
  if (body.length !== 1024) throw new Error('short body');
  times.push(performance.now() - t);
}
return times;`;
}

function httpGet(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/kib', agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    }).on('error', reject);
  });
}

async function timeEach(fetches, once) {
  const times = [];
  for (let i = 0; i < fetches; i += 1) {
    const t = nowMs();
    const body = await once();
    if (body.length !== 1024) throw new Error('short body');
    times.push(nowMs() - t);
  }
  return times;
}

async function fetchCost({ runs, fetches }) {
  const server = http.createServer((req, res) => res.end(BODY));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const url = `http://127.0.0.1:${port}/kib`;
  const mode = createCodeMode({ tools: [], limits: { timeoutMs: 60000 }, network: { allow: [`127.0.0.1:${port}`], allowPrivate: true, maxRequests: fetches } });
  const samples = { node: [], http: [], codeMode: [] };
  try {
    for (let i = 0; i < runs; i += 1) {
      samples.node.push(...await timeEach(fetches, async () => Buffer.from(await (await fetch(url)).arrayBuffer())));
      samples.http.push(...await timeEach(fetches, () => httpGet(port)));
      const run = await mode.run(program(url, fetches));
      if (!run.ok) throw new Error(`bench run failed: ${JSON.stringify(run.error)}`);
      samples.codeMode.push(...run.result);
    }
  } finally {
    await mode.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return sectionRows('12 fetch 1 KiB loopback', 'ms', [
    ['Node fetch, this process (keep-alive)', samples.node],
    ['node:http, new connection each', samples.http],
    ['Code Mode fetch (inside the program)', samples.codeMode],
  ]);
}

module.exports = { fetchCost };
