'use strict';
// SanitizedAead: an AEAD that refuses to seal twice under one (key, nonce).

const binding = require('./binding.js');
const { argValue, native } = require('./errors.js');
const { checkBuffer, checkString, checkOptions, checkInteger } = require('./check.js');

const AEADS = ['aes-128-gcm', 'aes-256-gcm', 'chacha20-poly1305'];

function checkSealArgs(nonce, data, aad, name) {
  checkBuffer(nonce, 'nonce');
  checkBuffer(data, name);
  if (aad !== undefined) checkBuffer(aad, 'aad');
}

class SanitizedAead {
  /**
   * An AEAD that refuses to seal twice under one (key, nonce): 'aes-128-gcm',
   * 'aes-256-gcm' or 'chacha20-poly1305'. Output is byte-identical to node:crypto's.
   */
  constructor(algorithm, key, options = {}) {
    checkString(algorithm, 'algorithm');
    if (!AEADS.includes(algorithm)) throw argValue('algorithm', `must be one of ${AEADS.map((a) => `'${a}'`).join(', ')}`, algorithm);
    checkBuffer(key, 'key');
    checkOptions(options, 'options');
    if (options.window !== undefined) checkInteger(options.window, 'options.window', 1, 2 ** 32 - 1);
    this._native = native('key', () => new binding.SanitizedAead(algorithm, key, options.window));
  }

  /** ciphertext ‖ 16-byte tag. Throws an Error with code 'ERR_NONCE_REUSE' on a repeated nonce. */
  seal(nonce, plaintext, aad) {
    checkSealArgs(nonce, plaintext, aad, 'plaintext');
    return native('nonce', () => this._native.seal(nonce, plaintext, aad));
  }

  /** The plaintext of ciphertext ‖ tag; throws (code 'ERR_NONCEFORGE_AUTH') when it does not verify. */
  open(nonce, sealed, aad) {
    checkSealArgs(nonce, sealed, aad, 'sealed');
    return native('sealed', () => this._native.open(nonce, sealed, aad));
  }
}

module.exports = { SanitizedAead };
