'use strict';

// NaN and ±Infinity against the Node running this test, in every locale
// both support (fixtures/intl/all-locales.js) × every NumberFormat style of
// fixtures/intl/nan-cases.js: format, toLocaleString and formatToParts
// must give Node's string (the locale's NaN and infinity symbols in the
// style's pattern) or a RangeError naming what is not supported, never a
// different string — wherever the same options give Node's string for a
// finite probe in that locale (where they do not, the difference is the
// locale's number pattern, not NaN's; those groups are counted and kept
// few).

const test = require('node:test');
const assert = require('node:assert/strict');
const { codeMode, sandboxCensus } = require('./code-mode-support');
const { compareGroupsWithNode, CONCURRENCY } = require('./fixtures/intl/compare-cases');
const { supportedInBoth, chunkedCases } = require('./fixtures/intl/all-locales');
const perLocale = require('./fixtures/intl/nan-cases');

const LOCALES_PER_RUN = 40;
// Refused: the currency's name in cs, sk, ro, sl (no amount with two
// fraction digits is of the plural form Node uses for NaN).
const MAX_REFUSED = 200;
// Groups whose finite probe already differs (locales outside the 49 the
// other comparisons cover: CLDR 48 against 49 strings, arab-digit percent
// signs).
const MAX_UNJUDGED_SHARE = 0.1;
const fullIcu = new Intl.NumberFormat('fi', {}).format(NaN) === 'epäluku';

test('NaN and ±Infinity print as Node prints them in every locale and style, or a RangeError', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  const mode = codeMode({ pool: { size: 2 }, admission: { maxConcurrent: CONCURRENCY, maxQueued: 100 }, limits: { timeoutMs: 60_000, resultBytes: 4 * 1024 * 1024 } });
  t.after(() => mode.close());
  const locales = await supportedInBoth(mode);
  assert.ok(locales.length > 400, `only ${locales.length} locales supported by both`);
  t.diagnostic(`${locales.length} locales`);
  await compareGroupsWithNode(t, mode, chunkedCases(locales, LOCALES_PER_RUN, perLocale), perLocale, { maxRefused: MAX_REFUSED, maxUnjudgedShare: MAX_UNJUDGED_SHARE });
  await mode.close();
  assert.deepEqual(sandboxCensus(), { bwrap: 0, runners: 0 });
});
