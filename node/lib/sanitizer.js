'use strict';
// SanitizedAead: an AEAD that refuses to seal twice under one (key, nonce).

const binding = require('./binding.js');
const { argType, argValue, native } = require('./errors.js');
const { checkBuffer, checkString, checkOptions, checkInteger } = require('./check.js');

const AEADS = ['aes-128-gcm', 'aes-192-gcm', 'aes-256-gcm', 'chacha20-poly1305', 'xchacha20-poly1305'];
const MODES = ['auto', 'counter', 'random'];
const OPTIONS = ['mode', 'window', 'counterWindow', 'allowIdentical', 'checkOpen', 'maxSeals', 'maxBytes'];

function checkSealArgs(nonce, data, aad, name) {
  checkBuffer(nonce, 'nonce');
  checkBuffer(data, name);
  if (aad !== undefined) checkBuffer(aad, 'aad');
}

function checkBoolean(value, name) {
  if (typeof value !== 'boolean') throw argType(name, 'of type boolean', value);
}

// The options, each checked; an unknown name is an error (a misspelt
// `allowIdenticals` must not leave the default in place unnoticed).
function sanitizerOptions(options) {
  checkOptions(options, 'options');
  for (const k of Object.keys(options)) {
    if (!OPTIONS.includes(k)) throw argValue(`options.${k}`, `is not a SanitizedAead option (${OPTIONS.join(', ')})`);
  }
  const o = {};
  if (options.mode !== undefined) {
    checkString(options.mode, 'options.mode');
    if (!MODES.includes(options.mode)) throw argValue('options.mode', `must be one of ${MODES.map((m) => `'${m}'`).join(', ')}`, options.mode);
    o.mode = options.mode;
  }
  if (options.window !== undefined) {
    checkInteger(options.window, 'options.window', 64, 2 ** 24);
    o.window = options.window;
  }
  if (options.counterWindow !== undefined) {
    checkInteger(options.counterWindow, 'options.counterWindow', 64, 2 ** 30);
    o.counterWindow = options.counterWindow;
  }
  for (const k of ['allowIdentical', 'checkOpen']) {
    if (options[k] !== undefined) {
      checkBoolean(options[k], `options.${k}`);
      o[k] = options[k];
    }
  }
  for (const k of ['maxSeals', 'maxBytes']) {
    if (options[k] !== undefined) {
      checkInteger(options[k], `options.${k}`, 1, Number.MAX_SAFE_INTEGER);
      o[k] = options[k];
    }
  }
  return o;
}

class SanitizedAead {
  /**
   * An AEAD that refuses to seal twice under one (key, nonce): 'aes-128-gcm',
   * 'aes-192-gcm', 'aes-256-gcm', 'chacha20-poly1305' (node:crypto's bytes) or
   * 'xchacha20-poly1305' (24-byte nonces). Options: mode ('auto', 'counter',
   * 'random'), window, counterWindow, allowIdentical, checkOpen, maxSeals,
   * maxBytes — the Rust core's, with its defaults.
   */
  constructor(algorithm, key, options = {}) {
    checkString(algorithm, 'algorithm');
    if (!AEADS.includes(algorithm)) throw argValue('algorithm', `must be one of ${AEADS.map((a) => `'${a}'`).join(', ')}`, algorithm);
    checkBuffer(key, 'key');
    const o = sanitizerOptions(options);
    this._native = native('key', () => new binding.SanitizedAead(algorithm, key, o));
  }

  /** ciphertext ‖ 16-byte tag. Throws an Error with code 'ERR_NONCE_REUSE' on a repeated nonce. */
  seal(nonce, plaintext, aad) {
    checkSealArgs(nonce, plaintext, aad, 'plaintext');
    return native('nonce', () => this._native.seal(nonce, plaintext, aad));
  }

  /**
   * The plaintext of ciphertext ‖ tag; throws (code 'ERR_NONCEFORGE_AUTH') when it does not
   * verify, and with `checkOpen` (code 'ERR_NONCE_REUSE') when the nonce was opened before.
   */
  open(nonce, sealed, aad) {
    checkSealArgs(nonce, sealed, aad, 'sealed');
    return native('sealed', () => this._native.open(nonce, sealed, aad));
  }

  /**
   * The nonce sanitizer's figures for this process — seals checked and
   * refusals by violation under every key, keys held and their memory — as
   * samples of the fleet's series ({ name, type, labels, value }:
   * testdata/vectors/metrics.json's sanitizer_metrics). Read without the keys'
   * locks: sealing threads lose nothing to a scrape.
   */
  static metrics() {
    return binding.sanitizerSamples();
  }
}

module.exports = { SanitizedAead };
