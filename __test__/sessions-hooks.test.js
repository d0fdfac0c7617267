'use strict';

// Session policy hook, per-tenant bound, budget hook and audit records
// (docs/sessions.md): a blocked operation spawns or opens nothing and is
// audited; a refused admission charges nothing; redaction is linear and
// happens before the cut; a failing sink never fails the operation.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { sessionsSkipReason, managerFor, marker, pidsWithMarker, scope } = require('./sessions-support');
const { auditRecord } = require('../lib/sessions/audit');
const { statedArgv, commandSpec } = require('../lib/sessions/command-spec');

const skip = sessionsSkipReason();

test('an operation the allow hook refuses spawns and opens nothing, is refused with ERR_CORDON_SESSION_POLICY_DENIED, and is audited', { skip }, async (t) => {
  const records = [];
  const seen = [];
  const { manager } = managerFor(t, {
    audit: (r) => records.push(r),
    allow: (operation, actor) => {
      seen.push([operation.kind, actor]);
      if (operation.kind === 'exec' && operation.argv.join(' ').includes('curl')) return { allow: false, reason: 'no network tools' };
      if (operation.path?.startsWith('private/')) return false;
      return true;
    },
  });
  const session = await manager.acquire(scope('policy'), 'alice');
  const tag = marker('blocked');
  await assert.rejects(session.exec({ shell: 'bash', script: `curl x; exec -a ${tag} sleep 30` }), { code: 'ERR_CORDON_SESSION_POLICY_DENIED' });
  assert.deepEqual(pidsWithMarker(tag), [], 'nothing was spawned');
  await assert.rejects(session.writeFile('private/x', 'data'), { code: 'ERR_CORDON_SESSION_POLICY_DENIED' });
  assert.equal((await session.exec(['/bin/echo', 'fine'])).stdout, 'fine\n');
  const echoed = crypto.createHash('sha256').update(JSON.stringify(['/bin/echo', 'fine'])).digest('hex');
  assert.deepEqual((await session.end()).commands.map((c) => c.argvSha256), [echoed], 'the agent was only ever asked to run the allowed command');
  const denials = records.filter((r) => r.denial !== null);
  assert.deepEqual(denials.map((r) => [r.operation, r.actor]), [['exec', 'alice'], ['writeFile', 'alice']]);
  assert.match(denials[0].denial, /ERR_CORDON_SESSION_POLICY_DENIED: .*no network tools/);
  assert.equal(denials[1].path, 'private/x');
  const ok = records.find((r) => r.operation === 'exec' && r.denial === null);
  assert.deepEqual([ok.exitCode, ok.bytes, ok.command], [0, 5, '/bin/echo fine']);
  assert.ok(seen.some(([kind]) => kind === 'writeFile'));
});

test('allow() sees a command\'s env and its stdin bytes (a script piped to bash is judged by its text), \'stream\' for a streamed stdin, and cannot change what runs', { skip }, async (t) => {
  const seen = [];
  const { manager } = managerFor(t, {
    allow: (operation) => {
      if (operation.kind !== 'exec' && operation.kind !== 'start') return true;
      seen.push(operation);
      if (Buffer.isBuffer(operation.stdin)) {
        const text = operation.stdin.toString();
        operation.stdin.fill(0x23); // a hook that scribbles on its copy changes nothing that runs
        if (text.includes('curl')) return { allow: false, reason: 'no network tools, even on stdin' };
      }
      if (operation.env.MODE === 'forbidden') return { allow: false, reason: 'no such mode' };
      return true;
    },
  });
  const session = await manager.acquire(scope('hook-stdin'), 'u');
  await assert.rejects(session.exec(['bash'], { stdin: 'curl http://example.com/\n' }), { code: 'ERR_CORDON_SESSION_POLICY_DENIED', message: /even on stdin/ });
  await assert.rejects(session.exec(['true'], { env: { MODE: 'forbidden' } }), { code: 'ERR_CORDON_SESSION_POLICY_DENIED', message: /no such mode/ });
  const ran = await session.exec(['cat'], { stdin: 'echo kept\n', env: { MODE: 'ok' } });
  assert.equal(ran.stdout.toString(), 'echo kept\n', 'the agent got the bytes as given, not the hook\'s scribbles');
  async function* streamed() { yield 'x'; }
  await session.exec(['cat'], { stdin: streamed() });
  assert.deepEqual(seen.map((o) => [o.argv[0], Buffer.isBuffer(o.stdin) ? 'bytes' : o.stdin, o.env.MODE ?? null]),
    [['bash', 'bytes', null], ['true', null, 'forbidden'], ['cat', 'bytes', 'ok'], ['cat', 'stream', null]]);
  assert.ok(seen.every((o) => Object.isFrozen(o) && Object.isFrozen(o.env)));
});

