'use strict';
// The addon's algorithm tables, as Maps from lower-case OpenSSL names and
// aliases; built once and shared by crypto-async.js and index.js.
const binding = require('./binding.js');

const tables = binding.algorithms();
const CIPHERS = new Map();
for (const [name, id, keyLength, ivLength, aead] of tables.ciphers) {
  CIPHERS.set(name, { id, keyLength, ivLength, aead, chacha: name.startsWith('chacha20-') });
}
const DIGESTS = new Map();
for (const [name, id, length] of tables.digests) DIGESTS.set(name, { id, length });

module.exports = { CIPHERS, DIGESTS };
