'use strict';

// A parser of the Containerfile (Dockerfile) syntax deploy/k8s/Containerfile
// uses, for deploy-k8s.test.js: the image cannot be built on this project's
// machines (no container runtime, no base images), so it is checked offline.
// Strict on purpose: an instruction it does not know, a line continued past
// the end of the file, a flag it does not know or malformed JSON (exec form)
// is an error, never skipped.

/** The instructions the file may use. */
const INSTRUCTIONS = new Set([
  'FROM', 'ARG', 'WORKDIR', 'COPY', 'RUN', 'USER', 'EXPOSE', 'LABEL', 'ENV',
  'ENTRYPOINT', 'CMD', 'HEALTHCHECK',
]);
/** The flags each instruction may carry (`--name=value`). */
const FLAGS = {
  COPY: new Set(['from', 'chown', 'chmod']),
  HEALTHCHECK: new Set(['interval', 'timeout', 'retries', 'start-period']),
};

/**
 * The logical lines of `text`: comments and blank lines dropped, a line
 * ending in `\` joined with the next (comment lines inside a continuation
 * are dropped, as Docker does). Each: {line (1-based, of its start), text}.
 */
function logicalLines(text) {
  const out = [];
  let current = null;
  text.split('\n').forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && current === null)) return;
    if (trimmed === '') return; // an empty line inside a continuation
    const continued = trimmed.endsWith('\\');
    const body = continued ? trimmed.slice(0, -1).trimEnd() : trimmed;
    if (current === null) current = { line: i + 1, text: body };
    else current.text += ` ${body}`;
    if (!continued) {
      out.push(current);
      current = null;
    }
  });
  if (current !== null) throw new Error(`line ${current.line}: continued past the end of the file`);
  return out;
}

/** `--name=value` flags at the start of `rest`, and what follows them. */
function takeFlags(keyword, rest, line) {
  const flags = {};
  let remaining = rest;
  for (;;) {
    const match = /^--([a-z-]+)=(\S+)\s*/.exec(remaining);
    if (!match) break;
    if (!FLAGS[keyword]?.has(match[1])) throw new Error(`line ${line}: ${keyword} --${match[1]} is not known here`);
    flags[match[1]] = match[2];
    remaining = remaining.slice(match[0].length);
  }
  return { flags, remaining };
}

/** Exec form (a JSON array of strings) or shell form (one string). */
function commandOf(text, line) {
  if (!text.startsWith('[')) return { form: 'shell', command: text };
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`line ${line}: exec form is not a JSON array: ${error.message}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) {
    throw new Error(`line ${line}: exec form must be an array of strings`);
  }
  return { form: 'exec', command: parsed };
}

/** One instruction: {keyword, line, flags, args, ...by keyword}. */
function instruction({ line, text }) {
  const match = /^([A-Za-z]+)\s+(.*)$/.exec(text);
  if (!match) throw new Error(`line ${line}: not an instruction: ${text}`);
  const keyword = match[1].toUpperCase();
  if (!INSTRUCTIONS.has(keyword)) throw new Error(`line ${line}: unknown instruction ${match[1]}`);
  const { flags, remaining } = takeFlags(keyword, match[2], line);
  const parsed = { keyword, line, flags, rest: remaining };
  switch (keyword) {
    case 'FROM': {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(remaining);
      if (!from) throw new Error(`line ${line}: FROM IMAGE [AS NAME]`);
      return { ...parsed, image: from[1], name: from[2] ?? null };
    }
    case 'COPY': {
      const { form, command } = commandOf(remaining, line);
      const parts = form === 'exec' ? command : remaining.split(/\s+/);
      if (parts.length < 2) throw new Error(`line ${line}: COPY needs a source and a destination`);
      return { ...parsed, sources: parts.slice(0, -1), destination: parts[parts.length - 1] };
    }
    case 'ENTRYPOINT':
    case 'CMD':
    case 'RUN':
      return { ...parsed, ...commandOf(remaining, line) };
    case 'HEALTHCHECK': {
      const cmd = /^CMD\s+(.*)$/.exec(remaining);
      if (!cmd) throw new Error(`line ${line}: HEALTHCHECK [flags] CMD ...`);
      return { ...parsed, ...commandOf(cmd[1], line) };
    }
    case 'EXPOSE':
      return { ...parsed, ports: remaining.split(/\s+/).map((p) => Number(p.replace(/\/tcp$/, ''))) };
    case 'LABEL': {
      const labels = {};
      const pair = /([\w.-]+)="([^"]*)"\s*/y;
      for (let at = 0; at < remaining.length; at = pair.lastIndex) {
        pair.lastIndex = at;
        const m = pair.exec(remaining);
        if (!m) throw new Error(`line ${line}: LABEL key="value" ...`);
        labels[m[1]] = m[2];
      }
      return { ...parsed, labels };
    }
    default:
      return parsed;
  }
}

/**
 * The file as stages: [{image, name, instructions}], in order. The first
 * instruction must be FROM.
 */
function parseContainerfile(text) {
  const stages = [];
  for (const logical of logicalLines(text)) {
    const parsed = instruction(logical);
    if (parsed.keyword === 'FROM') {
      stages.push({ image: parsed.image, name: parsed.name, instructions: [] });
    } else if (stages.length === 0) {
      throw new Error(`line ${parsed.line}: ${parsed.keyword} before the first FROM`);
    } else {
      stages[stages.length - 1].instructions.push(parsed);
    }
  }
  if (stages.length === 0) throw new Error('no FROM');
  return stages;
}

module.exports = { parseContainerfile };
