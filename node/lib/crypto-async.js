'use strict';
// A drop-in for @ronomon/crypto-async 5.0.1: the same functions, arguments,
// checks (in the same order), error messages and results; the work is done by
// nonceforge's Rust core (crates/nonceforge-bulk) instead of OpenSSL.
//
// Differences, all deliberate:
// - Empty buffers work (the original aborts the process on Node 20).
// - A failed AEAD check ('corrupt') leaves the target as it was; the original
//   has written the unauthenticated plaintext there by then.
// - Small jobs run on the calling thread: when a call's work is cheaper than
//   handing it to a pool thread and back (INLINE_MAX bytes of a hash,
//   HMAC or AEAD, 16 KiB by default; four times that of AES-CTR or ChaCha20,
//   which run four times faster), it is done at once and the callback is still
//   called later, from setImmediate — never synchronously. Set INLINE_MAX to 0
//   to send every job to the pool.
// - JavaScript may detach, transfer, shrink or drop any buffer while a pool
//   job uses it without crashing the process (the original reads and writes
//   memory that may be gone): the job keeps the buffers' memory alive (V8's
//   backing store, pinned) and works in place, or, where that is not
//   available, works on copies (README, "Buffers and asynchronous calls").
//   A job whose source or target was detached, transferred or shrunk before
//   it ended calls back with an Error whose code is
//   'ERR_NONCEFORGE_SOURCE_DETACHED' or 'ERR_NONCEFORGE_TARGET_DETACHED'.
// Algorithm names are classified by asking Node's OpenSSL, as the original
// does (algorithms.js): every alias, OID and letter case, legacy names
// ('algorithm disabled'), and digests OpenSSL 3 cannot start without its
// legacy provider (MD4, Whirlpool, MDC2: 'initialization failed' once the
// arguments have been checked).

const binding = require('./binding.js');

const INT_MAX = 2147483647;

const E = {
  E_AAD: 'aad must be a buffer',
  E_AAD_INVALID: 'aadSize invalid',
  E_AAD_OFFSET: 'aadOffset must be an unsigned integer',
  E_AAD_RANGE: 'aadOffset + aadSize > aad.length',
  E_AAD_SIZE: 'aadSize must be an unsigned integer',
  E_ALGORITHM: 'algorithm must be a string',
  E_ALGORITHM_DISABLED: 'algorithm disabled',
  E_ALGORITHM_UNKNOWN: 'algorithm unknown',
  E_ARGUMENTS: 'wrong number of arguments',
  E_BUFFER_LENGTH: 'buffer.length > INT_MAX',
  E_CALLBACK: 'callback must be a function',
  E_CANCELLED: 'asynchronous task was cancelled',
  E_CORRUPT: 'corrupt',
  E_ENCRYPT: 'encrypt must be 0 or 1',
  E_IV: 'iv must be a buffer',
  E_IV_INVALID: 'ivSize invalid',
  E_IV_OFFSET: 'ivOffset must be an unsigned integer',
  E_IV_RANGE: 'ivOffset + ivSize > iv.length',
  E_IV_SIZE: 'ivSize must be an unsigned integer',
  E_KEY: 'key must be a buffer',
  E_KEY_INVALID: 'keySize invalid',
  E_KEY_OFFSET: 'keyOffset must be an unsigned integer',
  E_KEY_RANGE: 'keyOffset + keySize > key.length',
  E_KEY_SIZE: 'keySize must be an unsigned integer',
  E_OOM: 'out of memory',
  E_SOURCE: 'source must be a buffer',
  E_SOURCE_OFFSET: 'sourceOffset must be an unsigned integer',
  E_SOURCE_RANGE: 'sourceOffset + sourceSize > source.length',
  E_SOURCE_SIZE: 'sourceSize must be an unsigned integer',
  E_TAG: 'tag must be a buffer',
  E_TAG_INVALID: 'tagSize invalid',
  E_TAG_OFFSET: 'tagOffset must be an unsigned integer',
  E_TAG_RANGE: 'tagOffset + tagSize > tag.length',
  E_TAG_SIZE: 'tagSize must be an unsigned integer',
  E_TARGET: 'target must be a buffer',
  E_TARGET_OFFSET: 'targetOffset must be an unsigned integer',
  E_TARGET_RANGE: 'targetOffset + targetSize > target.length',
};