test('per-tenant sessions are bounded before the budget hook is asked, and a budget denial creates nothing', { skip }, async (t) => {
  const charged = [];
  const { manager, root } = managerFor(t, {
    maxSessionsPerTenant: 1,
    budget: (s) => {
      if (s.tenant === 'broke') return { allow: false, reason: 'out of credit' };
      charged.push(s.conversation);
      return true;
    },
  });
  await manager.acquire(scope('one'), 'u');
  await assert.rejects(manager.acquire(scope('two'), 'u'), { code: 'ERR_CORDON_SESSION_LIMIT' });
  assert.deepEqual(charged, ['one'], 'the refused second session never reached the budget');
  assert.equal((await manager.acquire(scope('one'), 'u')).origin, 'resumed', 'resuming is not a new session');
  await manager.acquire(scope('other', 'beta'), 'u');
  await assert.rejects(manager.acquire(scope('x', 'broke'), 'u'), { code: 'ERR_CORDON_SESSION_BUDGET' });
  assert.equal(fs.readdirSync(root).length, 2);
});

test('a sink that throws or rejects never fails the operation it records', { skip }, async (t) => {
  for (const audit of [() => { throw new Error('sink down'); }, () => Promise.reject(new Error('sink down'))]) {
    const { manager } = managerFor(t, { audit });
    const session = await manager.acquire(scope('sink'), 'u');
    assert.equal((await session.exec(['/bin/echo', 'ok'])).stdout, 'ok\n');
    await session.writeFile('f', 'x');
    assert.equal((await session.end()).workspace.removed, true);
  }
});

test('a file tool\'s path is cut to 4 KiB in its audit record, like a command: an 8 MiB path makes no 8 MiB record (round 11, R11-4)', { skip }, async (t) => {
  const records = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r) });
  const session = await manager.acquire(scope('longpath'), 'u');
  const big = `${'é'.repeat(8 << 19)}`; // 8 MiB of UTF-8, 2-byte characters: the cut must not split one
  for (const op of ['readFile', 'writeFile', 'list', 'remove']) {
    const n = records.length;
    await assert.rejects(op === 'writeFile' ? session.writeFile(big, 'y') : session[op](big), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
    const record = records.slice(n).find((r) => r.operation === op);
    assert.equal(record.error, 'ERR_CORDON_SESSION_PATH_REFUSED');
    assert.equal(record.pathTruncated, true);
    assert.equal(record.path, 'é'.repeat(2048), `${op}: the first 4 KiB of the path, whole characters`);
    assert.ok(JSON.stringify(record).length < 8192, `${op}: record of ${JSON.stringify(record).length} bytes`);
  }
  await session.writeFile('short.txt', 'x');
  const short = records.filter((r) => r.operation === 'writeFile').pop();
  assert.deepEqual([short.path, short.pathTruncated], ['short.txt', undefined], 'a path within the bound is kept whole, unflagged');
});

