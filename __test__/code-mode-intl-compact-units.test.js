'use strict';

// NumberFormat `style: "unit"` with `notation: "compact"` against the Node
// running this test, in every locale both support
// (fixtures/intl/all-locales.js) × the units, widths, compact displays and
// values of fixtures/intl/compact-unit-cases.js: each case must give
// Node's string or a RangeError, never a different string — wherever the
// number alone in the same compact notation is Node's (where it is not,
// the locale's compact pattern differs, CLDR 48 against 49, which is not
// the unit's doing; those are counted and kept few).

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus } = require('./code-mode-support');
const { compareGroupsWithNode, CONCURRENCY } = require('./fixtures/intl/compare-cases');
const { supportedInBoth, chunkedCases } = require('./fixtures/intl/all-locales');
const perLocale = require('./fixtures/intl/compact-unit-cases');

const LOCALES_PER_RUN = 20;
const MAX_UNJUDGED_SHARE = 0.08;
const fullIcu = new Intl.NumberFormat('de', { style: 'unit', unit: 'kilometer', unitDisplay: 'long', notation: 'compact', compactDisplay: 'long' }).format(2e6) === '2 Millionen Kilometer';

test('compact units print as Node prints them in every locale, or a RangeError', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  const mode = codeMode({ pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: 100 }, limits: { timeoutMs: 60_000, resultBytes: 4 * 1024 * 1024 } });
  t.after(() => mode.close());
  const locales = await supportedInBoth(mode);
  assert.ok(locales.length > 400, `only ${locales.length} locales supported by both`);
  await compareGroupsWithNode(t, mode, chunkedCases(locales, LOCALES_PER_RUN, perLocale), perLocale, { maxRefused: 0, maxUnjudgedShare: MAX_UNJUDGED_SHARE });
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
