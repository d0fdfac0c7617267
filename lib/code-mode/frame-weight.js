'use strict';

// How much a parsed frame costs to materialize on the provider's main thread.
// JSON.parse's cost is not its byte count: 1 MiB of `{}` is 350 000 objects,
// and each distinct object key is a string V8 must internalize (65 536
// distinct keys parse in ~50–100 ms on a loaded 2-core machine, 32 768 empty
// objects in ~6 ms). The bounds leave room for what follows on the same
// thread: the handler, the strict-JSON check of its result, and the garbage
// collector's pauses for all of it. At the default 512 KiB result limit,
// ordinary records (10–20 bytes a value) stay well under them. A frame larger than MAIN_THREAD_FRAME_BYTES is therefore
// parsed first in a validator thread (frame-decoder.js), which counts both,
// and the main thread parses it only when both are under the bounds below —
// a bound on the one JSON.parse it must do itself.

/** JSON values (containers, scalars) in one frame parsed on the main thread. */
const MAX_FRAME_VALUES = 65_536;
/** Distinct object keys in one frame parsed on the main thread. */
const MAX_FRAME_DISTINCT_KEYS = 16_384;

/** @returns {{values: number, distinctKeys: number}} counts for a parsed JSON value (iterative walk). */
function frameWeight(value) {
  let values = 0;
  const keys = new Set();
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    values += 1;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else {
      for (const key of Object.keys(node)) {
        keys.add(key);
        stack.push(node[key]);
      }
    }
  }
  return { values, distinctKeys: keys.size };
}

/** Why a frame of this weight is not parsed on the main thread, or null. */
function overweight({ values, distinctKeys }) {
  if (values > MAX_FRAME_VALUES) return `${values} JSON values, the host accepts at most ${MAX_FRAME_VALUES} per frame`;
  if (distinctKeys > MAX_FRAME_DISTINCT_KEYS) return `${distinctKeys} distinct object keys, the host accepts at most ${MAX_FRAME_DISTINCT_KEYS} per frame`;
  return null;
}

module.exports = { frameWeight, overweight, MAX_FRAME_VALUES, MAX_FRAME_DISTINCT_KEYS };
