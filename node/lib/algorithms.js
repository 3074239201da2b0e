'use strict';
// The addon's algorithm tables, and how a name given to the crypto-async
// drop-in is classified. Built once and shared by crypto-async.js and index.js.
//
// @ronomon/crypto-async asks Node's OpenSSL (EVP_get_cipherbyname,
// EVP_get_digestbyname), which knows far more names than crypto.getCiphers()
// lists: aliases, OIDs, any letter case, legacy ciphers. The addon asks the
// same OpenSSL (crates/nonceforge-node/src/openssl.rs), so every name is
// classified exactly as the original classifies it on this Node; answers are
// cached by the exact string. Without an OpenSSL to ask (not a Node build), the
// addon's own tables decide.
const crypto = require('node:crypto');
const binding = require('./binding.js');

const tables = binding.algorithms();
const CIPHERS = new Map();
for (const [name, id, keyLength, ivLength, aead] of tables.ciphers) {
  CIPHERS.set(name, { id, keyLength, ivLength, aead, chacha: name.startsWith('chacha20-') });
}
const DIGESTS = new Map();
for (const [name, id, length] of tables.digests) DIGESTS.set(name, { id, length });

const UNKNOWN = 'algorithm unknown';
const DISABLED = 'algorithm disabled';

// The name as the original's C code sees it: at most 31 UTF-8 bytes (whole
// characters), up to the first NUL, for the fallback tables (lower case).
function cName(value) {
  let s = value;
  if (Buffer.byteLength(s) > 31) {
    s = Buffer.from(s).subarray(0, 31).toString();
    if (s.endsWith('\ufffd')) s = s.slice(0, -1);
  }
  const nul = s.indexOf('\0');
  return (nul === -1 ? s : s.slice(0, nul)).toLowerCase();
}

let knownCiphers;
function fallbackCipher(value) {
  const name = cName(value);
  const cipher = CIPHERS.get(name);
  if (cipher) return cipher;
  knownCiphers = knownCiphers || new Set(crypto.getCiphers().map((n) => n.toLowerCase()));
  return knownCiphers.has(name) ? DISABLED : UNKNOWN;
}

function classifyCipher(value) {
  const info = binding.opensslName(value, false);
  if (info === null) return fallbackCipher(value);
  if (info.status === 0) return UNKNOWN;
  if (info.status === 1) return DISABLED;
  // Every CTR/GCM/ChaCha20 cipher of OpenSSL 3 is in the table (tested).
  return CIPHERS.get(info.short) || DISABLED;
}

// A digest OpenSSL knows but cannot start (its legacy provider is not loaded):
// the original checks the arguments, then fails with 'initialization failed'.
function classifyDigest(value) {
  const info = binding.opensslName(value, true);
  if (info === null) return DIGESTS.get(cName(value)) || UNKNOWN;
  if (info.status === 0) return UNKNOWN;
  const digest = DIGESTS.get(info.short);
  if (info.status === 2 && digest) return digest;
  return { id: -1, length: info.size, initFails: true };
}

const CACHE_MAX = 4096;
function cached(cache, classify) {
  return (value) => {
    let entry = cache.get(value);
    if (entry === undefined) {
      entry = classify(value);
      if (cache.size < CACHE_MAX) cache.set(value, entry);
    }
    return entry;
  };
}

// A cipher entry or digest entry, or the error message the original throws.
const cipherFor = cached(new Map(), classifyCipher);
const digestFor = cached(new Map(), classifyDigest);

module.exports = { CIPHERS, DIGESTS, cipherFor, digestFor };
