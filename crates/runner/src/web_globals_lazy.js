// Announces the web globals without building them (docs/runner.md,
// "Globals"): each name is an accessor whose first read runs `install`
// (web_globals.js, compiled only then), which replaces every announced
// accessor by its value. A world that never uses them never pays for them.
// An assignment before that simply defines the name as the code wants.
(function (install) {
  'use strict';
  let pending = true;
  const announce = (target, name) => {
    Object.defineProperty(target, name, {
      configurable: true,
      enumerable: false,
      get() {
        if (pending) {
          pending = false;
          install();
        }
        const now = Object.getOwnPropertyDescriptor(target, name);
        return now && !now.get ? now.value : undefined;
      },
      set(value) {
        Object.defineProperty(this, name, { value, writable: true, configurable: true, enumerable: false });
      },
    });
  };
  for (const name of ['DOMException', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'crypto',
    'structuredClone', 'URLSearchParams', 'URL', 'Intl']) {
    announce(globalThis, name);
  }
  announce(Number.prototype, 'toLocaleString');
  for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) {
    announce(Date.prototype, name);
  }
})
