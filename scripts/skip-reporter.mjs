// A node:test reporter that writes one JSON line per skipped test (file,
// name, reason), so scripts/test.js can say how many tests skipped and why,
// and fail the run under CI. It reports nothing else: the spec reporter
// beside it prints the run.
export default async function* skipReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file } = event.data;
    if (skip === undefined || skip === false) continue;
    yield `${JSON.stringify({ file, name, reason: skip === true ? '(no reason given)' : String(skip) })}\n`;
  }
}