test('the audit redacts the shell forms of a credential (header, URL userinfo, curl -u, mysql -p, sshpass -p, --token) and leaves look-alikes alone (round 9, R9-8)', () => {
  const secret = 'Hunter2Hunter2';
  const audited = (script) => auditRecord({ session: 's', scope: { tenant: 't', conversation: 'c' }, actor: 'a', operation: 'exec', argv: ['bash', '-c', script] }).command;
  const redacted = {
    [`curl -s -H "Authorization: Bearer ${secret}" http://api.internal/`]: 'bash -c curl -s -H "Authorization: Bearer [REDACTED]" http://api.internal/',
    [`git clone https://deploy:${secret}@git.internal/repo.git`]: 'bash -c git clone https://[REDACTED]@git.internal/repo.git',
    [`curl -u admin:${secret} http://api.internal/`]: 'bash -c curl -u admin:[REDACTED] http://api.internal/',
    [`mysql -u root -p${secret} -e 'select 1'`]: "bash -c mysql -u root -p[REDACTED] -e 'select 1'",
    [`sshpass -p ${secret} ssh ops@db`]: 'bash -c sshpass -p [REDACTED] ssh ops@db',
    [`curl -H 'X-Api-Key: ${secret}' x`]: "bash -c curl -H 'X-Api-Key: [REDACTED]' x",
    [`curl --user=admin:${secret} x; curl -uadmin:${secret} y`]: 'bash -c curl --user=admin:[REDACTED] x; curl -uadmin:[REDACTED] y',
    [`http -a u:${secret} x`]: 'bash -c http -a u:[REDACTED] x',
    [`cd x && sshpass -p${secret} ssh h`]: 'bash -c cd x && sshpass -p[REDACTED] ssh h',
    [`ls\nmysqldump -p'${secret}' db`]: "bash -c ls\nmysqldump -p'[REDACTED]' db",
    [`deploy --token ${secret} now`]: 'bash -c deploy --token [REDACTED] now',
  };
  for (const [script, expected] of Object.entries(redacted)) assert.equal(audited(script), expected);
  // Round 10 (R10-4): -u at the end of a cluster of curl's value-less flags, more CLI credential flags.
  const round10 = {
    [`curl -su admin:${secret} http://api.internal/`]: 'bash -c curl -su admin:[REDACTED] http://api.internal/',
    [`curl -fsSLu admin:${secret} x; curl -fsSuadmin:${secret} y`]: 'bash -c curl -fsSLu admin:[REDACTED] x; curl -fsSuadmin:[REDACTED] y',
    [`redis-cli -h cache -a ${secret} ping`]: 'bash -c redis-cli -h cache -a [REDACTED] ping',
    [`docker login -u me -p ${secret} registry.internal`]: 'bash -c docker login -u me -p [REDACTED] registry.internal',
    [`podman login -p${secret} r`]: 'bash -c podman login -p[REDACTED] r',
    [`curl --oauth2-bearer ${secret} http://api.internal/`]: 'bash -c curl --oauth2-bearer [REDACTED] http://api.internal/',
  };
  for (const [script, expected] of Object.entries(round10)) assert.equal(audited(script), expected);
  // Controls: the same flags and shapes with nothing secret are left as they were.
  for (const script of ['docker run -u 1000:1000 img', 'mysql -u root -p mydb', 'git log -p', 'mkdir -p a/b', 'ssh -p 22 host', 'echo http://host:8080/path',
    'curl https://example.com:443/x?a=b', 'grep -r "error: x" .', 'docker login --password-stdin < f', 'echo a:b@c',
    'docker run -p 8080:80 img', 'podman run -p 1:2 img', 'curl -sSL http://x/', 'curl -o out http://x/', 'redis-cli -h cache ping']) {
    assert.equal(audited(script), `bash -c ${script}`);
  }
});

