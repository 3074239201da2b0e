'use strict';
// crypto-async 1.0.2's API (any OpenSSL cipher by name, CBC included, with
// OpenSSL's padding) on nonceforge: see lib/crypto-async-1.js.
module.exports = require('./lib/crypto-async-1.js');
