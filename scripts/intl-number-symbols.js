#!/usr/bin/env node
'use strict';

// Writes crates/runner/src/intl/number_symbols.txt: each CLDR locale's NaN
// and infinity symbols in its default numbering system, from the
// cldr-numbers-full package (CLDR JSON, inheritance resolved). ICU4X's
// decimal symbols have neither (it prints `NaN` and `∞` everywhere);
// Node prints the locale's (fi `epäluku`, ru `не число`, dz `གྲངས་མེད`),
// so `Intl.NumberFormat` takes them from this table (intl/numbers.rs).
//
// Usage: npm install --no-save cldr-numbers-full@48.2.0 (CLDR 48, Node's),
//        node scripts/intl-number-symbols.js [path/to/cldr-numbers-full]
//
// Format (scripts/cldr-table.js): `locale<TAB>nan=…<TAB>inf=…`, an entry
// left out when the truncation parent gives the same one; `root` holds
// `NaN` and `∞`, so most lines are the locale alone.

const fs = require('node:fs');
const path = require('node:path');
const { writeTable } = require('./cldr-table');

const root = process.argv[2] ?? path.join(__dirname, '..', 'node_modules', 'cldr-numbers-full');
const out = path.join(__dirname, '..', 'crates', 'runner', 'src', 'intl', 'number_symbols.txt');

function entries(locale) {
  const file = path.join(root, 'main', locale, 'numbers.json');
  const numbers = JSON.parse(fs.readFileSync(file, 'utf8')).main[locale].numbers;
  const system = numbers.defaultNumberingSystem;
  const symbols = numbers[`symbols-numberSystem-${system}`];
  if (!symbols?.nan || !symbols?.infinity) throw new Error(`${locale}: no NaN or infinity symbol for ${system}`);
  return new Map([['nan', symbols.nan], ['inf', symbols.infinity]]);
}

const locales = fs.readdirSync(path.join(root, 'main')).sort();
const all = new Map(locales.map((locale) => [locale, entries(locale)]));
all.set('root', new Map([['nan', 'NaN'], ['inf', '∞']]));
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
writeTable(all, out, `CLDR ${version} (cldr-numbers-full): scripts/intl-number-symbols.js`);
