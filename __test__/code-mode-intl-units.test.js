'use strict';

// NumberFormat `style: "unit"` against the Node running this test, case by
// case: every locale × unit × unitDisplay × value of
// fixtures/intl/unit-cases.js is formatted in plain Node (here, at test
// time) and in Code Mode (the real sandbox). Each case must give Node's
// string, or — where Code Mode cannot produce it — a RangeError naming
// what is not supported: never a different string.

const test = require('node:test');
const assert = require('node:assert/strict');
const { compareWithNode } = require('./fixtures/intl/compare-cases');
const cases = require('./fixtures/intl/unit-cases');

// None refused today (`percent-per-…` short and narrow, once refused, are
// the bare percent Node prints); a little room for a Node whose CLDR differs.
const MAX_REFUSED_SHARE = 0.01;
const fullIcu = new Intl.NumberFormat('de-DE', { style: 'unit', unit: 'kilometer', unitDisplay: 'long' }).format(2) === '2 Kilometer';

test('every unit case gives Node\'s string or a RangeError, never a different string', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  await compareWithNode(t, cases, MAX_REFUSED_SHARE);
});
