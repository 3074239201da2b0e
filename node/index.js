'use strict';
// nonceforge for JavaScript: thin bindings over the Rust core (see README.md).
// One file per job under lib/; this entry point gathers them.

const { NonceGenerator, LeasePool } = require('./lib/nonce.js');
const { ExtIdCodec } = require('./lib/extid.js');
const { SanitizedAead } = require('./lib/sanitizer.js');
const { encrypt, decrypt, hash, hmac, Hash, createHash } = require('./lib/bulk.js');
const uuid = require('./lib/uuid.js');
const cryptoAsync = require('./lib/crypto-async.js');

module.exports = {
  NonceGenerator,
  LeasePool,
  ExtIdCodec,
  SanitizedAead,
  encrypt,
  decrypt,
  hash,
  hmac,
  createHash,
  Hash,
  ...uuid,
  cryptoAsync,
};
