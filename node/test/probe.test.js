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

// Every name `openssl list` prints (test/make-openssl-names.sh: algorithms,
// aliases, object short and long names, OIDs), as printed, in lower case and
// in upper case, as a cipher (both IV shapes), a hash and an HMAC: the same
// error or the same bytes as the original on this Node.
test('algorithm names: every name OpenSSL knows, in any case, classifies as the original does', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const listed = fs.readFileSync(path.join(__dirname, 'openssl-names.txt'), 'utf8').split('\n').filter(Boolean);
  assert.ok(listed.length > 2500, `${listed.length} names`);
  const names = new Set();
  for (const n of listed) names.add(n).add(n.toLowerCase()).add(n.toUpperCase());
  // The original reads at most 31 bytes of a name (whole characters) and
  // stops at a NUL.
  for (const n of ['aes-256-ctr', 'sha256', 'chacha20-poly1305', 'id-aes256-GCM', 'rc4']) {
    names.add(n.padEnd(31, ' ')).add(n.padEnd(31, ' ') + 'x').add(n + '\0' + 'junk').add(n + ' ');
    names.add(n.padEnd(30, ' ') + 'é').add(n.padEnd(31, '\0') + 'more');
  }
  names.add('').add('\0').add('é'.repeat(20)).add('\ud800');
  const key = buf(32, 1);
  const s = buf(5, 3);
  const outcomeOf = (fn, args) => {
    try {
      const r = fn(...args);
      return Buffer.isBuffer(r) ? `ok ${r.toString('hex')}` : `ok ${r}`;
    } catch (error) {
      return `error ${error.message}`;
    }
  };
  const seen = {};
  for (const n of names) {
    const calls = [
      ['cipher', [n, 1, key, buf(16, 2), s]],
      ['cipher', [n, 0, key, buf(12, 2), s, buf(3), buf(16)]],
      ['hash', [n, s]],
      ['hmac', [n, buf(3, 4), s]],
    ];
    for (const [fn, args] of calls) {
      const want = outcomeOf(theirs[fn], args);
      assert.equal(outcomeOf(ours[fn], args), want, `${fn} ${JSON.stringify(n)}`);
      seen[want.startsWith('ok') ? 'ok' : want] = true;
    }
  }
  // The list reaches every class of answer, legacy digests included.
  for (const k of ['ok', 'error algorithm unknown', 'error algorithm disabled', 'error initialization failed', 'error keySize invalid', 'error ivSize invalid']) {
    assert.ok(seen[k], k);
  }
});

test('a digest OpenSSL knows but cannot start fails after the arguments are checked, by callback when async', async () => {
  for (const n of ['md4', 'WHIRLPOOL', 'mdc2', 'RSA-MD4']) {
    assert.throws(() => ours.hash(n, 'x'), { message: theirs.E_SOURCE });
    assert.throws(() => ours.hash(n, buf(4)), { message: 'initialization failed' });
    assert.throws(() => ours.hmac(n, buf(4), buf(4)), { message: 'initialization failed' });
    assert.throws(() => ours.hash(n, buf(4), 0, 4, buf(4), 0), { message: theirs.E_TARGET_RANGE });
    for (const impl of [ours, theirs]) {
      const error = await new Promise((resolve) => impl.hash(n, buf(4), resolve));
      assert.equal(error && error.message, 'initialization failed');
    }
  }
});
