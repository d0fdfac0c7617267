'use strict';

// The shell forms of a credential in a session command, redacted for the
// audit record before Code Mode's source redaction runs over it (audit.js).
// That one reads model-written code (`password: "…"`, `API_TOKEN=…`, long
// tokens in strings) and kept the usual ways a shell command carries a
// credential in clear (round 9, R9-8):
// - an HTTP header of a secret name: `-H "Authorization: Bearer X"` (the
//   scheme word is kept, the credential redacted), `X-Api-Key: X`;
// - URL userinfo: `https://user:X@host` (the password after the first `:`);
// - by program: `curl -u user:X` (`--user`, `-U`, `--proxy-user`, `-uuser:X`,
//   `--user=user:X`), httpie/xh `-a`/`--auth user:X`, `mysql -pX` (and the
//   other MySQL/MariaDB clients), `sshpass -p X` / `-pX`;
// - any `--<secret name> X` with its value as the next word (`--token X`,
//   `--password X`);
// - round 10 (R10-4): curl's `-u` at the end of a cluster of value-less
//   short flags (`-su user:X`, `-fsSLu user:X`), `curl --oauth2-bearer X`,
//   `redis-cli -a X`, and `<docker|podman|…> login -p X`;
// - round 11 (R11-3): a secret key in quotes, as JSON and Python write it
//   (`{"password":"X"}`, `{'password': 'X'}`, `\"password\":\"X\"`), a
//   keyword argument with a quoted value (`password="X"`), the second element
//   of an `auth=("user", "X")` tuple, `ldapsearch -w X` (the OpenLDAP
//   clients), `openssl … -pass pass:X` (`-passin`, `-passout`; `env:`,
//   `file:`, `fd:` and `stdin` name no secret and are kept), `openssl enc -k
//   X`, and `smbclient -U user%X` (the Samba clients, `-Uuser%X`,
//   `--user=user%X`).
// - round 12 (R12-5): URL userinfo that is a token alone
//   (`https://TOKEN@github.com`, 16 characters or more: `git@`, `ada@` are
//   kept) or whose colon is percent-encoded (`ada%3AX@`), a quoted key with
//   blanks before its colon (`{ "password" : "X" }`), a command opened by
//   `$(` or a backtick, a wrapper's numeric argument (`timeout 5 curl …`,
//   `nice -n 10 …`), and `curl -b`/`--cookie X`.
// - after round 12: over http(s), ftp(s) and ws(s) the whole userinfo, to
//   the authority's last `@` (`https://TOKEN@`, `TOKEN:x-oauth-basic@`,
//   `ada:p@TOKEN@`; a user name there is lost, which costs nothing that
//   matters), elsewhere the password to the last `@`; and a quoted key
//   spelled with `\uXXXX` escapes (`{"pass\u0077ord":"X"}`).
// Hygiene for logs, not a boundary (docs/code-mode.md). Like the source
// redaction it uses no regular expression that can backtrack: two left-to-
// right scans, each index visited a bounded number of times, so a hostile
// command costs linear time (bench/audit-redaction.js).

const { isSecretKey, decodeUnicodeEscapes, urlUserinfo, AUTH_SCHEMES, REDACTED } = require('../code-mode/redact');

/** A header or flag name longer than this is data, not a name: never looked up. */
const MAX_NAME_CHARS = 64;
/** The shortest secret key fragment (`token`, code-mode/redact.js): a shorter name is never looked up. */
const MIN_NAME_CHARS = 5;
/** An auth scheme (`Bearer`, `Basic`, `Token`, …) is a short alphabetic word. */
const MAX_SCHEME_CHARS = 16;

