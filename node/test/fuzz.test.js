'use strict';
// Thousands of random calls of the drop-in, sync and async, against node:crypto:
// random algorithm, sizes 0–512 KiB, offsets and slack; after each call the
// result and every argument buffer are compared (only the target range, and
// the tag range on encryption, may change); each ciphertext is decrypted
// again; AEAD inputs are corrupted and must give 'corrupt' without a write.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const ours = require('../crypto-async.js');

const SEED = Number(process.env.FUZZ_SEED || Date.now() % 1e9);
const CALLS = Number(process.env.FUZZ_CALLS || 4000);
let state = SEED >>> 0 || 1;
function rand() {
  // xorshift32: reproducible with FUZZ_SEED.
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
function size() {
  const r = rand();
  if (r < 0.1) return 0;
  if (r < 0.6) return int(300);
  if (r < 0.9) return int(70000);
  return int(512 * 1024 + 1);
}
function randomBuffer(n) {
  const b = Buffer.allocUnsafe(n);
  crypto.randomFillSync(b);
  return b;
}
// `n` bytes at a random offset inside a buffer with random slack around them.
function placed(n) {
  const offset = int(64);
  const buffer = randomBuffer(offset + n + int(64));
  return { buffer, offset, size: n };
}

const have = new Set(crypto.getCiphers());
const CIPHERS = [
  ['aes-128-ctr', 16, 16], ['aes-192-ctr', 24, 16], ['aes-256-ctr', 32, 16], ['chacha20', 32, 16],
  ['aes-128-gcm', 16, 12, [4, 8, 12, 13, 14, 15, 16]], ['aes-256-gcm', 32, 12, [4, 8, 12, 16]],
  ['chacha20-poly1305', 32, 12, [1, 5, 12, 16]],
  ['aria-128-ctr', 16, 16], ['camellia-256-ctr', 32, 16], ['sm4-ctr', 16, 16], ['aria-256-gcm', 32, 12, [16]],
].filter(([name]) => have.has(name));
const DIGESTS = ['md5', 'sha1', 'sha256', 'sha512', 'blake2s256', 'blake2b512', 'sha3-256', 'sha3-512', 'sha224', 'ripemd160']
  .filter((d) => crypto.getHashes().includes(d));

function nodeCipher(name, encrypt, key, iv, data, aad, tagSize, tag) {
  const options = tagSize ? { authTagLength: tagSize } : undefined;
  const c = encrypt ? crypto.createCipheriv(name, key, iv, options) : crypto.createDecipheriv(name, key, iv, options);
  if (tagSize) {
    c.setAAD(aad, { plaintextLength: data.length });
    if (!encrypt) c.setAuthTag(tag);
  }
  const out = Buffer.concat([c.update(data), c.final()]);
  return { out, tag: tagSize && encrypt ? c.getAuthTag() : undefined };
}

// Calls the zero-copy form sync or async; resolves to the result or the error.
function call(fn, args, async) {
  if (!async) {
    try {
      return Promise.resolve({ value: fn(...args) });
    } catch (error) {
      return Promise.resolve({ error });
    }
  }
  return new Promise((resolve) => {
    let sync = true;
    fn(...args, (error, value) => {
      assert.equal(sync, false, 'the callback ran synchronously');
      resolve(error ? { error } : { value });
    });
    sync = false;
  });
}

function snapshot(...buffers) {
  return buffers.map((b) => Buffer.from(b));
}

// Only [offset, offset + size) of each (buffer, offset, size) may differ.
function assertOnlyChanged(before, after, allowed, label) {
  for (let i = 0; i < before.length; i++) {
    const a = before[i];
    const b = after[i];
    const ranges = allowed.filter((r) => r.buffer === after[i]);
    for (let j = 0; j < a.length; j++) {
      if (a[j] === b[j]) continue;
      if (ranges.some((r) => j >= r.offset && j < r.offset + r.size)) continue;
      assert.fail(`${label}: byte ${j} of argument buffer ${i} changed outside the target`);
    }
  }
}

async function cipherCase(async) {
  const [name, keySize, ivSize, tagSizes] = pick(CIPHERS);
  const aead = Boolean(tagSizes);
  const key = placed(keySize);
  const iv = placed(ivSize);
  const n = size();
  const source = placed(n);
  const target = placed(n);
  const aad = aead ? placed(int(4) === 0 ? 0 : int(300)) : placed(0);
  const tagSize = aead ? pick(tagSizes) : 0;
  const tag = placed(tagSize);
  const args = (encrypt, src, dst, t) => [
    name, encrypt, key.buffer, key.offset, key.size, iv.buffer, iv.offset, iv.size,
    src.buffer, src.offset, src.size, dst.buffer, dst.offset, aad.buffer, aad.offset, aad.size,
    t.buffer, t.offset, t.size,
  ];
  const label = `${name} ${n} bytes, aad ${aad.size}, tag ${tagSize}, ${async ? 'async' : 'sync'} (seed ${SEED})`;
  const k = key.buffer.subarray(key.offset, key.offset + key.size);
  const v = iv.buffer.subarray(iv.offset, iv.offset + iv.size);
  const plain = source.buffer.subarray(source.offset, source.offset + n);
  const a = aad.buffer.subarray(aad.offset, aad.offset + aad.size);
  const want = nodeCipher(name, true, k, v, plain, a, tagSize);

  const all = [key.buffer, iv.buffer, source.buffer, target.buffer, aad.buffer, tag.buffer];
  const before = snapshot(...all);
  const r = await call(ours.cipher, args(1, source, target, tag), async);
  assert.equal(r.error, undefined, label);
  assert.equal(r.value, async ? n : n, label);
  assert.ok(target.buffer.subarray(target.offset, target.offset + n).equals(want.out), `${label}: ciphertext`);
  if (aead) assert.ok(tag.buffer.subarray(tag.offset, tag.offset + tagSize).equals(want.tag), `${label}: tag`);
  assertOnlyChanged(before, all, [
    { buffer: target.buffer, offset: target.offset, size: n },
    { buffer: tag.buffer, offset: tag.offset, size: tagSize },
  ], label);

  // Back again, into a third buffer.
  const back = placed(n);
  const r2 = await call(ours.cipher, args(0, target, back, tag), async);
  assert.equal(r2.error, undefined, `${label}: decrypt`);
  assert.ok(back.buffer.subarray(back.offset, back.offset + n).equals(plain), `${label}: round trip`);

  if (aead) {
    // Corrupt the tag, the ciphertext or the AAD: 'corrupt', and nothing written.
    const what = pick(['tag', n ? 'ciphertext' : 'tag', aad.size ? 'aad' : 'tag']);
    const victim = what === 'tag' ? tag : what === 'aad' ? aad : target;
    const at = victim.offset + int(victim.size);
    victim.buffer[at] ^= 1 << int(8);
    // A short tag can still match what was corrupted (1 in 2^(8 × tag bytes)):
    // ask node:crypto what the tag of the corrupted message is. The stream
    // cipher makes a flipped ciphertext bit a flipped plaintext bit.
    const ct = target.buffer.subarray(target.offset, target.offset + n);
    const plain2 = Buffer.from(plain.map((b, i) => b ^ ct[i] ^ want.out[i]));
    const aad2 = aad.buffer.subarray(aad.offset, aad.offset + aad.size);
    const forged = what !== 'tag' &&
      nodeCipher(name, true, k, v, plain2, aad2, tagSize).tag.equals(tag.buffer.subarray(tag.offset, tag.offset + tagSize));
    const out = placed(n);
    const untouched = Buffer.from(out.buffer);
    const r3 = await call(ours.cipher, args(0, target, out, tag), async);
    if (forged) {
      assert.equal(r3.error, undefined, `${label}: corrupted ${what}, yet the ${tagSize}-byte tag matches`);
      assert.ok(out.buffer.subarray(out.offset, out.offset + n).equals(plain2), `${label}: forged plaintext`);
    } else {
      assert.equal(r3.error && r3.error.message, 'corrupt', `${label}: corrupted ${what}`);
      assert.ok(out.buffer.equals(untouched), `${label}: target written after a failed check`);
    }
  }
}

async function digestCase(async, keyed) {
  const name = pick(DIGESTS);
  const source = placed(size());
  const key = placed(int(200));
  const length = crypto.createHash(name).digest().length;
  const target = placed(length);
  const label = `${keyed ? 'hmac' : 'hash'} ${name} ${source.size} bytes ${async ? 'async' : 'sync'} (seed ${SEED})`;
  const s = source.buffer.subarray(source.offset, source.offset + source.size);
  const want = keyed
    ? crypto.createHmac(name, key.buffer.subarray(key.offset, key.offset + key.size)).update(s).digest()
    : crypto.createHash(name).update(s).digest();
  const all = [key.buffer, source.buffer, target.buffer];
  const before = snapshot(...all);
  const args = keyed
    ? [name, key.buffer, key.offset, key.size, source.buffer, source.offset, source.size, target.buffer, target.offset]
    : [name, source.buffer, source.offset, source.size, target.buffer, target.offset];
  const r = await call(keyed ? ours.hmac : ours.hash, args, async);
  assert.equal(r.error, undefined, label);
  assert.equal(r.value, length, label);
  assert.ok(target.buffer.subarray(target.offset, target.offset + length).equals(want), label);
  assertOnlyChanged(before, all, [{ buffer: target.buffer, offset: target.offset, size: length }], label);
  // The short forms allocate their own target.
  const short = keyed
    ? await call(ours.hmac, [name, key.buffer.subarray(key.offset, key.offset + key.size), s], async)
    : await call(ours.hash, [name, s], async);
  assert.ok(short.value.equals(want), `${label}: short form`);
}

test(`fuzz: ${CALLS} random calls against node:crypto`, async () => {
  for (let i = 0; i < CALLS; i++) {
    const async = rand() < 0.5;
    const r = rand();
    if (r < 0.6) await cipherCase(async);
    else await digestCase(async, r < 0.8);
  }
});

test('empty buffers everywhere work, sync and async', async () => {
  const empty = Buffer.alloc(0);
  for (const async of [false, true]) {
    const key = Buffer.alloc(32);
    const iv = Buffer.alloc(16);
    const r = await call(ours.cipher, ['aes-256-ctr', 1, key, 0, 32, iv, 0, 16, empty, 0, 0, empty, 0], async);
    assert.equal(r.value, 0);
    const t = Buffer.alloc(16);
    const g = await call(ours.cipher, ['aes-256-gcm', 1, key, 0, 32, iv, 0, 12, empty, 0, 0, empty, 0, empty, 0, 0, t, 0, 16], async);
    assert.equal(g.value, 0);
    assert.ok(t.equals(crypto.createCipheriv('aes-256-gcm', key, iv.subarray(0, 12)).update(empty) && (() => {
      const c = crypto.createCipheriv('aes-256-gcm', key, iv.subarray(0, 12)); c.final(); return c.getAuthTag();
    })()));
    const h = await call(ours.hash, ['sha256', empty], async);
    assert.equal(h.value.toString('hex'), crypto.createHash('sha256').digest('hex'));
    const m = await call(ours.hmac, ['sha256', empty, empty], async);
    assert.ok(m.value.equals(crypto.createHmac('sha256', empty).digest()));
  }
});

test('in place and overlapping: source and target in one buffer', async () => {
  const key = randomBuffer(32);
  const iv = randomBuffer(16);
  for (const shift of [0, 1, -1, 7, -100]) {
    const n = 1000;
    const b = randomBuffer(n + 200);
    const src = 100;
    const plain = Buffer.from(b.subarray(src, src + n));
    const want = nodeCipher('aes-256-ctr', true, key, iv, plain);
    ours.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, b, src, n, b, src + shift);
    assert.ok(b.subarray(src + shift, src + shift + n).equals(want.out), `shift ${shift}`);
  }
});

test('a callback that throws reaches uncaughtException, once', async () => {
  const seen = [];
  const listeners = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  process.on('uncaughtException', (e) => seen.push(e.message));
  try {
    for (const n of [10, 100000]) {
      ours.hash('sha256', Buffer.alloc(n), () => {
        throw new Error(`boom ${n}`);
      });
    }
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    process.removeAllListeners('uncaughtException');
    for (const l of listeners) process.on('uncaughtException', l);
  }
  assert.deepEqual(seen.sort(), ['boom 10', 'boom 100000']);
});
