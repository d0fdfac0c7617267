'use strict';

// formatToParts of NumberFormat and DateTimeFormat over the comparison
// corpus (fixtures/intl/parts-cases.js), in Code Mode and in the Node
// running this test: in Code Mode the parts always join to what `format`
// returns; where `format` gives Node's string, the parts are Node's (types
// and values, but for one V8 inconsistency below); a case Code Mode
// refuses is a RangeError naming it.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, runAll, sandboxCensus } = require('./code-mode-support');
const cases = require('./fixtures/intl/parts-cases');

const CONCURRENCY = 2;
// V8 prints CLDR's narrow no-break space in a date (before AM/PM) as a
// space in format() but keeps it in formatToParts(); Code Mode's parts join to its
// format() string, so they are compared with that one difference undone.
const asFormatted = (parts) => parts.map(({ type, value }) => ({ type, value: value.replace(/\u202f/g, ' ') }));
const fullIcu = new Intl.DateTimeFormat('de-DE', { timeZone: 'UTC' }).format(0) === '1.1.1970';

test('formatToParts joins to format and gives Node\'s parts wherever format gives Node\'s string', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  const mode = codeMode({ pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: cases.LOCALES.length } });
  t.after(() => mode.close());
  const runs = await runAll(mode, cases.LOCALES.map((locale) => cases.program(locale)), CONCURRENCY);
  let same = 0;
  let refused = 0;
  let otherFormat = 0;
  const unjoined = [];
  const differing = [];
  cases.LOCALES.forEach((locale, index) => {
    const node = new Function(cases.program(locale))();
    const run = runs[index];
    assert.equal(run.ok, true, `${locale}: ${JSON.stringify(run.error)}`);
    const names = cases.describe(locale);
    node.forEach((expected, i) => {
      const got = run.result[i];
      if (typeof got === 'string') {
        assert.match(got, /^!RangeError: .*not supported/, `${names[i]}: ${got}`);
        refused += 1;
        return;
      }
      const [text, parts] = got;
      if (parts.map((p) => p.value).join('') !== text) unjoined.push(`${names[i]}: ${JSON.stringify(got)}`);
      if (typeof expected === 'string' || expected[0] !== text) otherFormat += 1;
      else if (JSON.stringify(parts) === JSON.stringify(names[i].includes(' DateTimeFormat ') ? asFormatted(expected[1]) : expected[1])) same += 1;
      else differing.push(`${names[i]}\n  node: ${JSON.stringify(expected[1])}\n  ours: ${JSON.stringify(parts)}`);
    });
  });
  t.diagnostic(`Node ${process.version}: ${same} parts the same, ${refused} refused, ${otherFormat} where format differs (compared by the corpus tests), ${differing.length} different parts`);
  assert.deepEqual(unjoined, []);
  assert.deepEqual(differing.slice(0, 30), [], `${differing.length} cases with parts other than Node's`);
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