const MYSQL_CLIENTS = new Set(['mysql', 'mysqldump', 'mysqladmin', 'mysqlimport', 'mysqlshow', 'mysqlcheck', 'mysqlpump', 'mariadb', 'mariadb-dump', 'mariadb-admin']);
/** Flags whose next word (or `=` value) is `user:password`, by program. */
const USER_PASS_FLAGS = new Map([
  ['curl', new Set(['-u', '--user', '-U', '--proxy-user'])],
  ['http', new Set(['-a', '--auth'])],
  ['https', new Set(['-a', '--auth'])],
  ['xh', new Set(['-a', '--auth'])],
]);
/** curl's short flags that take no value: a cluster of them may end in `u` (`-su user:X`, `-fsSLu user:X`; round 10, R10-4). */
const CURL_NO_VALUE_FLAGS = new Set('fsSLkvigInqGNjJRZl0123456#:'.split(''));
/** The OpenLDAP clients: `-w X` (`-wX`) is the bind password (round 11, R11-3). */
const LDAP_CLIENTS = new Set(['ldapsearch', 'ldapadd', 'ldapmodify', 'ldapdelete', 'ldapmodrdn', 'ldapcompare', 'ldapwhoami', 'ldappasswd', 'ldapexop', 'ldapurl']);
/** openssl's pass phrase arguments: `pass:X` is a secret, `env:`/`file:`/`fd:`/`stdin` name where one is (round 11, R11-3). */
const OPENSSL_PASS_FLAGS = new Set(['-pass', '-passin', '-passout']);
/** The Samba clients: `-U user%X` (`-Uuser%X`, `--user=user%X`) carries the password after `%` (round 11, R11-3). */
const SAMBA_CLIENTS = new Set(['smbclient', 'rpcclient', 'smbcacls', 'smbcquotas', 'smbget', 'smbtree', 'smbpasswd']);
/** Flags whose next word is a secret, by program (round 10, R10-4). */
const SECRET_VALUE_FLAGS = new Map([
  ['redis-cli', new Set(['-a', '--pass', '--askpass'])],
  ['curl', new Set(['--oauth2-bearer', '-b', '--cookie'])],
  ['openssl', new Set(['-k'])],
  ...[...LDAP_CLIENTS].map((client) => [client, new Set(['-w'])]),
  // Round 13 (R13-1): archive passwords.
  ['zip', new Set(['-P', '--password'])],
  ['unzip', new Set(['-P'])],
]);
/** Archivers whose `-pX` (attached) is the password (round 13, R13-1). */
const ATTACHED_P_ARCHIVERS = new Set(['7z', '7za', '7zr']);
/** Container and registry clients: `<program> login -p X` (`-pX`) is a password (round 10, R10-4), `docker run -p 80:80` is not. */
const LOGIN_CLIENTS = new Set(['docker', 'podman', 'nerdctl', 'buildah', 'skopeo', 'helm', 'oras', 'crane']);
/** Words that only prefix the real program of a command. */
const WRAPPERS = new Set(['sudo', 'doas', 'env', 'exec', 'eval', 'command', 'time', 'nohup', 'nice', 'ionice', 'stdbuf', 'setsid', 'xargs', 'timeout', 'then', 'do', 'else', '!']);
/** A wrapper's options that take the next word as their value (`sudo -u root`, `timeout -s KILL`): that word is no program (round 13, R13-1). */
const WRAPPER_VALUE_OPTIONS = new Map([
  ['sudo', new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '--user', '--group', '--host', '--prompt', '--chdir'])],
  ['doas', new Set(['-u', '-C'])],
  ['env', new Set(['-u', '-C', '-S', '--unset', '--chdir', '--split-string'])],
  ['timeout', new Set(['-s', '-k', '--signal', '--kill-after'])],
  ['nice', new Set(['-n', '--adjustment'])],
  ['ionice', new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'])],
  ['stdbuf', new Set(['-i', '-o', '-e', '--input', '--output', '--error'])],
  ['xargs', new Set(['-n', '-I', '-L', '-P', '-s', '-d', '-a', '-E', '--max-args', '--max-procs', '--delimiter', '--arg-file'])],
  ['time', new Set(['-f', '-o', '--format', '--output'])],
]);
/** Shells: after their `-c` (`-lc`, `-ec`, …) comes a command (how a session runs `{shell, script}`). */
const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);
/** Words that end a command: the next word names a program again. */
const SEPARATORS = new Set([';', '&&', '||', '|', '&', '(', ')', '{', '}', '$(', '`']);
/** Whether text[i, i + 6) is a `\uXXXX` escape. */
const isUnicodeEscape = (text, i) => text.charCodeAt(i) === 0x5c && text.charCodeAt(i + 1) === 0x75 && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6));
/** A wrapper's argument (`timeout 5`, `nice -n 10`): a number or a duration, never a program. */
const isWrapperArgument = (word) => /^[0-9]+(\.[0-9]+)?[smhd]?$/.test(word);
/** A word that opens a command substitution (`$(curl`, `"$(curl`, a backtick): the program follows in it. */
const opensCommand = (word) => /^["']?(\$\(|`)/.test(word);

const isSpace = (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isQuote = (c) => c === 0x22 || c === 0x27 || c === 0x60;
const isLetter = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isNameChar = (c) => isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f; // header names: A-Z a-z 0-9 - _
const endsValue = (c) => isSpace(c) || isQuote(c);

/** The end of the run of value characters from `i`. */
function valueEnd(text, i) {
  let j = i;
  while (j < text.length && !endsValue(text.charCodeAt(j))) j += 1;
  return j;
}

/**
 * The end of a quoted value opened before `k` by `close`: the closing quote,
 * or the text's end. A value opened by a shell-escaped quote (`\"`) ends at
 * the next backslash; in any other, a backslash escapes the next character.
 */
function quotedEnd(text, k, close, escaped) {
  let j = k;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x5c) {
      if (escaped) return j;
      j += 2;
      continue;
    }
    if (d === close) return j;
    j += 1;
  }
  return text.length;
}

