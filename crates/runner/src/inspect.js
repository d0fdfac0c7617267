// A port of the parts of Node's lib/internal/util/inspect.js that plain data
// needs, for console.js: `inspect` (depth 2, breakLength 80, compact 3,
// arrays of more than 6 items grouped in columns, circular references,
// class names, Map/Set/Date/RegExp/Error/functions) and `format` (Node's
// util.format: %s %d %i %f %j %o %O %c %%). Evaluated with console.js on
// the first read of `console`, in strict mode; returns {inspect, format}.
(function () {
  'use strict';
  const BREAK_LENGTH = 80;
  const MIN_LINE_LENGTH = 16;
  const MAX_ARRAY_LENGTH = 100;
  const MAX_STRING_LENGTH = 10000;
  const KEY_PLAIN = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  const ESCAPES = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 92: '\\\\' };

  function strEscape(str) {
    let quote = "'";
    if (str.includes("'")) {
      if (!str.includes('"')) quote = '"';
      else if (!str.includes('`') && !str.includes('${')) quote = '`';
    }
    let out = '';
    for (let i = 0; i < str.length; i++) {
      const code = str.charCodeAt(i);
      if (str[i] === quote && quote === "'") out += "\\'";
      else if (ESCAPES[code]) out += ESCAPES[code];
      else if (code < 32 || (code > 126 && code < 160)) out += '\\x' + code.toString(16).toUpperCase().padStart(2, '0');
      else out += str[i];
    }
    return quote + out + quote;
  }

  function formatPrimitive(value, ctx) {
    if (typeof value === 'string') {
      let trailer = '';
      if (value.length > MAX_STRING_LENGTH) {
        const remaining = value.length - MAX_STRING_LENGTH;
        value = value.slice(0, MAX_STRING_LENGTH);
        trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
      }
      if (value.length > MIN_LINE_LENGTH && value.length > ctx.breakLength - ctx.indentationLvl - 4) {
        return value.split(/(?<=\n)/).map(strEscape).join(` +\n${' '.repeat(ctx.indentationLvl + 2)}`) + trailer;
      }
      return strEscape(value) + trailer;
    }
    if (typeof value === 'number') return Object.is(value, -0) ? '-0' : `${value}`;
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'symbol') return value.toString();
    return `${value}`;
  }

  function constructorName(value) {
    let object = value;
    while (object !== null && object !== undefined) {
      const descriptor = Object.getOwnPropertyDescriptor(object, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' && descriptor.value.name !== '') return descriptor.value.name;
      object = Object.getPrototypeOf(object);
    }
    return null;
  }

  function prefix(constructor, tag, fallback, size = '') {
    if (constructor === null) {
      if (tag !== '' && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== '' && constructor !== tag) return `${constructor}${size} [${tag}] `;
    return `${constructor}${size} `;
  }

  function functionBase(value, constructor) {
    const source = Function.prototype.toString.call(value);
    if (source.startsWith('class') && source.endsWith('}')) {
      let base = `[class ${value.name || '(anonymous)'}`;
      const parent = Object.getPrototypeOf(value);
      if (parent && parent.name) base += ` extends ${parent.name}`;
      return base + ']';
    }
    let type = 'Function';
    const kind = Object.prototype.toString.call(value);
    if (kind === '[object AsyncFunction]') type = 'AsyncFunction';
    else if (kind === '[object GeneratorFunction]') type = 'GeneratorFunction';
    else if (kind === '[object AsyncGeneratorFunction]') type = 'AsyncGeneratorFunction';
    let base = `[${type}`;
    if (constructor === null) base += ' (null prototype)';
    base += value.name === '' ? ' (anonymous)' : `: ${value.name}`;
    base += ']';
    if (constructor !== type && constructor !== null && constructor !== 'Function') base += ` ${constructor}`;
    return base;
  }

  function formatError(error, ctx) {
    const name = error.name != null ? String(error.name) : 'Error';
    const message = error.message != null ? String(error.message) : '';
    let head = message === '' ? name : `${name}: ${message}`;
    const frames = typeof error.stack === 'string' ? error.stack.split('\n').filter((line) => /^\s+at /.test(line)) : [];
    let text = frames.length === 0 ? `[${head}]` : `${head}\n${frames.join('\n')}`;
    if (ctx.indentationLvl !== 0) text = text.replaceAll('\n', `\n${' '.repeat(ctx.indentationLvl)}`);
    return text;
  }

  function formatProperty(ctx, value, recurseTimes, key, isArrayEntry) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) ?? { value: value[key], enumerable: true };
    let str;
    if (descriptor.value !== undefined || !('get' in descriptor)) {
      ctx.indentationLvl += 2;
      str = formatValue(ctx, descriptor.value, recurseTimes);
      ctx.indentationLvl -= 2;
    } else {
      str = descriptor.set !== undefined ? '[Getter/Setter]' : descriptor.get !== undefined ? '[Getter]' : '[Setter]';
    }
    if (isArrayEntry) return str;
    let name;
    if (typeof key === 'symbol') name = `[${key.toString()}]`;
    else if (key === '__proto__') name = "['__proto__']";
    else if (KEY_PLAIN.test(key)) name = key;
    else name = strEscape(key);
    return `${name}: ${str}`;
  }

  function remainingText(remaining) {
    return `... ${remaining} more item${remaining > 1 ? 's' : ''}`;
  }

  function formatArray(ctx, value, recurseTimes) {
    const length = Math.min(ctx.maxArrayLength, value.length);
    const output = [];
    let holes = 0;
    for (let i = 0; i < length; i++) {
      if (!Object.prototype.hasOwnProperty.call(value, i)) {
        holes += 1;
        continue;
      }
      if (holes > 0) output.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
      holes = 0;
      output.push(formatProperty(ctx, value, recurseTimes, i, true));
    }
    if (holes > 0) output.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
    if (value.length > length) output.push(remainingText(value.length - length));
    return output;
  }

  function formatEntries(ctx, iterable, size, recurseTimes, entry) {
    const output = [];
    ctx.indentationLvl += 2;
    let i = 0;
    for (const item of iterable) {
      if (i >= ctx.maxArrayLength) break;
      output.push(entry(item));
      i += 1;
    }
    if (size > ctx.maxArrayLength) output.push(remainingText(size - ctx.maxArrayLength));
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatValue(ctx, value, recurseTimes) {
    if (typeof value !== 'object' && typeof value !== 'function') return formatPrimitive(value, ctx);
    if (value === null) return 'null';
    if (ctx.seen.includes(value)) {
      let index = ctx.circular.get(value);
      if (index === undefined) {
        index = ctx.circular.size + 1;
        ctx.circular.set(value, index);
      }
      return `[Circular *${index}]`;
    }
    return formatRaw(ctx, value, recurseTimes);
  }

  function formatRaw(ctx, value, recurseTimes) {
    const constructor = constructorName(value);
    let tag = value[Symbol.toStringTag];
    if (typeof tag !== 'string' || (tag !== '' && Object.prototype.propertyIsEnumerable.call(value, Symbol.toStringTag))) tag = '';
    let keys = Object.keys(value);
    let base = '';
    let braces = ['{', '}'];
    let formatter = () => [];
    let isArray = false;
    if (Array.isArray(value)) {
      const pre = constructor !== 'Array' || tag !== '' ? prefix(constructor, tag, 'Array', `(${value.length})`) : '';
      keys = keys.filter((key) => !/^(0|[1-9][0-9]*)$/.test(key));
      braces = [`${pre}[`, ']'];
      if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
      isArray = true;
      formatter = formatArray;
    } else if (value instanceof Set) {
      const pre = prefix(constructor, tag, 'Set', `(${value.size})`);
      if (value.size === 0 && keys.length === 0) return `${pre}{}`;
      braces = [`${pre}{`, '}'];
      formatter = (c, v, r) => formatEntries(c, v, v.size, r, (item) => formatValue(c, item, r));
    } else if (value instanceof Map) {
      const pre = prefix(constructor, tag, 'Map', `(${value.size})`);
      if (value.size === 0 && keys.length === 0) return `${pre}{}`;
      braces = [`${pre}{`, '}'];
      formatter = (c, v, r) => formatEntries(c, v, v.size, r, ([k, item]) => `${formatValue(c, k, r)} => ${formatValue(c, item, r)}`);
    } else if (typeof value === 'function') {
      base = functionBase(value, constructor);
      if (keys.length === 0) return base;
    } else if (value instanceof RegExp) {
      base = RegExp.prototype.toString.call(value);
      if (keys.length === 0 || recurseTimes > ctx.depth) return base;
    } else if (value instanceof Date) {
      base = Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
      if (keys.length === 0) return base;
    } else if (value instanceof Error) {
      keys = keys.filter((key) => key !== 'stack' && key !== 'message');
      if ('cause' in value && !keys.includes('cause')) keys.push('cause');
      base = formatError(value, ctx);
      if (keys.length === 0) return base;
    } else if (constructor === 'Object') {
      if (tag !== '') braces[0] = `${prefix(constructor, tag, 'Object')}{`;
      if (keys.length === 0) return `${braces[0]}}`;
    } else {
      const style = constructor === null ? '[Object: null prototype] ' : prefix(constructor, tag, 'Object');
      if (keys.length === 0) return `${style}{}`;
      braces[0] = `${style}{`;
    }
    if (recurseTimes > ctx.depth) {
      if (isArray) return '[Array]';
      return `[${constructor === null ? 'Object: null prototype' : constructor}]`;
    }
    recurseTimes += 1;
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    const output = formatter(ctx, value, recurseTimes);
    for (const key of keys) output.push(formatProperty(ctx, value, recurseTimes, key, false));
    const index = ctx.circular.get(value);
    if (index !== undefined) base = base === '' ? `<ref *${index}>` : `<ref *${index}> ${base}`;
    ctx.seen.pop();
    return reduceToSingleString(ctx, output, base, braces, isArray, recurseTimes, value);
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let outputLength = output.length;
    if (value.length > ctx.maxArrayLength) outputLength -= 1;
    const separatorSpace = 2;
    const dataLen = new Array(outputLength);
    for (let i = 0; i < outputLength; i++) {
      const len = output[i].length;
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength && (totalLength / actualMax > 5 || maxLength <= 6)) {
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(
        Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
        Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
        3 * 4,
        15,
      );
      if (columns <= 1) return output;
      const tmp = [];
      const maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineLength = 0;
        for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
        maxLineLength.push(lineLength + separatorSpace);
      }
      let padStart = true;
      for (let i = 0; i < output.length; i++) {
        if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') {
          padStart = false;
          break;
        }
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const cell = `${output[j]}, `;
          str += padStart ? cell.padStart(maxLineLength[j - i], ' ') : cell.padEnd(maxLineLength[j - i], ' ');
        }
        str += padStart ? output[j].padStart(maxLineLength[j - i] - separatorSpace, ' ') : output[j];
        tmp.push(str);
      }
      if (value.length > ctx.maxArrayLength) tmp.push(output[outputLength]);
      return tmp;
    }
    return output;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let totalLength = output.length + start;
    if (totalLength + output.length > ctx.breakLength) return false;
    for (const entry of output) {
      totalLength += entry.length;
      if (totalLength > ctx.breakLength) return false;
    }
    return base === '' || !base.includes('\n');
  }

  function reduceToSingleString(ctx, output, base, braces, isArray, recurseTimes, value) {
    const entries = output.length;
    if (isArray && entries > 6) output = groupArrayElements(ctx, output, value);
    if (ctx.currentDepth - recurseTimes < 3 && entries === output.length) {
      const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
      if (isBelowBreakLength(ctx, output, start, base)) {
        const joined = output.join(', ');
        if (!joined.includes('\n')) return `${base ? `${base} ` : ''}${braces[0]} ${joined} ${braces[1]}`;
      }
    }
    const indentation = `\n${' '.repeat(ctx.indentationLvl)}`;
    return `${base ? `${base} ` : ''}${braces[0]}${indentation}  ${output.join(`,${indentation}  `)}${indentation}${braces[1]}`;
  }

  function inspect(value, options = {}) {
    const ctx = {
      depth: options.depth ?? 2, breakLength: options.breakLength ?? BREAK_LENGTH, maxArrayLength: options.maxArrayLength ?? MAX_ARRAY_LENGTH,
      indentationLvl: 0, currentDepth: 0, seen: [], circular: new Map(),
    };
    if (ctx.depth === null) ctx.depth = Infinity;
    return formatValue(ctx, value, 0);
  }

  function formatNumber(number) {
    return Object.is(number, -0) ? '-0' : `${number}`;
  }

  function hasBuiltInToString(value) {
    const own = (object) => Object.prototype.hasOwnProperty.call(object, 'toString');
    let object = value;
    while (object !== null && object !== Object.prototype && object !== Error.prototype && object !== Date.prototype && object !== Array.prototype) {
      if (own(object)) return false;
      object = Object.getPrototypeOf(object);
    }
    return true;
  }

  function format(...args) {
    const first = args[0];
    let a = 0;
    let str = '';
    let join = '';
    if (typeof first === 'string') {
      if (args.length === 1) return first;
      let lastPos = 0;
      let temp;
      for (let i = 0; i < first.length - 1; i++) {
        if (first.charCodeAt(i) !== 37) continue;
        const next = first.charCodeAt(++i);
        if (a + 1 !== args.length) {
          switch (next) {
            case 115: { // s
              const arg = args[++a];
              if (typeof arg === 'number') temp = formatNumber(arg);
              else if (typeof arg === 'bigint') temp = `${arg}n`;
              else if (typeof arg !== 'object' || arg === null || !hasBuiltInToString(arg)) temp = String(arg);
              else temp = inspect(arg, { depth: 0 });
              break;
            }
            case 106: // j
              try { temp = JSON.stringify(args[++a]); } catch (error) { temp = '[Circular]'; }
              break;
            case 100: { // d
              const arg = args[++a];
              temp = typeof arg === 'bigint' ? `${arg}n` : typeof arg === 'symbol' ? 'NaN' : formatNumber(Number(arg));
              break;
            }
            case 79: temp = inspect(args[++a]); break; // O
            case 111: temp = inspect(args[++a], { depth: 4 }); break; // o
            case 105: { // i
              const arg = args[++a];
              temp = typeof arg === 'bigint' ? `${arg}n` : typeof arg === 'symbol' ? 'NaN' : formatNumber(Number.parseInt(arg));
              break;
            }
            case 102: { // f
              const arg = args[++a];
              temp = typeof arg === 'symbol' ? 'NaN' : formatNumber(Number.parseFloat(arg));
              break;
            }
            case 99: a += 1; temp = ''; break; // c
            case 37: str += first.slice(lastPos, i); lastPos = i + 1; continue;
            default: continue;
          }
          if (lastPos !== i - 1) str += first.slice(lastPos, i - 1);
          str += temp;
          lastPos = i + 1;
        } else if (next === 37) {
          str += first.slice(lastPos, i);
          lastPos = i + 1;
        }
      }
      if (lastPos !== 0) {
        a += 1;
        join = ' ';
        if (lastPos < first.length) str += first.slice(lastPos);
      }
    }
    while (a < args.length) {
      const value = args[a];
      str += join + (typeof value !== 'string' ? inspect(value) : value);
      join = ' ';
      a += 1;
    }
    return str;
  }

  return { inspect, format };
})
