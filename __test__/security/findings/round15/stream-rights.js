'use strict';
// R15 probe: descriptors sent with bytes over an fd-4 STREAM (the AF_UNIX stream socket an
// MECQ reply hands out), not over the fd-4 channel. The engine relays these bytes upstream;
// docs/network.md: "No socket the sandbox writes to is closed with descriptors queued in it"
// and the engine never blocks a runtime worker on the sandbox's sockets. Payload: a loopback
// TCP socket X with unsent data and SO_LINGER {1, 3600} whose peer P the program keeps
// (never reading) — the program then sleeps. Where does X's last close happen, and do other
// runs of the provider still settle meanwhile?  Modes: control (bytes only), direct ([X]),
// pair ([X, P], P closed by the program too), nested (X inside a Unix socket U).
// usage: node stream-rights.js [modes…]
const h = require('./h');
const MODES = process.argv.slice(2).length ? process.argv.slice(2) : ['control', 'direct', 'nested', 'pair'];
const CODE = h.PY + String.raw`
mode, port, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
c4 = socket.socket(fileno=4)
msg, fds = mecq(c4, '127.0.0.1', port)
S = socket.socket(fileno=fds[0])
X, P = linger_pair()
if mode == 'control':
    S.send(b'a')
elif mode == 'direct':
    send(S, b'a', [X.fileno()])
elif mode == 'pair':
    send(S, b'a', [X.fileno(), P.fileno()]); P.close()
elif mode == 'nested':
    U1, U2 = socket.socketpair(); send(U1, b'z', [X.fileno(), P.fileno()]); U1.close(); P.close()
    send(S, b'a', [U2.fileno()]); U2.close()
if mode != 'control': X.close()  # the in-flight copy is then the last reference (the program's own close would wait otherwise)
log('sent', mode)
time.sleep(hold)
`;
(async () => {
  const srv = await h.server('sink');
  const policy = h.policyFor(srv.port);
  const base = h.snap();
  const results = [];
  for (const mode of MODES) {
    const mon = h.delayMonitor();
    const ex = h.py(CODE, [mode, srv.port, 12], { policy });
    for (let i = 0; i < 50 && !/sent|Error/.test(ex.text); i++) await h.sleep(100);
    await h.sleep(1000);
    const during = { stuck: h.stuck(), snap: h.snap(), nextPlainMs: await h.next(0), nextMediatedMs: await h.next(srv.port) };
    const t0 = Date.now(); const stopped = await h.within(ex.stop(), 15000);
    const stopMs = Date.now() - t0;
    await h.sleep(500);
    const after = { stuck: h.stuck(), snap: h.snap(), nextPlainMs: await h.next(0) };
    const r = { mode, during, stopSettled: stopped, stopMs, after, loop: mon.stop(), text: ex.text.trim().slice(-200) };
    results.push(r); console.log(JSON.stringify(r));
  }
  srv.shut();
  const control = results.find((r) => r.mode === 'control');
  const bad = results.filter((r) => r.mode !== 'control' && (r.during.nextPlainMs === 'UNSETTLED' || r.during.nextMediatedMs === 'UNSETTLED' || !r.stopSettled || r.during.stuck.length > (control ? control.during.stuck.length : 0) || r.after.stuck.length > 0));
  console.log(bad.length ? `FINDING: descriptors over an fd-4 stream: ${bad.map((r) => `${r.mode}: stuck during [${r.during.stuck}], next runs ${r.during.nextPlainMs}/${r.during.nextMediatedMs} ms, stop settled ${r.stopSettled} in ${r.stopMs} ms, stuck after [${r.after.stuck}]`).join('; ')}` : `held (base ${JSON.stringify(base)})`);
  process.exit(0);
})();