const skipBlanks = (text, j) => {
  let k = j;
  while (k < text.length && (text.charCodeAt(k) === 0x20 || text.charCodeAt(k) === 0x09)) k += 1;
  return k;
};

/** `[start, end)` of the password in `("user", "X")` (or `[…]`) from `at`, or null: Python's `auth=` tuple. */
function authTuple(text, at) {
  let j = skipBlanks(text, at);
  if (text.charCodeAt(j) !== 0x28 && text.charCodeAt(j) !== 0x5b) return null; // ( [
  j = skipBlanks(text, j + 1);
  const q1 = text.charCodeAt(j);
  if (q1 !== 0x22 && q1 !== 0x27) return null;
  j = quotedEnd(text, j + 1, q1, false);
  if (j >= text.length) return null;
  j = skipBlanks(text, j + 1);
  if (text.charCodeAt(j) !== 0x2c) return null; // ,
  j = skipBlanks(text, j + 1);
  const q2 = text.charCodeAt(j);
  if (q2 !== 0x22 && q2 !== 0x27) return null;
  const end = quotedEnd(text, j + 1, q2, false);
  return end > j + 1 ? [j + 1, end] : null;
}

/**
 * Pass 1, over characters: URL userinfo, secret headers and secret keys
 * (bare or quoted) before `:`, and before `=` with a quoted value. Pushes
 * `[start, end)` ranges to redact, in increasing order.
 */
