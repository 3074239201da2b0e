'use strict';
// Promise crypto on the thread pool (encrypt, decrypt, hash, hmac) and a streaming hash.

const binding = require('./binding.js');
const cryptoAsync = require('./crypto-async.js');
const { DIGESTS } = require('./algorithms.js');
const { argType, argValue } = require('./errors.js');
const { checkBuffer, checkString } = require('./check.js');

function abortError(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  error.code = 'ABORT_ERR';
  return error;
}

// Runs a callback-style drop-in call as a promise that an AbortSignal can reject.
function promised(signal, start) {
  return new Promise((resolve, reject) => {
    if (signal !== undefined) {
      if (typeof signal !== 'object' || signal === null || typeof signal.aborted !== 'boolean') {
        throw argType('options.signal', 'an instance of AbortSignal', signal);
      }
      if (signal.aborted) return reject(abortError(signal));
    }
    let done = false;
    const onAbort = () => {
      if (!done) {
        done = true;
        reject(abortError(signal));
      }
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    start((error, value) => {
      if (signal) signal.removeEventListener('abort', onAbort);
      if (done) return;
      done = true;
      if (error) reject(error);
      else resolve(value);
    });
  });
}

// One direction of a cipher as a promise. AEADs: `aad`, and a `tag` buffer
// (written on encrypt, checked on decrypt). An aborted signal rejects at once;
// work already running finishes in the background (its buffers stay in use
// until then).
function run(direction, algorithm, key, iv, source, options) {
  if (options === null || typeof options !== 'object') throw argType('options', 'of type object', options);
  const { aad, tag, signal } = options;
  return promised(signal, (end) => {
    if (aad !== undefined || tag !== undefined) {
      cryptoAsync.cipher(algorithm, direction, key, iv, source, aad || Buffer.alloc(0), tag || Buffer.alloc(0), end);
    } else {
      cryptoAsync.cipher(algorithm, direction, key, iv, source, end);
    }
  });
}

/** Encrypt `source`; resolves to a new Buffer (an AEAD writes `options.tag`). */
function encrypt(algorithm, key, iv, source, options = {}) {
  return run(1, algorithm, key, iv, source, options);
}

/** Decrypt `source`; resolves to a new Buffer (an AEAD checks `options.tag` first). */
function decrypt(algorithm, key, iv, source, options = {}) {
  return run(0, algorithm, key, iv, source, options);
}

/** Hash `source`; resolves to the digest. */
function hash(algorithm, source, options = {}) {
  return promised(options.signal, (end) => cryptoAsync.hash(algorithm, source, end));
}

/** HMAC of `source` under `key`; resolves to the MAC. */
function hmac(algorithm, key, source, options = {}) {
  return promised(options.signal, (end) => cryptoAsync.hmac(algorithm, key, source, end));
}

/** A streaming hash: `createHash('sha256').update(a).update(b).digest('hex')`. */
class Hash {
  constructor(algorithm) {
    checkString(algorithm, 'algorithm');
    const digest = DIGESTS.get(algorithm.toLowerCase());
    if (digest === undefined) throw argValue('algorithm', 'must name a digest this package implements (sha256, sha512, sha3-256, blake2b512, …)', algorithm);
    this._native = new binding.StreamingHash(digest.id);
  }

  update(data, encoding) {
    if (typeof data === 'string') data = Buffer.from(data, encoding);
    checkBuffer(data, 'data');
    this._native.update(data, 0, data.byteLength);
    return this;
  }

  digest(encoding) {
    const out = this._native.digest();
    return encoding === undefined ? out : out.toString(encoding);
  }
}

function createHash(algorithm) {
  return new Hash(algorithm);
}

module.exports = { encrypt, decrypt, hash, hmac, Hash, createHash };