test('every refused exec and start leaves one audit record with its code, the command redacted and cut; a lone surrogate in argv, script or env is refused before the agent (round 12, R12-4, R12-6)', { skip }, async (t) => {
  const records = [];
  const asked = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r), allow: (operation) => { asked.push(operation.kind); return true; } });
  const session = await manager.acquire(scope('refused'), 'mallory');
  const S = 'Hunter2pass';
  // What JSON.parse gives for a tool input holding "\ud800".
  const lone = JSON.parse('"\\ud800"');
  const refusals = [
    ['exec', ['cat', 'x'], { cwd: '../../..' }, 'ERR_CORDON_SESSION_PATH_REFUSED'],
    ['start', ['/bin/true'], { cwd: '/etc' }, 'ERR_CORDON_SESSION_PATH_REFUSED'],
    ['exec', ['/bin/true'], { cwd: `d/${lone}` }, 'ERR_CORDON_SESSION_PATH_REFUSED'],
    ['exec', ['rm', '-rf', '/\u0000'], {}, 'ERR_CORDON_INVALID_COMMAND'],
    ['start', ['/bin/true'], { env: { 'LD_PRELOAD=x': '1' } }, 'ERR_CORDON_INVALID_OPTIONS'],
    // R12-6: these reached the agent, whose JSON parser failed (ERR_CORDON_SESSION_COMMAND_FAILED).
    ['start', ['printf', lone], {}, 'ERR_CORDON_INVALID_COMMAND'],
    ['exec', { shell: 'bash', script: `echo ${lone}` }, {}, 'ERR_CORDON_INVALID_COMMAND'],
    ['exec', ['/bin/true'], { env: { X: lone } }, 'ERR_CORDON_INVALID_OPTIONS'],
    // The command of a refused call is redacted and cut like any other.
    ['exec', ['curl', '-u', `ada:${S}`, 'https://x/'], { cwd: '../..' }, 'ERR_CORDON_SESSION_PATH_REFUSED'],
    ['start', ['echo', 'a'.repeat(8192)], { cwd: '/' }, 'ERR_CORDON_SESSION_PATH_REFUSED'],
  ];
  const refused = [];
  for (const [kind, command, options, code] of refusals) {
    const n = records.length;
    await assert.rejects(session[kind](command, options), { code }, `${kind} ${JSON.stringify(command).slice(0, 40)} ${JSON.stringify(options)}`);
    const added = records.slice(n);
    assert.deepEqual(added.map((r) => [r.operation, r.actor, r.error, r.denial]), [[kind, 'mallory', code, null]], `one record for ${kind} ${JSON.stringify(options)}`);
    refused.push(added[0]);
  }
  const [dotdot, , , nul, , startLone, script, , secret, long] = refused;
  assert.equal(dotdot.command, 'cat x');
  assert.equal(nul.command, 'rm -rf /\u0000');
  assert.equal(startLone.command, `printf ${lone}`, 'the command as stated, as a file tool\'s refused path is kept');
  assert.equal(script.command, `/bin/bash -c echo ${lone}`);
  assert.equal(secret.command, 'curl -u ada:[REDACTED] https://x/');
  assert.deepEqual([Buffer.byteLength(long.command), long.commandTruncated], [4096, true]);
  assert.deepEqual(asked, [], 'a refused command never reaches the allow hook');
  // Nothing reached the agent, and the session goes on.
  assert.equal((await session.exec(['/bin/echo', 'alive'])).stdout, 'alive\n');
  const echoed = crypto.createHash('sha256').update(JSON.stringify(['/bin/echo', 'alive'])).digest('hex');
  assert.deepEqual((await session.end()).commands.map((c) => c.argvSha256), [echoed], 'the agent was only ever asked to run the accepted command');
});

