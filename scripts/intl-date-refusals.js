#!/usr/bin/env node
'use strict';

// Writes crates/runner/src/intl/date_refusals.txt: the DateTimeFormat
// option shapes that Code Mode prints differently from this Node, per
// locale, from the comparison of __test__/fixtures/intl/date-cases.js
// (every locale × shape × instant × zone, in Code Mode and here). The
// runner refuses those shapes in those locales, and in every locale the
// comparison does not cover (intl/date_refusals.rs). Run it with the runner
// built WITHOUT refusals (an empty table), under every Node the suite runs
// on (CI: 20, 22, 24), the later ones with --merge (the table is the union:
// their CLDR data differ in places), then rebuild:
//   printf 'compared\tnone\n' > crates/runner/src/intl/date_refusals.txt
//   npm run build:runner && node scripts/intl-date-refusals.js
//   node22 scripts/intl-date-refusals.js --merge; node24 … --merge
//   npm run build:runner

const fs = require('node:fs');
const path = require('node:path');
const cordon = require('..');
const cases = require('../__test__/fixtures/intl/date-cases');

const out = path.join(__dirname, '..', 'crates', 'runner', 'src', 'intl', 'date_refusals.txt');

(async () => {
  const mode = cordon.createCodeMode({ tools: [], pool: { size: 2 }, admission: { maxConcurrent: 2, maxQueued: cases.LOCALES.length } });
  const refused = new Map();
  const sources = [];
  if (process.argv.includes('--merge')) {
    for (const line of fs.readFileSync(out, 'utf8').split('\n')) {
      if (line.startsWith('# Node ')) sources.push(line.slice(2));
      const [shape, locales] = line.split('\t');
      if (!line.startsWith('#') && shape !== 'compared' && locales) refused.set(shape, new Set(locales.split(' ')));
    }
  }
  let total = 0;
  let differing = 0;
  try {
    await Promise.all(cases.LOCALES.map(async (locale) => {
      const node = new Function(cases.program(locale))();
      const run = await mode.run(cases.program(locale));
      if (!run.ok) throw new Error(`${locale}: ${JSON.stringify(run.error)}`);
      const shaped = await mode.run(cases.shapeProgram(locale));
      if (!shaped.ok) throw new Error(`${locale}: ${JSON.stringify(shaped.error)}`);
      const shapes = shaped.result;
      node.forEach((expected, i) => {
        total += 1;
        if (run.result[i] === expected || expected.startsWith('!')) return;
        differing += 1;
        if (!refused.has(shapes[i])) refused.set(shapes[i], new Set());
        refused.get(shapes[i]).add(locale);
      });
    }));
  } finally {
    await mode.close();
  }
  const lines = [...refused].sort(([a], [b]) => (a < b ? -1 : 1)).map(([shape, locales]) => `${shape}\t${[...locales].sort().join(' ')}`);
  sources.push(`Node ${process.version} (ICU ${process.versions.icu}, CLDR ${process.versions.cldr}): ${differing} of ${total} cases differed`);
  fs.writeFileSync(out, `${sources.map((source) => `# ${source}\n`).join('')}# scripts/intl-date-refusals.js: the shapes that differed under any of these\n`
    + `compared\t${cases.LOCALES.join(' ')}\n${lines.join('\n')}\n`);
  console.log(`${out}: ${lines.length} shapes refused somewhere; ${differing} of ${total} cases differed`);
})().catch((error) => { console.error(error); process.exitCode = 1; });
