'use strict';

// The fetch extension's frames on the host side (docs/runner.md "fetch"):
// `fetch.request` is checked against what `ready` confirmed — the extension
// itself, a free maxOutstanding slot (fetches share them with tool calls),
// ids that grow up to maxRequests (an aborted queued fetch is never sent, so
// they may skip) — then handed to the FetchDispatcher, whose outcome is
// answered as `fetch.result`; `fetch.abort` aborts one in flight, and a late
// one (already answered) is dropped. A refusal is returned, and the
// execution turns it into a protocol failure.

const { encodeFrame } = require('./frames');

class FetchFrames {
  /** @param {import('./fetch-dispatcher').FetchDispatcher | null} fetcher null without `network` */
  constructor(fetcher) {
    this.fetcher = fetcher;
    /** ids of the fetches in flight, each holding a maxOutstanding slot. */
    this.inFlight = new Set();
    this.lastId = 0;
  }

  /**
   * @param {{id: number}} frame a validated fetch.request
   * @param {{running: boolean, state: string, confirmed: object, toolCalls: number, ending: boolean, write: (text: string) => void}} context
   * @returns {{code: string, message: string} | null}
   */
  request(frame, context) {
    const { maxRequests, maxOutstanding } = context.confirmed;
    if (!context.running || maxRequests === null || this.fetcher === null) {
      return { code: 'UNEXPECTED_FRAME', message: `runner sent fetch.request ${context.running ? 'although ready did not confirm the fetch extension' : `in state ${context.state}`}` };
    }
    if (context.toolCalls + this.inFlight.size >= maxOutstanding) {
      return { code: 'UNEXPECTED_FRAME', message: `runner sent fetch.request while ${maxOutstanding} calls are outstanding` };
    }
    if (frame.id <= this.lastId || frame.id > maxRequests) {
      return { code: 'WRONG_CALL_ID', message: `runner sent fetch.request id ${frame.id}: ids grow from ${this.lastId + 1} up to maxRequests ${maxRequests}` };
    }
    this.lastId = frame.id;
    if (context.ending) {
      answer(context.write, frame.id, { ok: false, error: { code: 'RUN_ENDING', message: 'the run is ending' } });
      return null;
    }
    this.inFlight.add(frame.id);
    this.fetcher.dispatch(frame).then((outcome) => {
      if (this.inFlight.delete(frame.id)) answer(context.write, frame.id, outcome);
    });
    return null;
  }

  /** @returns {{code: string, message: string} | null} */
  abort(frame, context) {
    if (!context.running || context.confirmed.maxRequests === null || frame.id > this.lastId) {
      return { code: 'UNEXPECTED_FRAME', message: `runner sent fetch.abort for fetch ${frame.id}, which it never sent` };
    }
    if (this.inFlight.has(frame.id)) this.fetcher.abort(frame.id);
    return null;
  }

  /** The run stopped waiting: abort every fetch in flight; their late outcomes are dropped. */
  abandon() {
    if (this.inFlight.size === 0) return;
    this.fetcher.abandon();
    this.inFlight.clear();
  }
}

function answer(write, id, outcome) {
  write(outcome.ok
    ? encodeFrame('fetch.result', { id, ok: true, response: outcome.response })
    : encodeFrame('fetch.result', { id, ok: false, error: outcome.error }));
}

module.exports = { FetchFrames };
