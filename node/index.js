'use strict';
// nonceforge for JavaScript: thin bindings over the Rust core (see README.md).

const binding = require('./binding.js');
const cryptoAsync = require('./crypto-async.js');
const { DIGESTS } = require('./algorithms.js');

const KINDS = ['counter', 'sortable', 'encrypted'];
const SIZES = [64, 96, 128];

// The number the addon takes for a kind and size: kind * 3 + size (see
// kind_bits in crates/nonceforge-node/src/lib.rs).
function nonceCode(kind, bits) {
  const k = KINDS.indexOf(kind);
  if (k === -1) throw new TypeError(`kind must be 'counter', 'sortable' or 'encrypted', got ${String(kind)}`);
  const size = SIZES.indexOf(bits);
  if (size === -1) throw new RangeError(`bits must be 64, 96 or 128, got ${String(bits)}`);
  return k * 3 + size;
}

function checkBuffer(value, name) {
  if (!ArrayBuffer.isView(value)) throw new TypeError(`${name} must be a Buffer or TypedArray`);
}

// Nonces are taken from the core a batch at a time (one atomic reservation per
// batch) and handed out one by one: a napi call per nonce would cost more
// than the nonce. A batch is at most BATCH nonces.
//
// Sortable nonces carry the millisecond they were made in, so a batch of them
// is handed out only while Date.now() still reads the millisecond of its first
// nonce; a new batch starts when it does not. Batches start at one nonce and
// double while a batch runs out within its millisecond, so a caller taking one
// a millisecond pays for one, and one taking thousands pays for a napi call per
// BATCH. Where the wall clock and the generator's (monotonic) clock disagree,
// every call makes a fresh batch of one: slower, never staler.
const BATCH = 256;
const DEFAULT_EPOCH_UNIX_MS = 1735689600000; // 2025-01-01T00:00:00Z, the core's default

// The next nonce of a pool into `out`. A loop, not Buffer#copy: for 8–16 bytes
// the copy's call into C++ costs more than the bytes (36 ns against a 42 ns
// allocation and loop together, measured on Node 20 here).
function take(pool, out, size) {
  const b = pool.buffer;
  const at = pool.at;
  for (let i = 0; i < size; i++) out[i] = b[at + i];
  pool.at = at + size;
}

class NonceGenerator {
  /**
   * @param {{machineId: number, key?: Buffer, epochUnixMs?: number}} options
   */
  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object: { machineId, key?, epochUnixMs? }');
    const { machineId, key, epochUnixMs } = options;
    if (!Number.isInteger(machineId) || machineId < 0 || machineId > 511) {
      throw new RangeError(`machineId must be an integer in 0..511, got ${String(machineId)}`);
    }
    if (key !== undefined) checkBuffer(key, 'key');
    if (epochUnixMs !== undefined && (!Number.isSafeInteger(epochUnixMs) || epochUnixMs < 0)) {
      throw new RangeError('epochUnixMs must be a non-negative integer');
    }
    this._native = new binding.Generator(machineId, key, epochUnixMs);
    this._handle = this._native.handle();
    this._epoch = epochUnixMs === undefined ? DEFAULT_EPOCH_UNIX_MS : epochUnixMs;
    this._pools = new Map();
  }

  get machineId() {
    return this._native.machineId;
  }

  /** One nonce of `kind` ('counter' | 'sortable' | 'encrypted') and `bits` (64 | 96 | 128), as a Buffer. */
  next(kind = 'counter', bits = 96) {
    const code = nonceCode(kind, bits);
    const size = bits / 8;
    if (kind === 'sortable') return this._sortable(code, size);
    let pool = this._pools.get(code);
    if (pool === undefined || pool.at === pool.buffer.length) {
      pool = { buffer: this._native.fill(code, BATCH), at: 0 };
      this._pools.set(code, pool);
    }
    const out = Buffer.allocUnsafe(size);
    take(pool, out, size);
    return out;
  }

  _sortable(code, size) {
    const now = Date.now();
    let pool = this._pools.get(code);
    const out = Buffer.allocUnsafe(size);
    if (pool !== undefined && pool.at < pool.buffer.length && pool.ms === now) {
      take(pool, out, size);
      return out;
    }
    let n = 1;
    if (pool !== undefined) {
      const used = pool.at / size;
      // Ran out within its millisecond: double; outlived it: what was used.
      n = pool.at === pool.buffer.length && pool.ms === now ? Math.min(2 * used, BATCH) : Math.max(1, used);
    }
    if (n === 1) {
      binding.nextNonceInto(this._handle, code, out);
      this._pools.set(code, { buffer: out, at: size, ms: now });
      return out;
    }
    const buffer = this._native.fill(code, n);
    // The millisecond of its first nonce: the top 42 bits.
    const ms = Math.floor(buffer.readUIntBE(0, 6) / 64) + this._epoch;
    buffer.copy(out, 0, 0, size);
    this._pools.set(code, { buffer, at: size, ms });
    return out;
  }

  counter(bits = 96) {
    return this.next('counter', bits);
  }

  sortable(bits = 128) {
    return this.next('sortable', bits);
  }

  encrypted(bits = 128) {
    return this.next('encrypted', bits);
  }

  /** One nonce as an unsigned big-endian BigInt. */
  bigint(kind = 'counter', bits = 64) {
    const b = this.next(kind, bits);
    return bits === 64 ? b.readBigUInt64BE(0) : BigInt('0x' + b.toString('hex'));
  }

  /** `count` nonces back to back in one new Buffer (one reservation). */
  many(kind, bits, count) {
    const code = nonceCode(kind, bits);
    this._pools.delete(code); // sortable: what follows must sort after what came before
    if (!Number.isInteger(count) || count < 0 || count > 2 ** 28) throw new RangeError('count must be an integer in 0..2^28');
    return this._native.fill(code, count);
  }

  /** Fill `out` (a whole number of nonces) in place; returns it. */
  fillInto(kind, bits, out) {
    const code = nonceCode(kind, bits);
    this._pools.delete(code); // sortable: what follows must sort after what came before
    checkBuffer(out, 'out');
    this._native.fillInto(code, out);
    return out;
  }

  /** The counter form of an encrypted nonce. */
  decrypt(nonce) {
    checkBuffer(nonce, 'nonce');
    return this._native.decrypt(nonce);
  }

  /** `{ unixMs, machineId, counter }` of a counter or sortable nonce. */
  inspect(nonce) {
    checkBuffer(nonce, 'nonce');
    const [unixMs, machineId, counter] = this._native.inspect(nonce);
    return { unixMs, machineId, counter };
  }

  /** Stop issuing (every call throws) until enable(); drops nonces already reserved. */
  disable() {
    this._native.disable();
    this._pools.clear();
  }

  enable() {
    this._native.enable();
  }

  get enabled() {
    return this._native.enabled;
  }
}

