'use strict';

// DateTimeFormat against the Node running this test, case by case: every
// locale × option shape × instant × zone of fixtures/intl/date-cases.js is
// formatted in plain Node (here, at test time) and in Code Mode (the real
// sandbox). Each case must give Node's string, or — where Code Mode cannot
// produce it — a RangeError naming what is not supported: never a
// different date.

const test = require('node:test');
const assert = require('node:assert/strict');
const { compareWithNode } = require('./fixtures/intl/compare-cases');
const cases = require('./fixtures/intl/date-cases');

const MAX_REFUSED_SHARE = 0.2;
// Node built with small-icu would make every comparison meaningless.
const fullIcu = new Intl.DateTimeFormat('de-DE', { timeZone: 'UTC' }).format(0) === '1.1.1970';

test('every DateTimeFormat case gives Node\'s string or a RangeError, never a different date', { skip: !fullIcu && !process.env.CI ? 'this Node has no full ICU' : false }, async (t) => {
  assert.ok(fullIcu, 'the reference Node needs full ICU');
  await compareWithNode(t, cases, MAX_REFUSED_SHARE);
});
