'use strict';
// Round 16n helper: the round-15w helper (package selection, closer-thread census).
module.exports = require('../round15w/h');