function scanCharacters(text, ranges) {
  let nameStart = 0; // start of the run of header-name characters ending at i
  // The last quoted key: its name [keyStart, keyEnd) and the index just past its closing quote.
  let keyStart = -1;
  let keyEnd = -1;
  let keyAfter = -1;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x3a && c !== 0x3d) { // ':' '='
      if (isUnicodeEscape(text, i)) { // part of a name (`pass\u0077ord`): decoded when looked up
        i += 6;
        continue;
      }
      if (!isNameChar(c)) {
        if ((c === 0x22 || c === 0x27) && i > nameStart) [keyStart, keyEnd, keyAfter] = [nameStart, i, i + 1];
        else if (c === 0x5c && i > nameStart && (text.charCodeAt(i + 1) === 0x22 || text.charCodeAt(i + 1) === 0x27)) [keyStart, keyEnd, keyAfter] = [nameStart, i, i + 2];
        else if ((c === 0x20 || c === 0x09) && keyAfter === i) keyAfter = i + 1; // `"password" :`
        nameStart = i + 1;
      }
      i += 1;
      continue;
    }
    const isColon = c === 0x3a;
    if (isColon && text.charCodeAt(i + 1) === 0x2f && text.charCodeAt(i + 2) === 0x2f) { // "://": userinfo?
      const { range, end: j } = urlUserinfo(text, i, text.slice(nameStart, i));
      if (range !== null) ranges.push(range);
      nameStart = j;
      i = j;
      continue;
    }
    // The key: the name run ending here, or a quoted one closed just before (`"password":`).
    const quotedKey = i === nameStart && keyAfter === i;
    const [from, to] = quotedKey ? [keyStart, keyEnd] : [nameStart, i];
    nameStart = i + 1;
    if (!isColon && to - from <= MAX_NAME_CHARS && text.slice(from, to).toLowerCase().endsWith('auth')) {
      const tuple = authTuple(text, i + 1);
      if (tuple !== null) {
        ranges.push(tuple);
        nameStart = tuple[1];
        i = tuple[1];
        continue;
      }
    }
    const name = to - from <= MAX_NAME_CHARS && to - from >= MIN_NAME_CHARS ? decodeUnicodeEscapes(text.slice(from, to)) : '';
    if (name === '' || !isSecretKey(name)) {
      i += 1;
      continue;
    }
    let k = skipBlanks(text, i + 1);
    // A quoted value (`"X"`, `'X'`, shell-escaped `\"X\"`) runs to its closing quote.
    let close = -1;
    const escaped = text.charCodeAt(k) === 0x5c && (text.charCodeAt(k + 1) === 0x22 || text.charCodeAt(k + 1) === 0x27);
    if (escaped) close = text.charCodeAt(k + 1);
    else if (text.charCodeAt(k) === 0x22 || text.charCodeAt(k) === 0x27) close = text.charCodeAt(k);
    // `name=value` unquoted is the source redaction's form (KEY=value); a
    // quoted key's unquoted value is JSON's number, boolean or null.
    if (close < 0 && (!isColon || quotedKey)) {
      i += 1;
      continue;
    }
    if (close >= 0) k += escaped ? 2 : 1;
    const valueTo = (at) => (close < 0 ? valueEnd(text, at) : quotedEnd(text, at, close, escaped));
    // `Name: [scheme] credential`: the scheme (a short word followed by another) is kept;
    // in quotes only a known one (`"Bearer X"`), else a passphrase would keep its first word.
    let end = valueEnd(text, k);
    let m = end;
    while (m < text.length && text.charCodeAt(m) === 0x20) m += 1;
    const scheme = end - k <= MAX_SCHEME_CHARS && m > end && m < text.length && !endsValue(text.charCodeAt(m));
    let isWord = scheme && (close < 0 || AUTH_SCHEMES.has(text.slice(k, end).toLowerCase()));
    for (let s = k; isWord && s < end; s += 1) isWord = isLetter(text.charCodeAt(s));
    if (isWord) k = m;
    end = valueTo(k);
    if (end > k) ranges.push([k, end]);
    nameStart = end;
    i = Math.max(end, i + 1);
  }
}

/** `[start, end)` of a word without the quotes (and closing `;`/`)`) around its value. */
function unquoted(text, start, end) {
  let s = start;
  let e = end;
  while (s < e && isQuote(text.charCodeAt(s))) s += 1;
  while (e > s && (isQuote(text.charCodeAt(e - 1)) || text.charCodeAt(e - 1) === 0x3b || text.charCodeAt(e - 1) === 0x29)) e -= 1;
  return [s, e];
}

/** What follows the first `sep` (default `:`) in text[start, end): the password of `user:password`, if any. */
function afterColon(text, start, end, sep = 0x3a) {
  for (let colon = start; colon + 1 < end; colon += 1) if (text.charCodeAt(colon) === sep) return [colon + 1, end];
  return null;
}

