'use strict';
// Loads the napi-rs addon built by `npm run build` (crates/nonceforge-node).
const path = require('node:path');

function load() {
  const candidates = [
    path.join(__dirname, 'nonceforge.node'),
    path.join(__dirname, '..', 'target', 'release', 'libnonceforge_node.so'),
  ];
  let first;
  for (const file of candidates) {
    try {
      return require(file);
    } catch (error) {
      if (error.code !== 'MODULE_NOT_FOUND' && !/cannot open shared object/.test(error.message)) throw error;
      first = first || error;
    }
  }
  const error = new Error(
    'nonceforge: the native addon is not built: run `npm run build` in node/ (needs Rust 1.89+)'
  );
  error.cause = first;
  throw error;
}

module.exports = load();
