// ESM entry of `cordon/ai`: the same function as ai.js.
import adapter from './ai.js';

export const { codeModeTool, sessionTools } = adapter;
export default adapter;