/** What a pending flag redacts of the next word text[start, end): all of it, after `:`, after `%`, or after openssl's `pass:`. */
function pendingRange(text, pending, start, end) {
  const [s, e] = unquoted(text, start, end);
  if (pending === 'next') return [s, e];
  if (pending === 'afterColon') return afterColon(text, s, e);
  if (pending === 'afterPercent') return afterColon(text, s, e, 0x25);
  return text.startsWith('pass:', s) ? [s + 5, e] : null; // 'opensslPass'
}

/** The program text[start, end) names: without the quotes, `(`, `$(` and `;` around it, and without its directory. */
function programOf(text, start, end) {
  let s = start;
  while (s < end && '"\'`($'.includes(text[s])) s += 1;
  const [, e] = unquoted(text, s, end);
  const bare = text.slice(s, e);
  return bare.slice(bare.lastIndexOf('/') + 1);
}

const isAssignment = (word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);

/** What a flag word asks of the next word (`'next'`, `'afterColon'`) or the range it redacts itself. */
function judgeFlag(text, program, subcommand, start, end) {
  const word = text.slice(start, Math.min(end, start + MAX_NAME_CHARS + 3));
  if (SECRET_VALUE_FLAGS.get(program)?.has(word)) return { pending: 'next' };
  if (LOGIN_CLIENTS.has(program) && subcommand === 'login' && word.startsWith('-p') && !word.startsWith('--')) {
    return word === '-p' ? { pending: 'next' } : { range: unquoted(text, start + 2, end) };
  }
  if (program === 'curl' && word.length > 2 && word[0] === '-' && word[1] !== '-') {
    // A cluster of value-less short flags ending in -u/-U: its value is the
    // rest of the word, or the next word.
    let k = 1;
    while (k < word.length && CURL_NO_VALUE_FLAGS.has(word[k])) k += 1;
    if (k > 1 && (word[k] === 'u' || word[k] === 'U')) {
      if (k + 1 === word.length && end - start === word.length) return { pending: 'afterColon' };
      return { range: afterColon(text, start + k + 1, unquoted(text, start, end)[1]) };
    }
  }
  if (program === 'openssl' && OPENSSL_PASS_FLAGS.has(word)) return { pending: 'opensslPass' };
  if (LDAP_CLIENTS.has(program) && word.startsWith('-w') && end - start > 2) return { range: unquoted(text, start + 2, end) };
  if (SAMBA_CLIENTS.has(program)) {
    if (word === '-U' || word === '--user') return { pending: 'afterPercent' };
    if (word.startsWith('--user=')) return { range: afterColon(text, start + 7, unquoted(text, start, end)[1], 0x25) };
    if (word.startsWith('-U')) return { range: afterColon(text, start + 2, unquoted(text, start, end)[1], 0x25) };
  }
  const userPass = USER_PASS_FLAGS.get(program);
  if (userPass !== undefined) {
    if (userPass.has(word)) return { pending: 'afterColon' };
    const eq = word.indexOf('=');
    if (word.startsWith('--') && eq > 0 && userPass.has(word.slice(0, eq))) return { range: afterColon(text, start + eq + 1, unquoted(text, start, end)[1]) };
    const short = [...userPass].find((flag) => flag.length === 2 && word.startsWith(flag) && word.length > 2);
    if (short !== undefined) return { range: afterColon(text, start + 2, unquoted(text, start, end)[1]) };
  }
  if ((MYSQL_CLIENTS.has(program) || program === 'sshpass') && word.startsWith('-p') && end - start > 2) return { range: unquoted(text, start + 2, end) };
  if (ATTACHED_P_ARCHIVERS.has(program) && word.startsWith('-p') && end - start > 2) return { range: unquoted(text, start + 2, end) };
  // `aws configure set aws_secret_access_key X`: a secret setting's name, then its value.
  if (program === 'aws' && subcommand === 'configure' && !word.startsWith('-') && end - start <= MAX_NAME_CHARS && isSecretKey(word)) return { pending: 'next' };
  if (program === 'sshpass' && word === '-p') return { pending: 'next' };
  if (word.startsWith('--') && !word.includes('=') && end - start <= MAX_NAME_CHARS) {
    const name = word.slice(2).toLowerCase();
    if (isSecretKey(name) && !/(file|stdin|env)$/.test(name)) return { pending: 'next' };
  }
  return {};
}