// Negative results of the native calls. -5 and -6 are not the original's: a
// pool job's target (or a seal's tag) or its source was detached, transferred
// or shrunk before the job ended (the error also carries a code).
const NATIVE_ERRORS = {
  '-1': E.E_CORRUPT,
  '-2': 'initialization failed',
  '-3': 'update failed',
  '-4': 'invalid arguments',
  '-5': 'target was detached, transferred or shrunk before the job ended: the result was not delivered',
  '-6': 'source was detached, transferred or shrunk before the job ended: the result was not delivered',
};
const DETACHED_CODES = { '-5': 'ERR_NONCEFORGE_TARGET_DETACHED', '-6': 'ERR_NONCEFORGE_SOURCE_DETACHED' };

// Names, classified as the original classifies them (algorithms.js).
const { cipherFor, digestFor } = require('./algorithms.js');
const INIT_FAILED = -2;

const GUARD_PAGE = Buffer.alloc(4096);
const NO_AAD = GUARD_PAGE.subarray(0, 0);
const NO_TAG = GUARD_PAGE.subarray(0, 0);

const settings = { INLINE_MAX: 16384 };

function fail(message) {
  throw new Error(message);
}

function algorithm(value, lookup) {
  if (typeof value !== 'string') fail(E.E_ALGORITHM);
  const entry = lookup(value);
  if (typeof entry === 'string') fail(entry);
  return entry;
}

function isBuffer(value) {
  return ArrayBuffer.isView(value);
}

function argBuf(value, message) {
  if (!isBuffer(value)) fail(message);
  if (value.byteLength > INT_MAX) fail(E.E_BUFFER_LENGTH);
  return value.byteLength;
}

function argInt(value, message) {
  if (typeof value !== 'number' || !(value >= 0) || value > INT_MAX || Math.trunc(value) !== value) {
    fail(message);
  }
  return value;
}

function range(offset, size, length, message) {
  if (size > INT_MAX - offset || offset + size > length) fail(message);
}

function validTag(cipher, size) {
  if (!cipher.aead) return size === 0;
  if (cipher.chacha) return size >= 1 && size <= 16;
  return (size >= 12 && size <= 16) || size === 8 || size === 4;
}

function nativeError(code) {
  const error = new Error(NATIVE_ERRORS[code] || 'failed');
  if (DETACHED_CODES[code]) error.code = DETACHED_CODES[code];
  return error;
}

// A result computed on this thread: returned (or thrown) for a sync call;
// for a call with a callback, delivered later (setImmediate), never now.
function finish(code, end, map) {
  if (end === undefined) {
    if (code < 0) throw nativeError(code);
    return map ? map(code) : code;
  }
  if (code < 0) setImmediate(end, nativeError(code));
  else setImmediate(end, undefined, map ? map(code) : code);
  return undefined;
}

// A pool job's outcome to the callback, which runs outside the promise chain
// so that an exception it throws is an uncaught exception (as with the
// original), not a rejected promise. The job has written the target (and a
// seal's tag) itself when it ended, on this thread, if they were still there.
function pooled(promise, end, map) {
  promise.then(
    (code) => {
      if (code < 0) process.nextTick(end, nativeError(code));
      else process.nextTick(end, undefined, map ? map(code) : code);
    },
    (error) => process.nextTick(end, error && error.name === 'AbortError' ? new Error(E.E_CANCELLED) : error)
  );
}

