'use strict';
// ExtIdCodec: opaque, UUID-shaped external ids from internal sequential ids.

const binding = require('./binding.js');
const { argType, argValue, native } = require('./errors.js');
const { checkString, checkOptions, checkInteger, checkKey, checkSeq } = require('./check.js');

class ExtIdCodec {
  /**
   * @param {Buffer} key at least 32 bytes
   * @param {string} typeName e.g. 'user'
   * @param {{mode?: 'feistel-uuid'|'aes128'|'cycle-walk', version?: number}} [options] version: the key version, 0..15 (default 0)
   */
  constructor(key, typeName, options = {}) {
    checkKey(key, 'key');
    checkString(typeName, 'typeName');
    checkOptions(options, 'options');
    const { mode, version } = options;
    if (mode !== undefined && !['feistel-uuid', 'aes128', 'cycle-walk'].includes(mode)) {
      if (typeof mode !== 'string') throw argType('options.mode', 'of type string', mode);
      throw argValue('options.mode', "must be one of 'feistel-uuid', 'aes128', 'cycle-walk'", mode);
    }
    if (version !== undefined) checkInteger(version, 'options.version', 0, 15);
    this._native = native('typeName', () => new binding.ExtIdCoder(key, typeName, mode, version));
  }

  /** The external id (a UUID string) of internal id `seq` (number or bigint). */
  encode(seq, rand = 0) {
    checkSeq(seq, 'seq');
    checkSeq(rand, 'rand');
    return native('seq', () => this._native.encode(seq, rand));
  }

  /**
   * `{ seq, rand, keyVersion }` of an external id. Any well-formed id decodes:
   * check seq against the ids you issued, or rand against the stored one.
   */
  decode(id) {
    checkString(id, 'id');
    const [seq, rand, keyVersion] = native('id', () => this._native.decode(id));
    return { seq, rand, keyVersion };
  }
}

module.exports = { ExtIdCodec };
