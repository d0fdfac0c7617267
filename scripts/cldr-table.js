'use strict';

// Writes a per-locale CLDR table the runner reads with
// crates/runner/src/intl/cldr_table.rs: one locale a line,
// `locale<TAB>key=value<TAB>…`, an entry left out when the locale's
// truncation parent (zh-Hant-TW → zh-Hant → zh → root) gives the same one.
// Used by scripts/intl-numeric-dates.js and scripts/intl-units.js.

const fs = require('node:fs');

const parentOf = (locale) => (locale === 'root' ? null : locale.includes('-') ? locale.slice(0, locale.lastIndexOf('-')) : 'root');

/**
 * @param {Map<string, Map<string, string>>} all every locale's entries
 * @param {string} out the file to write
 * @param {string} header its first line, after `# `
 */
function writeTable(all, out, header) {
  const inherited = (locale, key) => {
    for (let at = parentOf(locale); at; at = parentOf(at)) {
      if (all.get(at)?.has(key)) return all.get(at).get(key);
    }
    return undefined;
  };
  const lines = [];
  for (const [locale, map] of [...all].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const own = [...map].filter(([key, pattern]) => locale === 'root' || inherited(locale, key) !== pattern);
    for (const [, pattern] of own) {
      if (/[\t\n=]/.test(pattern)) throw new Error(`${locale}: a pattern with a tab, newline or '=': ${pattern}`);
    }
    lines.push([locale, ...own.map(([key, pattern]) => `${key}=${pattern}`)].join('\t'));
  }
  fs.writeFileSync(out, `# ${header}\n${lines.join('\n')}\n`);
  console.log(`${out}: ${lines.length} locales, ${fs.statSync(out).size} bytes`);
}

module.exports = { writeTable };
