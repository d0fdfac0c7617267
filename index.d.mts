// ESM declarations of `cordon` (index.d.ts for require): index.mjs re-exports
// index.js, so the API is the same; the default export is the whole module.
export * from './index.js';
import * as cordon from './index.js';
export default cordon;
