'use strict';
// crypto-async 1.0.2's API (the README in the seeds), for its users: cipher,
// hash and hmac with a callback, in the easy forms (6, 3 and 4 arguments)
// and the zero-copy forms (14, 7 and 10), with 1.0.2's checks, messages and
// results. Unlike 5.0.1 (and this package's default entry), 1.0.2 takes any
// cipher Node's OpenSSL knows by name — CBC, ECB, CFB, OFB … with OpenSSL's
// PKCS#7 padding, so a ciphertext may be up to a block longer than its
// plaintext — and so does this entry, through that same OpenSSL. The default
// entry keeps 5.0.1's list: README, "crypto-async 1.0.2".
//
// Every call runs on the libuv pool, as in 1.0.2, with the same buffer
// handling as the default entry (README, "Buffers and asynchronous calls").
const binding = require('./binding.js');
const v5 = require('./crypto-async.js');
const { digestFor } = require('./algorithms.js');

const BAD_CIPHER =
  'bad arguments, expected: (string algorithm, int encrypt, ' +
  'Buffer key, int keyOffset, int keySize, ' +
  'Buffer iv, int ivOffset, int ivSize, ' +
  'Buffer source, int sourceOffset, int sourceSize, ' +
  'Buffer target, int targetOffset, function end)';
const BAD_HASH =
  'bad arguments, expected: (string algorithm, ' +
  'Buffer source, int sourceOffset, int sourceSize, ' +
  'Buffer target, int targetOffset, function end)';
const BAD_HMAC =
  'bad arguments, expected: (string algorithm, ' +
  'Buffer key, int keyOffset, int keySize, ' +
  'Buffer source, int sourceOffset, int sourceSize, ' +
  'Buffer target, int targetOffset, function end)';

// The native codes a 1.0.2 call can end with, in 1.0.2's words (-5 and -6
// are this package's: a buffer detached mid-job, with the code property).
const CIPHER_ERRORS = { '-2': 'cipher init error', '-3': 'cipher update error', '-4': 'cipher init error', '-7': 'cipher final error' };

function fail(message) {
  throw new Error(message);
}

const isBuffer = (v) => ArrayBuffer.isView(v);
const isUint32 = (v) => typeof v === 'number' && v >= 0 && v <= 4294967295 && Math.trunc(v) === v;

function callBack(promise, end, errors) {
  promise.then(
    (code) => {
      if (code >= 0) return process.nextTick(end, undefined, code);
      let error;
      if (code === -5 || code === -6) {
        error = new Error(`${code === -5 ? 'target' : 'source'} was detached, transferred or shrunk before the job ended: the result was not delivered`);
        error.code = code === -5 ? 'ERR_NONCEFORGE_TARGET_DETACHED' : 'ERR_NONCEFORGE_SOURCE_DETACHED';
      } else error = new Error(errors[code] || 'failed');
      process.nextTick(end, error);
    },
    (error) => process.nextTick(end, error)
  );
}

// The room a call on `size` bytes needs (as bulk/evp.rs): encrypting, exactly
// what it writes — 1.0.2 asks for `size + blockSize - 1`, one byte short when
// `size` is a multiple of the block (its padding block then overruns the range
// it checked); decrypting, 1.0.2's `size + blockSize`.
function room(blockSize, encrypt, size) {
  if (blockSize === 1) return size;
  if (encrypt) return size - (size % blockSize) + blockSize;
  return size + blockSize;
}

