// The `console` of Node that makes sense without a terminal, rendered as
// Node renders it for a pipe (no colours): log/info/debug/warn/error through
// util.format, dir, table, group/groupEnd, time/timeEnd/timeLog,
// count/countReset, assert, trace. Formatting comes from inspect.js (`util`).
// `native.write(level, text)` sends one line (console.rs bounds it);
// `native.now()` is a monotonic clock in milliseconds. Evaluated on the
// first read of `console`, in strict mode; returns the console object.
(function (native, util) {
  'use strict';
  const { inspect, format } = util;

  // ---- the console ----
  let groupIndent = '';
  const counts = new Map();
  const timers = new Map();

  function write(level, text) {
    if (groupIndent !== '') {
      if (text.includes('\n')) text = text.replace(/\n/g, `\n${groupIndent}`);
      text = groupIndent + text;
    }
    native.write(level, text);
  }

  function formatTime(ms) {
    let hours = 0;
    let minutes = 0;
    let seconds = 0;
    if (ms >= 1000) {
      if (ms >= 60000) {
        if (ms >= 3600000) {
          hours = Math.floor(ms / 3600000);
          ms %= 3600000;
        }
        minutes = Math.floor(ms / 60000);
        ms %= 60000;
      }
      seconds = ms / 1000;
    }
    if (hours !== 0 || minutes !== 0) {
      const [whole, fraction] = seconds.toFixed(3).split('.');
      const pad = (n) => String(n).padStart(2, '0');
      const res = hours !== 0 ? `${hours}:${pad(minutes)}` : minutes;
      return `${res}:${pad(whole)}.${fraction} (${hours !== 0 ? 'h:m' : ''}m:ss.mmm)`;
    }
    if (seconds !== 0) return `${seconds.toFixed(3)}s`;
    return `${Number(ms.toFixed(3))}ms`;
  }

  function warning(text) {
    write('warn', `Warning: ${text}`);
  }

  function table(data, properties) {
    if (properties !== undefined && !Array.isArray(properties)) {
      throw new TypeError(`The "properties" argument must be an instance of Array. Received ${inspect(properties)}`);
    }
    if (data === null || typeof data !== 'object') return console.log(data);
    const cell = (v) => {
      const depth = v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 2 ? -1 : 0;
      return inspect(v, { depth, maxArrayLength: 3, breakLength: Infinity });
    };
    let indexKey = '(index)';
    let rows = null;
    let valuesHeader = 'Values';
    if (data instanceof Map) {
      indexKey = '(iteration index)';
      const keys = [];
      const values = [];
      let i = 0;
      for (const [k, v] of data) {
        keys.push(cell(k));
        values.push(cell(v));
        i += 1;
      }
      return console.log(render([indexKey, 'Key', 'Values'], [Array.from({ length: i }, (_, n) => cell(n)), keys, values]));
    }
    if (data instanceof Set) {
      const values = [...data].map(cell);
      return console.log(render(['(iteration index)', 'Values'], [values.map((_, n) => cell(n)), values]));
    }
    const map = Object.create(null);
    let hasPrimitives = false;
    const valuesColumn = [];
    const indexColumn = Object.keys(data);
    for (let i = 0; i < indexColumn.length; i++) {
      const item = data[indexColumn[i]];
      const primitive = item === null || (typeof item !== 'function' && typeof item !== 'object');
      if (properties === undefined && primitive) {
        hasPrimitives = true;
        valuesColumn[i] = cell(item);
      } else {
        for (const key of properties || Object.keys(item)) {
          map[key] ??= [];
          map[key][i] = (primitive && properties) || !Object.prototype.hasOwnProperty.call(item, key) ? '' : cell(item[key]);
        }
      }
    }
    const header = Object.keys(map);
    rows = Object.values(map);
    if (hasPrimitives) {
      header.push(valuesHeader);
      rows.push(valuesColumn);
    }
    header.unshift(indexKey);
    rows.unshift(indexColumn);
    return console.log(render(header, rows));
  }

  function render(head, columns) {
    const rows = [];
    const widths = head.map((h) => h.length + 2);
    const longest = Math.max(0, ...columns.map((c) => c.length));
    for (let i = 0; i < head.length; i++) {
      const column = columns[i];
      for (let j = 0; j < longest; j++) {
        rows[j] ??= [];
        const value = Object.prototype.hasOwnProperty.call(column, j) ? String(column[j]) : '';
        rows[j][i] = value;
        widths[i] = Math.max(widths[i], value.length + 2);
      }
    }
    const line = (left, middle, right) => left + widths.map((w) => '─'.repeat(w)).join(middle) + right;
    const row = (cells) => `│ ${cells.map((c, i) => c.padEnd(widths[i] - 2)).join(' │ ')} │`;
    const out = [line('┌', '┬', '┐'), row(head), line('├', '┼', '┤')];
    for (const r of rows) out.push(row(r));
    out.push(line('└', '┴', '┘'));
    return out.join('\n');
  }

  const console = {
    log: (...args) => write('log', format(...args)),
    info: (...args) => write('info', format(...args)),
    debug: (...args) => write('debug', format(...args)),
    warn: (...args) => write('warn', format(...args)),
    error: (...args) => write('error', format(...args)),
    dir: (value, options) => write('log', inspect(value, { depth: options?.depth })),
    dirxml: (...args) => write('log', format(...args)),
    table,
    group: (...label) => {
      if (label.length > 0) write('log', format(...label));
      groupIndent += '  ';
    },
    groupEnd: () => { groupIndent = groupIndent.slice(0, -2); },
    count: (label = 'default') => {
      label = `${label}`;
      const count = (counts.get(label) ?? 0) + 1;
      counts.set(label, count);
      write('log', `${label}: ${count}`);
    },
    countReset: (label = 'default') => {
      label = `${label}`;
      if (!counts.has(label)) return warning(`Count for '${label}' does not exist`);
      counts.delete(label);
      return undefined;
    },
    time: (label = 'default') => {
      label = `${label}`;
      if (timers.has(label)) return warning(`Label '${label}' already exists for console.time()`);
      timers.set(label, native.now());
      return undefined;
    },
    timeEnd: (label = 'default') => {
      label = `${label}`;
      if (!timers.has(label)) return warning(`No such label '${label}' for console.timeEnd()`);
      write('log', format('%s: %s', label, formatTime(native.now() - timers.get(label))));
      timers.delete(label);
      return undefined;
    },
    timeLog: (label = 'default', ...data) => {
      label = `${label}`;
      if (!timers.has(label)) return warning(`No such label '${label}' for console.timeLog()`);
      write('log', format('%s: %s', label, formatTime(native.now() - timers.get(label)), ...data));
      return undefined;
    },
    assert: (expression, ...args) => {
      if (expression) return;
      args[0] = `Assertion failed${args.length === 0 ? '' : `: ${args[0]}`}`;
      write('warn', format(...args));
    },
    trace: (...args) => {
      const frames = (new Error().stack ?? '').split('\n').filter((l) => /^\s+at /.test(l) && !l.includes('<console>'));
      const message = format(...args);
      write('error', `Trace${message === '' ? '' : `: ${message}`}${frames.length > 0 ? `\n${frames.join('\n')}` : ''}`);
    },
    clear: () => {},
  };
  console.groupCollapsed = console.group;
  for (const [name, fn] of Object.entries(console)) {
    Object.defineProperty(fn, 'name', { value: name, configurable: true });
  }
  return console;
  return console;
})
