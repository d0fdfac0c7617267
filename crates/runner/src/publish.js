// How web_globals.js and intl/intl.js define what they build: writable,
// configurable and non-enumerable, like the built-ins. A name still
// announced lazily (an accessor) gets its value; one the code already
// assigned (a data property) is left as the code set it.
(function () {
  'use strict';
  const define = (target, name, value) => Object.defineProperty(target, name,
    { value, writable: true, configurable: true, enumerable: false });
  const publish = (target, name, value) => {
    const current = Object.getOwnPropertyDescriptor(target, name);
    if (!current || current.get) define(target, name, value);
  };
  return { define, publish };
})()
