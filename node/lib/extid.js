'use strict';
// ExtIdCodec: opaque, UUID-shaped external ids from internal sequential ids.

const binding = require('./binding.js');
const { argType, argValue, native } = require('./errors.js');
const { checkString, checkOptions, checkInteger, checkKey, checkSeq } = require('./check.js');

const MODES = ['feistel-uuid', 'aes128', 'cycle-walk'];
const OPTIONS = ['mode', 'version', 'rounds', 'uuidVersion', 'keyVersionInBand'];

/** A copy of a view's bytes as a Buffer (the addon takes Buffers); the caller clears it. */
function bytes(view) {
  return Buffer.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
}

/** `[versions, keys, current]` of a Buffer key (as key version `version`) or a keyring object. */
function keyring(keys, version) {
  if (ArrayBuffer.isView(keys)) {
    checkKey(keys, 'key');
    return [[version ?? 0], [bytes(keys)], version ?? 0];
  }
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) {
    throw argType('key', 'a Buffer, TypedArray or DataView of at least 32 bytes, or a keyring { current, keys: { [version]: Buffer } }', keys);
  }
  if (version !== undefined) throw argValue('options.version', 'is given by the keyring (its current): leave it out', version);
  for (const k of Object.keys(keys)) {
    if (k !== 'current' && k !== 'keys') throw argValue(`key.${k}`, 'is not a keyring field (current, keys)', keys[k]);
  }
  checkInteger(keys.current, 'key.current', 0, 15);
  checkOptions(keys.keys, 'key.keys');
  const versions = [];
  const buffers = [];
  for (const [v, k] of Object.entries(keys.keys)) {
    if (!/^(0|[1-9][0-9]?)$/.test(v) || Number(v) > 15) throw argValue('key.keys', `has key version '${v}': versions are 0..15`, v);
    checkKey(k, `key.keys[${v}]`);
    versions.push(Number(v));
    buffers.push(bytes(k));
  }
  if (!versions.includes(keys.current)) throw argValue('key.current', `must be a version of key.keys (${versions.join(', ') || 'none'})`, keys.current);
  return [versions, buffers, keys.current];
}

/** The options of decode, decodeSeq and decodeUnverified: only keyVersion, 0..15. */
function checkDecodeOptions(options) {
  checkOptions(options, 'options');
  for (const k of Object.keys(options)) {
    if (k !== 'keyVersion') throw argValue(`options.${k}`, 'is not a decode option (keyVersion)', options[k]);
  }
  if (options.keyVersion !== undefined) checkInteger(options.keyVersion, 'options.keyVersion', 0, 15);
}

class ExtIdCodec {
  /**
   * @param {Buffer|{current: number, keys: Record<number, Buffer>}} key a master key of at
   *   least 32 bytes (key version `options.version`, default 0), or a keyring: every version's
   *   key, `current` the one new ids are made with; ids of every version held decode.
   * @param {string} typeName e.g. 'user'
   * @param {{mode?: 'feistel-uuid'|'aes128'|'cycle-walk', version?: number, rounds?: 2|4,
   *   uuidVersion?: 4|8, keyVersionInBand?: boolean}} [options]
   */
  constructor(key, typeName, options = {}) {
    checkOptions(options, 'options');
    for (const k of Object.keys(options)) {
      if (!OPTIONS.includes(k)) throw argValue(`options.${k}`, `is not an ExtIdCodec option (${OPTIONS.join(', ')})`, options[k]);
    }
    const { mode, version, rounds, uuidVersion, keyVersionInBand } = options;
    if (version !== undefined) checkInteger(version, 'options.version', 0, 15);
    const [versions, keys, current] = keyring(key, version);
    checkString(typeName, 'typeName');
    if (mode !== undefined && !MODES.includes(mode)) {
      if (typeof mode !== 'string') throw argType('options.mode', 'of type string', mode);
      throw argValue('options.mode', "must be one of 'feistel-uuid', 'aes128', 'cycle-walk'", mode);
    }
    if (rounds !== undefined && rounds !== 2 && rounds !== 4) throw argValue('options.rounds', 'must be 2 or 4', rounds);
    if (uuidVersion !== undefined && uuidVersion !== 4 && uuidVersion !== 8) throw argValue('options.uuidVersion', 'must be 4 or 8', uuidVersion);
    if (keyVersionInBand !== undefined && typeof keyVersionInBand !== 'boolean') {
      throw argType('options.keyVersionInBand', 'of type boolean', keyVersionInBand);
    }
    try {
      this._native = native('typeName', () => new binding.ExtIdCoder(versions, keys, current, typeName, mode, rounds, uuidVersion, keyVersionInBand));
    } finally {
      // The copies handed to the addon (which keeps its own, zeroized on drop) may sit in
      // Buffer's shared pool: clear them rather than leave master keys for later allocations.
      for (const k of keys) k.fill(0);
    }
  }

  /**
   * The external id (a UUID string) of internal id `seq` (number or bigint). Without `rand`,
   * the random half is derived from `seq` under the key: the id is stable, looks random, and
   * `decode(id)` refuses made-up ids. With `rand`, it must be fresh and random
   * per row, and stored beside it (never a constant: ids would show the XOR of their seqs).
   */
  encode(seq, rand) {
    checkSeq(seq, 'seq');
    if (rand === undefined) return native('seq', () => this._native.encode(seq));
    checkSeq(rand, 'rand');
    return native('seq', () => this._native.encode(seq, rand));
  }

  /**
   * `{ seq, rand, keyVersion }` of an id made by `encode(seq)`; any other id — made up, of
   * another type or key, or made with a stored `rand` — throws ERR_INVALID_ARG_VALUE (a made-up
   * id passes 1 time in 2^62). The lookup for ids made without a random half; ids made with a
   * stored `rand` are read with `decodeUnverified`. Without `options.keyVersion` the id's key
   * version is used, or, for ids that carry none (aes128, cycle-walk, keyVersionInBand: false),
   * each version held, so ids made before a rotation resolve while their key is held; with it,
   * that version only.
   */
  decode(id, options = {}) {
    checkString(id, 'id');
    checkDecodeOptions(options);
    const d = native('id', () => this._native.decode(id, options.keyVersion));
    if (d === null) throw argValue('id', 'was not made by this codec: its random half is not the one encode(seq) derives', id);
    const [seq, rand, keyVersion] = d;
    return { seq, rand, keyVersion };
  }

  /** `decode(id, options).seq`: the sequence number (a bigint), with decode's refusals. */
  decodeSeq(id, options = {}) {
    return this.decode(id, options).seq;
  }

  /** The random half `encode(seq)` uses (a bigint). */
  derivedRand(seq) {
    checkSeq(seq, 'seq');
    return native('seq', () => this._native.derivedRand(seq));
  }

  /**
   * `{ seq, rand, keyVersion, derived }` of any well-formed id, **unverified**: a made-up id, or
   * one of another key or type, decodes to an unrelated seq. For ids made with a stored `rand`:
   * look the row up by `seq` and compare its stored `rand` before trusting the id. `derived`:
   * the random half is the one `encode(seq)` derives. `options.keyVersion` is the key version of
   * ids that do not carry theirs (aes128, cycle-walk, keyVersionInBand: false).
   */
  decodeUnverified(id, options = {}) {
    checkString(id, 'id');
    checkDecodeOptions(options);
    const [seq, rand, keyVersion, derived] = native('id', () => this._native.decodeUnverified(id, options.keyVersion));
    return { seq, rand, keyVersion, derived };
  }
}

module.exports = { ExtIdCodec };
