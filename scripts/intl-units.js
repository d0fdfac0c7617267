#!/usr/bin/env node
'use strict';

// Writes crates/runner/src/intl/units.txt: CLDR's unit patterns for the
// units ECMA-402 sanctions (and the `X-per-Y` units CLDR names directly,
// `kilometer-per-hour`), per width and plural category, with each unit's
// `perUnitPattern` and the `per` compound pattern, from the
// cldr-units-full package (CLDR JSON, inheritance resolved). ICU4X's
// compiled unit data covers only area, duration, length, mass and volume;
// `Intl.NumberFormat` `style: "unit"` formats from this table as ICU4C's
// LongNameHandler does (intl/units.rs).
//
// Usage: npm install --no-save cldr-units-full@48.2.0 (CLDR 48, Node's),
//        node scripts/intl-units.js [path/to/cldr-units-full]
//
// Format, one locale a line: `locale<TAB>key=pattern<TAB>…`, keys being
// `<width>.<unit>.<plural category>` (width l, s, n), `<width>.<unit>.per`
// and `<width>.per`. An entry equal to the one the locale's truncation
// parent (zh-Hant-TW → zh-Hant → zh → root) gives is left out; every CLDR
// locale has a line, so the runner knows which locales CLDR has.

const fs = require('node:fs');
const path = require('node:path');
const { writeTable } = require('./cldr-table');

const root = process.argv[2] ?? path.join(__dirname, '..', 'node_modules', 'cldr-units-full');
const out = path.join(__dirname, '..', 'crates', 'runner', 'src', 'intl', 'units.txt');
// ECMA-402's sanctioned single units (IsSanctionedSingleUnitIdentifier).
const SANCTIONED = ['acre', 'bit', 'byte', 'celsius', 'centimeter', 'day', 'degree', 'fahrenheit',
  'fluid-ounce', 'foot', 'gallon', 'gigabit', 'gigabyte', 'gram', 'hectare', 'hour', 'inch', 'kilobit',
  'kilobyte', 'kilogram', 'kilometer', 'liter', 'megabit', 'megabyte', 'meter', 'microsecond', 'mile',
  'mile-scandinavian', 'milliliter', 'millimeter', 'millisecond', 'minute', 'month', 'nanosecond', 'ounce',
  'percent', 'petabyte', 'pound', 'second', 'stone', 'terabit', 'terabyte', 'week', 'yard', 'year'];
const WIDTHS = { long: 'l', short: 's', narrow: 'n' };
const COUNT = /^unitPattern-count-(zero|one|two|few|many|other)$/;

/** CLDR key (`length-kilometer`) → unit name (`kilometer`), for the units kept. */
function unitKeys(units) {
  const keys = new Map();
  for (const key of Object.keys(units.long)) {
    const name = key.slice(key.indexOf('-') + 1);
    const per = name.split('-per-');
    const kept = SANCTIONED.includes(name) || (per.length === 2 && per.every((u) => SANCTIONED.includes(u)));
    if (!kept) continue;
    if ([...keys.values()].includes(name)) throw new Error(`two CLDR units named ${name}`);
    keys.set(key, name);
  }
  const missing = SANCTIONED.filter((name) => ![...keys.values()].includes(name));
  if (missing.length) throw new Error(`CLDR has no unit ${missing.join(', ')}`);
  return keys;
}

function entries(locale, keys) {
  const file = path.join(root, 'main', locale, 'units.json');
  const units = JSON.parse(fs.readFileSync(file, 'utf8')).main[locale].units;
  const map = new Map();
  for (const [width, w] of Object.entries(WIDTHS)) {
    const table = units[width] ?? {};
    if (table.per?.compoundUnitPattern) map.set(`${w}.per`, table.per.compoundUnitPattern);
    for (const [key, name] of keys) {
      const unit = table[key];
      if (!unit) continue;
      for (const [field, pattern] of Object.entries(unit)) {
        const count = COUNT.exec(field);
        if (count) map.set(`${w}.${name}.${count[1]}`, pattern);
        else if (field === 'perUnitPattern') map.set(`${w}.${name}.per`, pattern);
      }
    }
  }
  return map;
}

const locales = fs.readdirSync(path.join(root, 'main')).sort();
// CLDR JSON has no root locale: English names every unit.
const keys = unitKeys(JSON.parse(fs.readFileSync(path.join(root, 'main', 'en', 'units.json'), 'utf8')).main.en.units);
const all = new Map(locales.map((locale) => [locale, entries(locale, keys)]));
// CLDR JSON has no root locale either; a synthetic one holds, for each
// `other` and `per` key, the pattern most languages have (CLDR's root
// values, which a language without data of its own inherits), so those
// languages' lines stay short. Any root is correct: an entry is only left
// out when it equals what the runner's lookup finds. Other plural
// categories stay out of root: a language without a `one` pattern (de
// short `km`) must fall back to its own `other`, as ICU4C does, not to
// another language's `one`.
const counts = new Map();
for (const [locale, map] of all) {
  if (locale.includes('-')) continue;
  for (const [key, pattern] of map) {
    if (!/\.(other|per)$/.test(key)) continue;
    const byPattern = counts.get(key) ?? new Map();
    byPattern.set(pattern, (byPattern.get(pattern) ?? 0) + 1);
    counts.set(key, byPattern);
  }
}
all.set('root', new Map([...counts].map(([key, byPattern]) => [key, [...byPattern].sort((a, b) => b[1] - a[1])[0][0]])));
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
writeTable(all, out, `CLDR ${version} (cldr-units-full): scripts/intl-units.js`);
