'use strict';

// The commands of a session as its end receipt lists them, in bounded
// memory whatever the session's length (round 9, R9-6: every command was
// kept, its output included, until the end). Kept: the receipt lines of the
// first HEAD and of the last TAIL commands, the count of all, and a running
// digest folding every command's line as it settles, so a receipt still
// commits to the commands it does not list. A command is held only until it
// settles; then only its line (a few hundred bytes) remains, and only while
// it is among the first or the last.

const crypto = require('node:crypto');

/** Commands listed from the start of the session. */
const HEAD = 64;
/** Commands listed from the end of the session. */
const TAIL = 64;
/** The digest before any command: sha256 of the empty string. */
const EMPTY_DIGEST = crypto.createHash('sha256').digest('hex');

class CommandLog {
  constructor({ head = HEAD, tail = TAIL } = {}) {
    this._headSize = head;
    this._tailSize = tail;
    this._head = [];
    this._tail = [];
    this.count = 0;
    this.settledCount = 0;
    this.digest = EMPTY_DIGEST;
  }

  /** Records a started command (a SessionCommand); its line is folded into the digest when it settles. */
  add(command) {
    this.count += 1;
    const slot = { seq: this.count, settledOrder: undefined, command, line: null };
    if (this._head.length < this._headSize) this._head.push(slot);
    else {
      this._tail.push(slot);
      if (this._tail.length > this._tailSize) this._tail.shift();
    }
    const settle = () => {
      // The order the digest folds the lines in, on the line itself: a
      // command started in the background may settle after later ones, and
      // `seq` alone would not let a reader recompute the chain (round 10, R10-3).
      this.settledCount += 1;
      slot.settledOrder = this.settledCount;
      slot.line = this._line(slot);
      slot.command = null;
      this.digest = crypto.createHash('sha256').update(this.digest).update(JSON.stringify(slot.line)).digest('hex');
    };
    command.done.then(settle, settle);
  }

  _line(slot) {
    const order = slot.settledOrder === undefined ? {} : { settledOrder: slot.settledOrder };
    return Object.freeze({ seq: slot.seq, ...order, ...(slot.line ?? slot.command.receiptEntry()) });
  }

  /** What the receipt says: `{commands, commandCount, commandsOmitted, commandsDigest}`. */
  receiptPart() {
    const commands = [...this._head, ...this._tail].map((slot) => slot.line ?? this._line(slot));
    return {
      commands: Object.freeze(commands),
      commandCount: this.count,
      commandsOmitted: this.count - commands.length,
      commandsDigest: this.digest,
    };
  }
}

module.exports = { CommandLog, HEAD, TAIL, EMPTY_DIGEST };