// binding.cipher of the original: 19 arguments, or 20 with a callback.
function cipherBinding(args, map) {
  if (args.length !== 19 && args.length !== 20) fail(E.E_ARGUMENTS);
  const cipher = algorithm(args[0], cipherFor);
  const encrypt = argInt(args[1], E.E_ENCRYPT);
  if (encrypt !== 0 && encrypt !== 1) fail(E.E_ENCRYPT);
  const keyLength = argBuf(args[2], E.E_KEY);
  const keyOffset = argInt(args[3], E.E_KEY_OFFSET);
  const keySize = argInt(args[4], E.E_KEY_SIZE);
  const ivLength = argBuf(args[5], E.E_IV);
  const ivOffset = argInt(args[6], E.E_IV_OFFSET);
  const ivSize = argInt(args[7], E.E_IV_SIZE);
  const sourceLength = argBuf(args[8], E.E_SOURCE);
  const sourceOffset = argInt(args[9], E.E_SOURCE_OFFSET);
  const sourceSize = argInt(args[10], E.E_SOURCE_SIZE);
  const targetLength = argBuf(args[11], E.E_TARGET);
  const targetOffset = argInt(args[12], E.E_TARGET_OFFSET);
  const aadLength = argBuf(args[13], E.E_AAD);
  const aadOffset = argInt(args[14], E.E_AAD_OFFSET);
  const aadSize = argInt(args[15], E.E_AAD_SIZE);
  const tagLength = argBuf(args[16], E.E_TAG);
  const tagOffset = argInt(args[17], E.E_TAG_OFFSET);
  const tagSize = argInt(args[18], E.E_TAG_SIZE);
  range(keyOffset, keySize, keyLength, E.E_KEY_RANGE);
  range(ivOffset, ivSize, ivLength, E.E_IV_RANGE);
  range(sourceOffset, sourceSize, sourceLength, E.E_SOURCE_RANGE);
  // Every supported cipher is a stream: the target is as long as the source.
  range(targetOffset, sourceSize, targetLength, E.E_TARGET_RANGE);
  range(aadOffset, aadSize, aadLength, E.E_AAD_RANGE);
  range(tagOffset, tagSize, tagLength, E.E_TAG_RANGE);
  if (keySize !== cipher.keyLength) fail(E.E_KEY_INVALID);
  if (ivSize !== cipher.ivLength) fail(E.E_IV_INVALID);
  if (!cipher.aead && aadSize !== 0) fail(E.E_AAD_INVALID);
  if (!validTag(cipher, tagSize)) fail(E.E_TAG_INVALID);
  const async = args.length === 20;
  if (async && typeof args[19] !== 'function') fail(E.E_CALLBACK);
  // Stream ciphers run about four times faster than hashes and AEADs
  // (bench/RESULTS.md, "Node.js"): the same time on the calling thread.
  if (!async || sourceSize <= (cipher.aead ? settings.INLINE_MAX : 4 * settings.INLINE_MAX)) {
    const code = binding.cipherSync(
      cipher.id, encrypt, args[2], keyOffset, keySize, args[5], ivOffset, ivSize,
      args[8], sourceOffset, sourceSize, args[11], targetOffset,
      args[13], aadOffset, aadSize, args[16], tagOffset, tagSize
    );
    return finish(code, async ? args[19] : undefined, map);
  }
  pooled(binding.cipherPool(
    cipher.id, encrypt, args[2], keyOffset, keySize, args[5], ivOffset, ivSize,
    args[8], sourceOffset, sourceSize, args[11], targetOffset,
    args[13], aadOffset, aadSize, args[16], tagOffset, tagSize
  ), args[19], map);
  return undefined;
}

// binding.hash (6 or 7 arguments) and binding.hmac (9 or 10) of the original.
function digestBinding(args, keyed, map) {
  const n = keyed ? 9 : 6;
  if (args.length !== n && args.length !== n + 1) fail(E.E_ARGUMENTS);
  const digest = algorithm(args[0], digestFor);
  let i = 1;
  let key;
  let keyOffset = 0;
  let keySize = 0;
  let keyLength = 0;
  if (keyed) {
    key = args[1];
    keyLength = argBuf(args[1], E.E_KEY);
    keyOffset = argInt(args[2], E.E_KEY_OFFSET);
    keySize = argInt(args[3], E.E_KEY_SIZE);
    i = 4;
  }
  const source = args[i];
  const sourceLength = argBuf(source, E.E_SOURCE);
  const sourceOffset = argInt(args[i + 1], E.E_SOURCE_OFFSET);
  const sourceSize = argInt(args[i + 2], E.E_SOURCE_SIZE);
  const target = args[i + 3];
  const targetLength = argBuf(target, E.E_TARGET);
  const targetOffset = argInt(args[i + 4], E.E_TARGET_OFFSET);
  if (keyed) range(keyOffset, keySize, keyLength, E.E_KEY_RANGE);
  range(sourceOffset, sourceSize, sourceLength, E.E_SOURCE_RANGE);
  range(targetOffset, digest.length, targetLength, E.E_TARGET_RANGE);
  const async = args.length === n + 1;
  if (async && typeof args[n] !== 'function') fail(E.E_CALLBACK);
  if (digest.initFails) return finish(INIT_FAILED, async ? args[n] : undefined, map);
  if (!async || sourceSize <= settings.INLINE_MAX) {
    const code = keyed
      ? binding.hmacSync(digest.id, key, keyOffset, keySize, source, sourceOffset, sourceSize, target, targetOffset)
      : binding.hashSync(digest.id, source, sourceOffset, sourceSize, target, targetOffset);
    return finish(code, async ? args[n] : undefined, map);
  }
  pooled(binding.digestPool(
    digest.id, keyed ? key : undefined, keyOffset, keySize,
    source, sourceOffset, sourceSize, target, targetOffset
  ), args[n], map);
  return undefined;
}

