// The library's version; test/unit.test.mjs checks it equals package.json's.
export const VERSION = '0.1.0';