function cipherBinding(a) {
  if (
    a.length !== 14 || typeof a[0] !== 'string' || !isUint32(a[1]) ||
    !isBuffer(a[2]) || !isUint32(a[3]) || !isUint32(a[4]) ||
    !isBuffer(a[5]) || !isUint32(a[6]) || !isUint32(a[7]) ||
    !isBuffer(a[8]) || !isUint32(a[9]) || !isUint32(a[10]) ||
    !isBuffer(a[11]) || !isUint32(a[12]) || typeof a[13] !== 'function'
  ) fail(BAD_CIPHER);
  const [algorithm, encrypt, key, keyOffset, keySize, iv, ivOffset, ivSize, source, sourceOffset, sourceSize, target, targetOffset, end] = a;
  const info = binding.evpCipherInfo(algorithm);
  if (!info) fail('algorithm not supported');
  const [keyLength, ivLength, blockSize] = info;
  if (encrypt !== 0 && encrypt !== 1) fail('encrypt must be 0 or 1');
  if (keySize !== keyLength) fail('invalid key size');
  if (keyOffset + keySize > key.byteLength) fail('key would overflow');
  if (ivSize !== ivLength) fail('invalid iv size');
  if (ivOffset + ivSize > iv.byteLength) fail('iv would overflow');
  if (sourceOffset + sourceSize > source.byteLength) fail('source would overflow');
  if (targetOffset + room(blockSize, encrypt, sourceSize) > target.byteLength) fail('target too small');
  callBack(
    binding.evpCipherPool(algorithm, encrypt, key, keyOffset, keySize, iv, ivOffset, ivSize, source, sourceOffset, sourceSize, target, targetOffset),
    end,
    CIPHER_ERRORS
  );
}

// hash (7 arguments) and hmac (10) of 1.0.2, over the default entry's digests.
function digestBinding(a, keyed) {
  const n = keyed ? 10 : 7;
  const i = keyed ? 4 : 1;
  if (
    a.length !== n || typeof a[0] !== 'string' ||
    (keyed && (!isBuffer(a[1]) || !isUint32(a[2]) || !isUint32(a[3]))) ||
    !isBuffer(a[i]) || !isUint32(a[i + 1]) || !isUint32(a[i + 2]) ||
    !isBuffer(a[i + 3]) || !isUint32(a[i + 4]) || typeof a[n - 1] !== 'function'
  ) fail(keyed ? BAD_HMAC : BAD_HASH);
  const digest = digestFor(a[0]);
  if (typeof digest === 'string') fail('algorithm not supported');
  if (keyed && a[2] + a[3] > a[1].byteLength) fail('key would overflow');
  if (a[i + 1] + a[i + 2] > a[i].byteLength) fail('source would overflow');
  if (a[i + 4] + digest.length > a[i + 3].byteLength) fail('target too small');
  const end = a[n - 1];
  const done = (error, size) => {
    if (error && error.message === 'initialization failed') {
      end(new Error(keyed ? 'hmac init error' : 'digest init error'));
    } else end(error, size);
  };
  if (keyed) v5.hmac(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], done);
  else v5.hash(a[0], a[1], a[2], a[3], a[4], a[5], done);
}

function cipher(...a) {
  if (a.length === 14) return cipherBinding(a);
  if (a.length !== 6) fail('bad number of arguments');
  const [algorithm, encrypt, key, iv, source, end] = a;
  const target = Buffer.alloc((isBuffer(source) ? source.byteLength : 0) + 64);
  cipherBinding([
    algorithm, encrypt, key, 0, isBuffer(key) ? key.byteLength : 0, iv, 0, isBuffer(iv) ? iv.byteLength : 0,
    source, 0, isBuffer(source) ? source.byteLength : 0, target, 0,
    (error, size) => (error ? end(error) : end(undefined, target.subarray(0, size))),
  ]);
}

function hash(...a) {
  if (a.length === 7) return digestBinding(a, false);
  if (a.length !== 3) fail('bad number of arguments');
  const [algorithm, source, end] = a;
  const target = Buffer.alloc(64);
  digestBinding(
    [algorithm, source, 0, isBuffer(source) ? source.byteLength : 0, target, 0, (error, size) => (error ? end(error) : end(undefined, target.subarray(0, size)))],
    false
  );
}

function hmac(...a) {
  if (a.length === 10) return digestBinding(a, true);
  if (a.length !== 4) fail('bad number of arguments');
  const [algorithm, key, source, end] = a;
  const target = Buffer.alloc(64);
  digestBinding(
    [
      algorithm, key, 0, isBuffer(key) ? key.byteLength : 0, source, 0, isBuffer(source) ? source.byteLength : 0, target, 0,
      (error, size) => (error ? end(error) : end(undefined, target.subarray(0, size))),
    ],
    true
  );
}

module.exports = { cipher, hash, hmac };
