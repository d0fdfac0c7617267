'use strict';

// `receipts(invocationId)`: what the host kept for a run of ours, asked on a
// fresh connection (docs/remote.md § Receipts kept on the host): hello → welcome →
// receipt-query → receipts, then the host closes. The answer of a host that
// was killed mid-run and restarted is a receipt whose outcome is
// `host-lost`. Bounded by slackMs on the client's clock, like every call.

const { CordonError } = require('../errors');
const { TYPE, encodeControl, FrameDecoder } = require('./frames');
const { openSocket } = require('./transport');

/** The launcher's invocation id alphabet and bound (docs/api.md). */
const INVOCATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * @param {object} target a checked transport target (transport.js)
 * @param {string} invocationId
 * @param {number} slackMs
 * @returns {Promise<object[]>} this tenant's receipts of that id, newest first
 */
function fetchReceipts(target, invocationId, slackMs) {
  if (typeof invocationId !== 'string' || !INVOCATION_ID.test(invocationId)) {
    return Promise.reject(new CordonError('ERR_CORDON_INVALID_OPTIONS', 'invocationId must be 1-128 characters of A-Z a-z 0-9 . _ : -'));
  }
  return new Promise((resolve, reject) => {
    const socket = openSocket(target);
    const decoder = new FrameDecoder();
    let settled = false;
    const settle = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const fail = (code, message) => settle(new CordonError(code, message));
    const timer = setTimeout(() => fail('ERR_CORDON_REMOTE_TIMEOUT', `the host at ${target.label} did not answer a receipt query within ${slackMs} ms`), slackMs);
    socket.on('error', () => {}); // the close below settles
    socket.on('close', () => fail('ERR_CORDON_REMOTE_DISCONNECTED', `the host at ${target.label} closed the connection before answering (refused credentials and a host at its handshake limit both close silently)`));
    socket.on('data', (chunk) => {
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch (error) {
        settle(error);
        return;
      }
      for (const frame of frames) {
        if (frame.type === TYPE.welcome) {
          socket.write(encodeControl(TYPE.receiptQuery, { invocationId }));
        } else if (frame.type === TYPE.receipts && Array.isArray(frame.json.receipts)) {
          settle(null, frame.json.receipts);
        } else {
          fail('ERR_CORDON_REMOTE_PROTOCOL', `the host broke cordon-remote-v1: a ${frame.name} frame answering a receipt query`);
        }
      }
    });
    socket.write(encodeControl(TYPE.hello, { v: 1, ...(target.token !== undefined ? { token: target.token } : {}) }));
  });
}

module.exports = { fetchReceipts };
