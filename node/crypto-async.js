'use strict';
// A drop-in for @ronomon/crypto-async 5.0.1 (same functions, arguments, checks
// and messages) on nonceforge's Rust core: see lib/crypto-async.js.
module.exports = require('./lib/crypto-async.js');
