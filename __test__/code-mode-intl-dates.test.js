'use strict';

// DateTimeFormat against the Node running this test, case by case: every
// locale × option shape × instant × zone of fixtures/intl/date-cases.js is
// formatted in plain Node (here, at test time) and in Code Mode (the real
// sandbox). Each case must give Node's string, or — where Code Mode cannot
// produce it — a RangeError naming what is not supported: never a
// different date.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, runAll, sandboxCensus } = require('./code-mode-support');
const cases = require('./fixtures/intl/date-cases');

const CONCURRENCY = 2;
const MAX_REFUSED_SHARE = 0.2;
// Node built with small-icu would make every comparison meaningless.
const fullIcu = new Intl.DateTimeFormat('de-DE', { timeZone: 'UTC' }).format(0) === '1.1.1970';

/** [same, refused, differing descriptions] over every case. */
function compare(runs) {
  let same = 0;
  const refused = [];
  const differing = [];
  cases.LOCALES.forEach((locale, index) => {
    const node = new Function(cases.program(locale))();
    const run = runs[index];
    assert.equal(run.ok, true, `${locale}: ${JSON.stringify(run.error)}`);
    const names = cases.describe(locale);
    node.forEach((expected, i) => {
      const got = run.result[i];
      if (got === expected) same += 1;
      else if (got.startsWith('!RangeError: ') && !expected.startsWith('!')) refused.push(`${names[i]}: ${got}`);
      else differing.push(`${names[i]}\n  node: ${expected}\n  ours: ${got}`);
    });
  });
  return { same, refused, differing };
}

test('every DateTimeFormat case gives Node\'s string or a RangeError, never a different date', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  const mode = codeMode({ pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: cases.LOCALES.length } });
  t.after(() => mode.close());
  const runs = await runAll(mode, cases.LOCALES.map((locale) => cases.program(locale)), CONCURRENCY);
  const { same, refused, differing } = compare(runs);
  const total = same + refused.length + differing.length;
  t.diagnostic(`Node ${process.version} (ICU ${process.versions.icu}, CLDR ${process.versions.cldr}): ${total} cases, ${same} same, ${refused.length} refused, ${differing.length} different`);
  assert.deepEqual(differing, [], `${differing.length} of ${total} cases differ from Node`);
  for (const line of refused) assert.match(line, /not supported/, line);
  // Refusing is the exception, not the way to pass.
  assert.ok(refused.length <= total * MAX_REFUSED_SHARE, `${refused.length} of ${total} refused:\n${refused.slice(0, 20).join('\n')}`);
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
