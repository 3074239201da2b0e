'use strict';
// Every argument of every form gets every kind of bad value; the error must be
// the one @ronomon/crypto-async 5.0.1 throws, message for message. The
// original is the oracle (a dev dependency); it aborts the process on an empty
// buffer, so the probe gives it none (empty buffers are tested in fuzz.test.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const ours = require('../crypto-async.js');
const theirs = require('@ronomon/crypto-async');

const noop = () => {};
const buf = (n, fill = 1) => Buffer.alloc(n, fill);

const BAD = [
  undefined, null, true, false, 'x', '', -1, -0.5, 1.5, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 31 - 1,
  2 ** 53, 0, 1, 2, 16, 1e9, 17n, {}, [], noop, new Number(1), new String('aes-256-ctr'), Symbol('s'),
  buf(1), buf(3), buf(64), new Uint8Array(8), new DataView(new ArrayBuffer(8)), new ArrayBuffer(8),
  'aes-256-ctr', 'AES-256-GCM', 'aes-128-cbc', 'sha256', 'SHA-512', 'nope', 'chacha20-poly1305\0x',
];

function outcome(fn, args) {
  try {
    const r = fn(...args);
    return { ok: true, type: r === undefined ? 'undefined' : Buffer.isBuffer(r) ? 'buffer' : typeof r };
  } catch (error) {
    return { ok: false, message: error.message };
  }
}

function probe(name, base) {
  let cases = 0;
  for (let i = 0; i < base.length; i++) {
    for (const bad of BAD) {
      const args = base.slice();
      args[i] = bad;
      const want = outcome(theirs[name], args);
      const got = outcome(ours[name], args);
      assert.deepEqual(got, want, `${name} argument ${i} = ${String(typeof bad === 'symbol' ? 'Symbol' : bad)} (${args.length} arguments)`);
      cases++;
    }
  }
  // Every argument count from 0 to 21, with the base's prefix.
  for (let n = 0; n <= 21; n++) {
    const args = [];
    for (let i = 0; i < n; i++) args.push(i < base.length ? base[i] : 0);
    assert.deepEqual(outcome(ours[name], args), outcome(theirs[name], args), `${name} with ${n} arguments`);
    cases++;
  }
  return cases;
}

const key32 = buf(32);
const iv16 = buf(16);
const iv12 = buf(12);

const FORMS = {
  cipher: [
    ['aes-256-ctr', 1, key32, iv16, buf(20)],
    ['aes-256-ctr', 0, key32, iv16, buf(20), noop],
    ['aes-256-gcm', 1, key32, iv12, buf(20), buf(5), buf(16)],
    ['chacha20-poly1305', 1, key32, iv12, buf(20), buf(5), buf(16), noop],
    ['aes-256-ctr', 1, key32, 0, 32, iv16, 0, 16, buf(20), 0, 20, buf(40), 4],
    ['chacha20', 0, key32, 0, 32, iv16, 0, 16, buf(20), 0, 20, buf(40), 4, noop],
    ['aes-128-gcm', 1, buf(20), 4, 16, buf(16), 2, 12, buf(20), 0, 20, buf(40), 4, buf(10), 1, 9, buf(20), 2, 16],
    ['aes-256-gcm', 1, key32, 0, 32, iv12, 0, 12, buf(20), 0, 20, buf(40), 4, buf(10), 1, 9, buf(20), 2, 12, noop],
  ],
  hash: [
    ['sha256', buf(10)],
    ['sha512', buf(10), noop],
    ['sha256', buf(10), 2, 8, buf(40), 8],
    ['blake2b512', buf(10), 2, 8, buf(80), 8, noop],
  ],
  hmac: [
    ['sha256', buf(7), buf(10)],
    ['sha1', buf(7), buf(10), noop],
    ['sha256', buf(7), 1, 5, buf(10), 2, 8, buf(40), 8],
    ['sha384', buf(7), 1, 5, buf(10), 2, 8, buf(80), 8, noop],
  ],
};

for (const [name, forms] of Object.entries(FORMS)) {
  test(`${name}: every bad argument gives the original's error`, () => {
    let cases = 0;
    for (const base of forms) cases += probe(name, base);
    assert.ok(cases > 500, `${cases} cases`);
  });
}

test('the exports are the original exports', () => {
  for (const key of Object.keys(theirs)) {
    if (/^[A-Z_]+$/.test(key)) assert.equal(ours[key], theirs[key], key);
    else assert.equal(typeof ours[key], typeof theirs[key], key);
  }
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
});

test('algorithm names: every cipher and digest name of this Node classifies as the original does', () => {
  const crypto = require('node:crypto');
  const names = new Set();
  for (const n of crypto.getCiphers()) names.add(n).add(n.toUpperCase());
  for (const n of ['id-aes256-GCM', '2.16.840.1.101.3.4.1.46', '2.16.840.1.101.3.4.1.6', 'aes-256-ctr ', '']) names.add(n);
  for (const n of names) {
    for (const args of [[n, 1, key32, iv16, buf(5)], [n, 1, key32, iv12, buf(5), buf(3), buf(16)]]) {
      assert.deepEqual(outcome(ours.cipher, args), outcome(theirs.cipher, args), `cipher ${n}`);
    }
  }
  const digests = new Set(['SHA2-256', 'SHA-512/256', 'SHA512-256', 'BLAKE2B-512', 'RIPEMD-160', 'SHAKE-128', 'SHA3-256', 'SHA-1', 'sha256 ']);
  for (const n of crypto.getHashes()) digests.add(n).add(n.toUpperCase());
  for (let i = 1; i <= 12; i++) digests.add(`2.16.840.1.101.3.4.2.${i}`);
  for (const n of ['1.2.840.113549.2.5', '1.3.14.3.2.26', '1.3.36.3.2.1', '1.2.156.10197.1.401', '1.3.6.1.4.1.1722.12.2.1.16', '1.3.6.1.4.1.1722.12.2.2.8']) digests.add(n);
  for (const n of digests) {
    if (/^(md4|whirlpool|mdc2)/i.test(n) || /md4|whirlpool|mdc2/i.test(n)) continue; // legacy provider: documented
    const h = [outcome(ours.hash, [n, buf(5)]), outcome(theirs.hash, [n, buf(5)])];
    assert.deepEqual(h[0], h[1], `hash ${n}`);
    if (h[1].ok) assert.ok(ours.hash(n, buf(5)).equals(theirs.hash(n, buf(5))), `hash ${n} value`);
    const m = [outcome(ours.hmac, [n, buf(3), buf(5)]), outcome(theirs.hmac, [n, buf(3), buf(5)])];
    assert.deepEqual(m[0], m[1], `hmac ${n}`);
    if (m[1].ok) assert.ok(ours.hmac(n, buf(3), buf(5)).equals(theirs.hmac(n, buf(3), buf(5))), `hmac ${n} value`);
  }
});