class ExtIdCodec {
  /**
   * @param {Buffer} key at least 32 bytes
   * @param {string} typeName e.g. 'user'
   * @param {{mode?: 'aes'|'feistel', version?: number}} [options]
   */
  constructor(key, typeName, options = {}) {
    checkBuffer(key, 'key');
    if (typeof typeName !== 'string') throw new TypeError('typeName must be a string');
    this._native = new binding.ExtIdCoder(key, typeName, options.mode, options.version);
  }

  /** The external id (a UUID string) of internal id `seq` (number or bigint). */
  encode(seq, rand = 0) {
    return this._native.encode(seq, rand);
  }

  /**
   * `{ seq, rand, keyVersion }` of an external id. Any well-formed id decodes:
   * check seq against the ids you issued, or rand against the stored one.
   */
  decode(id) {
    if (typeof id !== 'string') throw new TypeError('id must be a string');
    const [seq, rand, keyVersion] = this._native.decode(id);
    return { seq, rand, keyVersion };
  }
}

class SanitizedAead {
  /**
   * An AEAD that refuses to seal twice under one (key, nonce): 'aes-128-gcm',
   * 'aes-256-gcm' or 'chacha20-poly1305'. Output is byte-identical to node:crypto's.
   */
  constructor(algorithm, key, options = {}) {
    if (typeof algorithm !== 'string') throw new TypeError('algorithm must be a string');
    checkBuffer(key, 'key');
    if (options.window !== undefined && (!Number.isInteger(options.window) || options.window < 1)) {
      throw new RangeError('window must be a positive integer');
    }
    this._native = new binding.SanitizedAead(algorithm, key, options.window);
  }

  /** ciphertext ‖ 16-byte tag. Throws an Error with code 'ERR_NONCE_REUSE' on a repeated nonce. */
  seal(nonce, plaintext, aad) {
    try {
      return this._native.seal(nonce, plaintext, aad);
    } catch (error) {
      if (/nonce reuse/.test(error.message)) error.code = 'ERR_NONCE_REUSE';
      throw error;
    }
  }

  /** The plaintext of ciphertext ‖ tag; throws when it does not verify. */
  open(nonce, sealed, aad) {
    return this._native.open(nonce, sealed, aad);
  }
}

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
        throw new TypeError('signal must be an AbortSignal');
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

/**
 * Encrypt (encrypt = true) or decrypt `source`; resolves to a new Buffer.
 * AEADs: pass `aad` and a `tag` buffer (written on encrypt, checked on decrypt).
 * An aborted signal rejects at once; work already running finishes in the
 * background (its buffers stay in use until then).
 */
function cipher(algorithm, encrypt, key, iv, source, options = {}) {
  const { aad, tag, signal } = options;
  return promised(signal, (end) => {
    if (aad !== undefined || tag !== undefined) {
      cryptoAsync.cipher(algorithm, encrypt ? 1 : 0, key, iv, source, aad || Buffer.alloc(0), tag || Buffer.alloc(0), end);
    } else {
      cryptoAsync.cipher(algorithm, encrypt ? 1 : 0, key, iv, source, end);
    }
  });
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
    if (typeof algorithm !== 'string') throw new TypeError('algorithm must be a string');
    const digest = DIGESTS.get(algorithm.toLowerCase());
    if (digest === undefined) throw new Error(`algorithm unknown: ${algorithm}`);
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

function fromCompact(text) {
  if (typeof text !== 'string') throw new TypeError('text must be a string');
  return binding.fromCompact(text);
}

function timestampOf(id) {
  checkBuffer(id, 'id');
  return binding.uuidUnixMs(id);
}

module.exports = {
  NonceGenerator,
  ExtIdCodec,
  SanitizedAead,
  cipher,
  hash,
  hmac,
  createHash,
  Hash,
  uuidv7: binding.uuidv7,
  tuid6: binding.tuid6,
  uuidv7Buffer: binding.uuidv7Bytes,
  tuid6Buffer: binding.tuid6Bytes,
  uuidv7Compact: binding.uuidv7Compact,
  tuid6Compact: binding.tuid6Compact,
  fromCompact,
  timestampOf,
  cryptoAsync,
};
