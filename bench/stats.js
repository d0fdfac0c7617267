'use strict';

// Samples → rows → the printed table. A row is one contestant of one
// section: its median, p90 and p99 and its ratio to the section's baseline
// (the first contestant). Lower is better for `ms`/`µs` and `KiB`/`MiB` rows,
// higher for `MB/s` and `runs/s` rows; the ratio is always this / baseline.

const quantile = (values, q) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

function summarize(values) {
  return { n: values.length, median: quantile(values, 0.5), p90: quantile(values, 0.9), p99: quantile(values, 0.99) };
}

/**
 * @param {string} section e.g. "1 cold"
 * @param {string} unit
 * @param {Array<[string, number[]]>} contestants baseline first
 */
function sectionRows(section, unit, contestants) {
  const summaries = contestants.map(([name, values]) => ({ name, ...summarize(values) }));
  const base = summaries[0].median;
  return summaries.map((s) => ({ section, unit, ...s, ratio: base > 0 ? s.median / base : NaN, baseline: summaries[0].name }));
}

const fmt = (value) => {
  if (!Number.isFinite(value)) return '-';
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(value >= 1 ? 2 : 3);
};

/** A fixed-width table: section, contestant, unit, n, median, p90, p99, ratio to the section's baseline. */
function renderTable(rows) {
  const header = ['section', 'contestant', 'unit', 'n', 'median', 'p90', 'p99', 'x baseline'];
  const body = rows.map((r) => [r.section, r.name, r.unit, String(r.n), fmt(r.median), fmt(r.p90), fmt(r.p99), fmt(r.ratio)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i].length)));
  const line = (cells) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

module.exports = { quantile, summarize, sectionRows, renderTable, sleep, nowMs };
