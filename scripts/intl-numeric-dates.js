#!/usr/bin/env node
'use strict';

// Writes crates/runner/src/intl/numeric_dates.txt: CLDR's availableFormats
// patterns for numeric-month dates (skeletons of y, M/MM, E, d: `yMd`,
// `yMMdd`, `MEd` …) and the date-time glue of every locale, from the
// cldr-dates-full package (CLDR JSON, inheritance resolved). ICU4X's
// compiled data has no skeleton table, and its short/medium date patterns
// are not what ICU4C's pattern generator picks for `{year, month, day:
// "numeric"}` (de: 05.03.2024 where Node prints 5.3.2024); the runner picks
// from this table as ICU4C does (intl/numeric_dates.rs).
//
// Usage: npm install --no-save cldr-dates-full@48.2.0 (CLDR 48, Node 22's),
//        node scripts/intl-numeric-dates.js [path/to/cldr-dates-full]
//
// Format, one locale a line: `locale<TAB>key=pattern<TAB>…`, keys being
// skeletons and `glue:short|medium|long|full`. An entry equal to the one
// the locale's truncation parent (zh-Hant-TW → zh-Hant → zh → root) gives
// is left out; every CLDR locale has a line, so the runner knows which
// locales CLDR has.

const fs = require('node:fs');
const path = require('node:path');
const { writeTable } = require('./cldr-table');

const root = process.argv[2] ?? path.join(__dirname, '..', 'node_modules', 'cldr-dates-full');
const out = path.join(__dirname, '..', 'crates', 'runner', 'src', 'intl', 'numeric_dates.txt');
const NUMERIC = /^(y{1,2})?(M{1,2})?(E)?(d{1,2})?$/;

function entries(locale) {
  const file = path.join(root, 'main', locale, 'ca-gregorian.json');
  const gregorian = JSON.parse(fs.readFileSync(file, 'utf8')).main[locale].dates.calendars.gregorian;
  const formats = gregorian.dateTimeFormats;
  const map = new Map();
  for (const [skeleton, pattern] of Object.entries(formats.availableFormats)) {
    if (skeleton && NUMERIC.test(skeleton)) map.set(skeleton, pattern);
  }
  for (const length of ['short', 'medium', 'long', 'full']) map.set(`glue:${length}`, formats[length]);
  return map;
}

const locales = fs.readdirSync(path.join(root, 'main')).sort();
const all = new Map(locales.map((locale) => [locale, entries(locale)]));
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
writeTable(all, out, `CLDR ${version} (cldr-dates-full): scripts/intl-numeric-dates.js`);