/**
 * Pass 2, over words (runs of non-space): the program of each command and
 * its credential flags. Pushes ranges in increasing order.
 */
function scanWords(text, ranges) {
  let commandStart = true;
  let program = '';
  let subcommand = null; // the first word after the program that is not a flag
  let pending = null;
  let wrapper = null; // the last wrapper before the program (`sudo`, `timeout`, …)
  let wrapperValue = false; // the next word is the value of that wrapper's option
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      if (c === 0x0a) {
        commandStart = true;
        pending = null;
        wrapper = null;
        wrapperValue = false;
      }
      i += 1;
      continue;
    }
    const start = i;
    while (i < text.length && !isSpace(text.charCodeAt(i))) i += 1;
    const end = i;
    const short = end - start <= MAX_NAME_CHARS ? text.slice(start, end) : null;
    if (short !== null && SEPARATORS.has(short)) {
      commandStart = true;
      pending = null;
      wrapper = null;
      wrapperValue = false;
      continue;
    }
    if (pending !== null) {
      const range = pendingRange(text, pending, start, end);
      if (range !== null && range[1] > range[0]) ranges.push(range);
      pending = null;
    } else if (commandStart || (short !== null && opensCommand(short))) {
      const word = short ?? '';
      if (wrapperValue) {
        wrapperValue = false; // `root` in `sudo -u root`: the option's value
      } else if (WRAPPERS.has(word)) {
        wrapper = word;
      } else if (word.startsWith('-')) {
        wrapperValue = WRAPPER_VALUE_OPTIONS.get(wrapper)?.has(word) ?? false;
      } else if (!isAssignment(word) && !isWrapperArgument(word)) {
        program = programOf(text, start, end);
        subcommand = null;
        commandStart = false;
        wrapper = null;
      }
    } else if (SHELLS.has(program) && short !== null && /^-[a-z]*c$/.test(short)) {
      commandStart = true;
    } else {
      if (subcommand === null && short !== null && !short.startsWith('-')) subcommand = short;
      const verdict = judgeFlag(text, program, subcommand, start, end);
      if (verdict.range && verdict.range[1] > verdict.range[0]) ranges.push(verdict.range);
      pending = verdict.pending ?? null;
    }
    const last = text.charCodeAt(end - 1);
    if (last === 0x3b || last === 0x7c || last === 0x26) commandStart = true; // `true;` `a|` `a&`
  }
}

/** The command with each credential form replaced by [REDACTED]. */
function redactShellCredentials(text) {
  const byChar = [];
  const byWord = [];
  scanCharacters(text, byChar);
  scanWords(text, byWord);
  if (byChar.length === 0 && byWord.length === 0) return text;
  // Two sorted lists merged; a range overlapping the previous one extends it.
  const merged = [];
  let a = 0;
  let b = 0;
  while (a < byChar.length || b < byWord.length) {
    const next = b >= byWord.length || (a < byChar.length && byChar[a][0] <= byWord[b][0]) ? byChar[a++] : byWord[b++];
    const top = merged.at(-1);
    if (top !== undefined && next[0] <= top[1]) top[1] = Math.max(top[1], next[1]);
    else merged.push([next[0], next[1]]);
  }
  const parts = [];
  let copied = 0;
  for (const [start, end] of merged) {
    parts.push(text.slice(copied, start), REDACTED);
    copied = end;
  }
  parts.push(text.slice(copied));
  return parts.join('');
}

module.exports = { redactShellCredentials };
