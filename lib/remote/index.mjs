// ESM entry of `cordon/remote`: the same functions as index.js.
import remote from './index.js';

export const { connectRemote, CordonError, DEFAULT_SLACK_MS } = remote;
export default remote;