test('a refused command is audited from at most 512 KiB of its text, whatever its size, and a hostile one cannot break its record (round 12, R12-4)', () => {
  const huge = statedArgv(Array(1 << 20).fill('a'.repeat(100)));
  assert.ok(huge.join(' ').length <= 512 * 1024, `${huge.join(' ').length} characters`);
  assert.deepEqual(statedArgv({ shell: 'zsh', script: 'x' }), ['zsh', '-c', 'x']);
  // Object's own names are no shells (they found Object.prototype's before: argv[0] a function).
  for (const shell of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    assert.deepEqual(statedArgv({ shell, script: 'x' }), [shell, '-c', 'x']);
    assert.throws(() => commandSpec({ shell, script: 'id' }, {}, {}), { code: 'ERR_CORDON_INVALID_COMMAND' });
  }
  assert.deepEqual(statedArgv(['a', 1, null, {}]), ['a', '[number]', '[object]', '[object]']);
  assert.deepEqual(statedArgv(Symbol('s')), ['[symbol]']);
  const hostile = new Proxy([], { get: () => { throw new Error('no'); } });
  assert.deepEqual(statedArgv(hostile), ['[unreadable command]']);
  const started = performance.now();
  const record = auditRecord({ session: 's', scope: { tenant: 't', conversation: 'c' }, actor: 'a', operation: 'exec', argv: statedArgv(Array(1 << 20).fill('password=x')), error: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.ok(performance.now() - started < 1000);
  assert.equal(Buffer.byteLength(record.command) <= 4096 && record.commandTruncated, true);
});

test('a session\'s audit redacts a credential under a quoted key, as a quoted keyword argument, in an auth tuple, and for ldapsearch -w, openssl -pass pass:, smbclient -U user% (round 11, R11-3)', { skip }, async (t) => {
  const records = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r) });
  const session = await manager.acquire(scope('redact11'), 'u');
  const S = 'Hunter2pass';
  const forms = {
    [`curl -d '{"password":"${S}"}' https://api.example/login`]: `curl -d '{"password":"[REDACTED]"}' https://api.example/login`,
    [`curl -d '{"password": "${S}"}' https://api.example/login`]: `curl -d '{"password": "[REDACTED]"}' https://api.example/login`,
    [`curl -d "{\\"password\\":\\"${S}\\"}" x`]: `curl -d "{\\"password\\":\\"[REDACTED]\\"}" x`,
    [`python3 -c 'client.login(user="ada", password="${S}")'`]: `python3 -c 'client.login(user="ada", password="[REDACTED]")'`,
    [`python3 -c "cfg = {'password': '${S}'}"`]: `python3 -c "cfg = {'password': '[REDACTED]'}"`,
    [`python3 -c 'requests.get(u, auth=("ada", "${S}"))'`]: `python3 -c 'requests.get(u, auth=("ada", "[REDACTED]"))'`,
    [`echo '{"api_key": "correct horse ${S}", "user": "ada"}'`]: `echo '{"api_key": "[REDACTED]", "user": "ada"}'`,
    [`echo '{"Authorization": "Bearer ${S}"}'`]: `echo '{"Authorization": "Bearer [REDACTED]"}'`,
    [`ldapsearch -D cn=admin -w ${S}`]: 'ldapsearch -D cn=admin -w [REDACTED]',
    [`ldapsearch -w${S} x`]: 'ldapsearch -w[REDACTED] x',
    [`openssl enc -aes256 -pass pass:${S} -in a`]: 'openssl enc -aes256 -pass pass:[REDACTED] -in a',
    [`openssl enc -k ${S}`]: 'openssl enc -k [REDACTED]',
    [`smbclient -U ada%${S} //h/share`]: 'smbclient -U ada%[REDACTED] //h/share',
    [`smbclient -Uada%${S} x`]: 'smbclient -Uada%[REDACTED] x',
    [`smbclient --user=ada%${S} x`]: 'smbclient --user=ada%[REDACTED] x',
  };
  for (const [script, expected] of Object.entries(forms)) {
    await session.exec({ shell: 'bash', script: `true || ${script}` });
    assert.equal(records.at(-1).command, `/bin/bash -c true || ${expected}`);
  }
  // Look-alikes with nothing secret are left as they were.
  for (const script of ['openssl enc -pass env:VAR -passin file:/p -passout stdin', 'smbclient -U ada //h/s', 'echo x="y"', 'git commit -m "auth: fix"',
    'python3 -c "requests.get(u, auth=None)"', 'ldapsearch -x -W -b dc=x', 'echo \'{"user": "ada", "passwordless": true}\'']) {
    await session.exec({ shell: 'bash', script: `true || ${script}` });
    assert.equal(records.at(-1).command, `/bin/bash -c true || ${script}`);
  }
});