function cipher(...args) {
  if (args.length === 19 || args.length === 20) return cipherBinding(args);
  if (args.length >= 5 && args.length <= 8) {
    const [algorithm, encrypt, key, iv, source] = args;
    if (!Buffer.isBuffer(key)) fail(E.E_KEY);
    if (!Buffer.isBuffer(iv)) fail(E.E_IV);
    if (!Buffer.isBuffer(source)) fail(E.E_SOURCE);
    const target = Buffer.alloc(source.length + module.exports.CIPHER_BLOCK_MAX);
    const aad = args.length >= 7 ? args[5] : NO_AAD;
    const tag = args.length >= 7 ? args[6] : NO_TAG;
    if (!Buffer.isBuffer(aad)) fail(E.E_AAD);
    if (!Buffer.isBuffer(tag)) fail(E.E_TAG);
    const parameters = [
      algorithm, encrypt, key, 0, key.length, iv, 0, iv.length, source, 0, source.length,
      target, 0, aad, 0, aad.length, tag, 0, tag.length,
    ];
    const slice = (size) => target.subarray(0, size);
    if (args.length === 5 || args.length === 7) return cipherBinding(parameters, slice);
    const end = args[args.length - 1];
    if (typeof end !== 'function') fail(E.E_CALLBACK);
    parameters.push(end);
    return cipherBinding(parameters, slice);
  }
  if (args.length === 13) return cipherBinding([...args, NO_AAD, 0, 0, NO_TAG, 0, 0]);
  if (args.length === 14) {
    const end = args[13];
    if (typeof end !== 'function') fail(E.E_CALLBACK);
    return cipherBinding([...args.slice(0, 13), NO_AAD, 0, 0, NO_TAG, 0, 0, end]);
  }
  fail(E.E_ARGUMENTS);
}

function hash(...args) {
  if (args.length === 6 || args.length === 7) return digestBinding(args, false);
  if (args.length < 2 || args.length > 3) fail(E.E_ARGUMENTS);
  const [algorithm, source] = args;
  if (!Buffer.isBuffer(source)) fail(E.E_SOURCE);
  const target = Buffer.alloc(64);
  const parameters = [algorithm, source, 0, source.length, target, 0];
  const slice = (size) => target.subarray(0, size);
  if (args.length === 2) return digestBinding(parameters, false, slice);
  const end = args[2];
  if (typeof end !== 'function') fail(E.E_CALLBACK);
  parameters.push(end);
  return digestBinding(parameters, false, slice);
}

function hmac(...args) {
  if (args.length === 9 || args.length === 10) return digestBinding(args, true);
  if (args.length < 3 || args.length > 4) fail(E.E_ARGUMENTS);
  const [algorithm, key, source] = args;
  if (!Buffer.isBuffer(key)) fail(E.E_KEY);
  if (!Buffer.isBuffer(source)) fail(E.E_SOURCE);
  const target = Buffer.alloc(64);
  const parameters = [algorithm, key, 0, key.length, source, 0, source.length, target, 0];
  const slice = (size) => target.subarray(0, size);
  if (args.length === 3) return digestBinding(parameters, true, slice);
  const end = args[3];
  if (typeof end !== 'function') fail(E.E_CALLBACK);
  parameters.push(end);
  return digestBinding(parameters, true, slice);
}

module.exports = { CIPHER_BLOCK_MAX: 32, ...E, cipher, hash, hmac };

// Not part of the original's API (so not enumerable): whether pool jobs work
// in place (true) or on copies (false), and why not ('' when they do).
Object.defineProperty(module.exports, 'ZERO_COPY', { enumerable: false, get: () => binding.zeroCopy() });
Object.defineProperty(module.exports, 'ZERO_COPY_OFF_BECAUSE', { enumerable: false, get: () => binding.zeroCopyOffBecause });

// Tuning, not part of the original's API: jobs of at most this many bytes run
// on the calling thread (their callback still comes later, from setImmediate).
Object.defineProperty(module.exports, 'INLINE_MAX', {
  enumerable: false,
  get: () => settings.INLINE_MAX,
  set: (value) => {
    if (!Number.isInteger(value) || value < 0) throw new RangeError('INLINE_MAX must be a non-negative integer');
    settings.INLINE_MAX = value;
  },
});
