'use strict';

// A throwaway TypeScript project that depends on this checkout as `cordon`
// (a node_modules symlink, with @types/node and @types/json-schema), for the
// *-types.test.js suites that compile a consumer with the project's tsc:
// `--strict --module nodenext`, so a .ts file is CommonJS and a .mts is ESM.
// `incremental` (a tsbuildinfo in the project): a second check in the same
// project re-checks only what changed, not the unchanged declarations of
// `@types/node` and cordon (about half of each later check's time; the
// diagnostics are tsc's own either way).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');

/** A project removed by `t.after`; check(source, file) compiles `source` as `file` alone and returns tsc's result. */
function tscConsumer(t) {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-tsc-consumer-'));
  t.after(() => fs.rmSync(project, { recursive: true, force: true }));
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(modules, 'cordon'));
  for (const types of ['node', 'json-schema']) fs.symlinkSync(path.join(ROOT, 'node_modules', '@types', types), path.join(modules, '@types', types));
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, incremental: true, tsBuildInfoFile: 'tsbuildinfo', module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'] },
  }));
  return (source, file) => {
    for (const name of fs.readdirSync(project).filter((n) => /\.m?ts$/.test(n))) fs.rmSync(path.join(project, name));
    fs.writeFileSync(path.join(project, file), source);
    return spawnSync(TSC, ['-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', timeout: 300_000 });
  };
}

module.exports = { tscConsumer };