test('a session\'s audit redacts a token as URL userinfo, a percent-encoded userinfo colon, a spaced JSON key, curl in $( ) or backticks or after timeout 5, curl -b, a short https token and a \\u-escaped key (round 12, R12-5), and the forms of round 13 (R13-1, R13w-1)', { skip }, async (t) => {
  const records = [];
  const { manager } = managerFor(t, { audit: (r) => records.push(r) });
  const session = await manager.acquire(scope('redact12'), 'u');
  const S = 'Hunter2passXYZ';
  const forms = {
    [`git clone https://ghp_${S}0123456789@github.com/o/r`]: 'git clone https://[REDACTED]@github.com/o/r',
    [`curl https://ada%3A${S}@h/`]: 'curl https://[REDACTED]@h/',
    [`echo '{ "password" : "${S}" }'`]: `echo '{ "password" : "[REDACTED]" }'`,
    [`echo $(curl -u ada:${S} http://h/)`]: 'echo $(curl -u ada:[REDACTED] http://h/)',
    [`echo \`curl -u ada:${S} http://h/\``]: 'echo `curl -u ada:[REDACTED] http://h/`',
    [`timeout 5 curl -u ada:${S} http://h/`]: 'timeout 5 curl -u ada:[REDACTED] http://h/',
    [`curl -b "session=${S}" http://h/`]: 'curl -b "[REDACTED]" http://h/',
    // After the round: a short token over https, a key spelled with \u escapes.
    ['git clone https://Hunter2pas@github.com/o/r']: 'git clone https://[REDACTED]@github.com/o/r',
    [`echo '{"pass\\u0077ord":"${S}"}'`]: `echo '{"pass\\u0077ord":"[REDACTED]"}'`,
    // Round 13w (R13w-1): the token as the user, an empty password, a password with an `@`, ws(s), other schemes.
    [`git clone https://${S}:x-oauth-basic@github.com/o/r`]: 'git clone https://[REDACTED]@github.com/o/r',
    [`curl https://${S}:@h/`]: 'curl https://[REDACTED]@h/',
    [`curl https://ada:p@${S}@h/`]: 'curl https://[REDACTED]@h/',
    ['websocat wss://Hunter2pas@h/']: 'websocat wss://[REDACTED]@h/',
    [`psql postgres://ada:p@${S}@h/db`]: 'psql postgres://ada:[REDACTED]@h/db',
    [`psql postgres://ada%3A${S}@h/db`]: 'psql postgres://ada%3A[REDACTED]@h/db',
    // Round 13 (R13-1): wrappers with option values, eval, archive passwords, aws, a form body, spaced keyword.
    [`sudo -u root curl -u ada:${S} http://h/`]: 'sudo -u root curl -u ada:[REDACTED] http://h/',
    [`timeout -s KILL 5 curl -u ada:${S} http://h/`]: 'timeout -s KILL 5 curl -u ada:[REDACTED] http://h/',
    [`stdbuf -oL curl -u ada:${S} http://h/`]: 'stdbuf -oL curl -u ada:[REDACTED] http://h/',
    [`env -u HOME curl -u ada:${S} http://h/`]: 'env -u HOME curl -u ada:[REDACTED] http://h/',
    [`eval "curl -u ada:${S} http://h/"`]: 'eval "curl -u ada:[REDACTED] http://h/"',
    [`zip -P ${S} a.zip f`]: 'zip -P [REDACTED] a.zip f',
    [`7z a -p${S} a.7z f`]: '7z a -p[REDACTED] a.7z f',
    [`aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/${S}`]: 'aws configure set aws_secret_access_key [REDACTED]',
    [`curl -d "user=ada&password=${S}" http://h/`]: 'curl -d "user=ada&password=[REDACTED]" http://h/',
    [`python3 -c 'login(password = "${S}")'`]: `python3 -c 'login(password = "[REDACTED]")'`,
  };
  for (const [script, expected] of Object.entries(forms)) {
    await session.exec({ shell: 'bash', script: `true || ${script}` });
    assert.equal(records.at(-1).command, `/bin/bash -c true || ${expected}`);
  }
  // Look-alikes with nothing secret are left as they were: a user name as userinfo, numbers after a program.
  for (const script of ['git clone ssh://git@github.com/o/r', 'git clone ssh://ada@h/r', 'curl https://h:8080/a@b', 'ssh ssh://ada@h:22/', 'sudo -u root id', 'timeout -s KILL 5 sleep 1', 'sleep 5', 'echo 5 curl -u x', 'echo "a" : b', `echo '{"na\\u006de":"ada"}'`]) {
    await session.exec({ shell: 'bash', script: `true || ${script}` });
    assert.equal(records.at(-1).command, `/bin/bash -c true || ${script}`);
  }
});

test('audit redaction of 384 KiB adversarial commands stays linear (each under 1 s) and happens before the cut', () => {
  const secret = `${'A1'.repeat(20)}`;
  const base = (argv) => auditRecord({ session: 's', scope: { tenant: 't', conversation: 'c' }, actor: 'a', operation: 'exec', argv });
  // A token straddling the 4 KiB cut: redacted whole, no prefix left.
  const argv = ['/bin/bash', '-c', `echo "${'x '.repeat(2030)}${secret}${'y '.repeat(100)}"`];
  assert.ok(argv.join(' ').slice(0, 4096).includes('A1A1A1'), 'cut first, a prefix of the token would be kept');
  const straddle = base(argv);
  assert.equal(straddle.commandTruncated, true);
  assert.ok(!straddle.command.includes('A1A1A1'), straddle.command.slice(-80));
  assert.ok(straddle.command.includes('[REDACTED]'));
  // Shapes that make naive scanners backtrack or rescan: unterminated quotes and
  // escapes, one endless token, a secret key repeated. A super-linear scan of
  // 384 KiB takes minutes; the linear one takes milliseconds (bound: 1 s each).
  const KIB384 = 384 * 1024;
  const shapes = {
    quotes: `password="${'"\\'.repeat(KIB384 / 2)}`,
    token: `echo "${'a1'.repeat(KIB384 / 2)}`,
    keys: 'apiKey=apiKey='.repeat(KIB384 / 14),
    // Round 11 (R11-3): quoted keys and values never closed, auth tuples never finished.
    quotedKeys: '{"password":"'.repeat(KIB384 / 13),
    escapedKeys: '\\"token\\":\\"'.repeat(KIB384 / 14),
    authTuples: 'auth=("a", auth=(\''.repeat(KIB384 / 17),
    smb: 'smbclient -U '.repeat(KIB384 / 13),
    // After round 12: \uXXXX escapes inside names, whole and cut short.
    unicodeKeys: '"pass\\u0077ord\\u00":'.repeat(KIB384 / 22),
  };
  for (const [name, script] of Object.entries(shapes)) {
    const started = performance.now();
    const record = base(['/bin/bash', '-c', script]);
    const ms = performance.now() - started;
    assert.ok(Buffer.byteLength(record.command) <= 4096, name);
    assert.ok(ms < 1000, `${name}: ${ms} ms for 384 KiB`);
  }
});
