'use strict';
// nonceforge/crypto-async-1: crypto-async 1.0.2's API — any OpenSSL cipher by
// name (CBC with PKCS#7 padding included), its argument checks and messages in
// its order, its easy and zero-copy forms — checked against node:crypto. Also
// runs @ronomon/crypto-async 5.0.1's own test.js (a devDependency, run from
// node_modules, not copied) against the default entry.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const v1 = require('../crypto-async-1.js');
const esm = import('../crypto-async-1.mjs');

const call = (fn, ...a) => new Promise((resolve) => fn(...a, (error, result) => resolve({ error, result })));

test('the ES module entry has the same functions', async () => {
  const m = await esm;
  assert.equal(m.cipher, v1.cipher);
  assert.equal(m.default.hash, v1.hash);
});

test('CBC, CTR, ECB and CFB round trips give node:crypto\'s bytes, easy and zero-copy forms', async () => {
  for (const [name, keyLen, ivLen] of [['AES-128-CBC', 16, 16], ['aes-256-cbc', 32, 16], ['AES-192-CTR', 24, 16], ['aes-128-ecb', 16, 0], ['aes-256-cfb', 32, 16]]) {
    for (const size of [0, 1, 15, 16, 17, 4096, 70000]) {
      const key = crypto.randomBytes(keyLen);
      const iv = crypto.randomBytes(ivLen);
      const plain = crypto.randomBytes(size);
      const c = crypto.createCipheriv(name, key, ivLen ? iv : null);
      const want = Buffer.concat([c.update(plain), c.final()]);
      const easy = await call(v1.cipher, name, 1, key, iv, plain);
      assert.equal(easy.error, undefined);
      assert.deepEqual(easy.result, want, `${name} ${size}`);
      const back = await call(v1.cipher, name, 0, key, iv, easy.result);
      assert.deepEqual(back.result, plain);
      // Zero-copy at offsets, with exactly the room asked for.
      const src = Buffer.concat([Buffer.alloc(3), plain, Buffer.alloc(5)]);
      const dst = Buffer.alloc(7 + want.length + 2, 0xaa);
      const r = await call(v1.cipher, name, 1, Buffer.concat([Buffer.alloc(1), key]), 1, keyLen, iv, 0, ivLen, src, 3, size, dst, 7);
      assert.equal(r.result, want.length);
      assert.deepEqual(dst.subarray(7, 7 + want.length), want);
      assert.ok(dst.subarray(0, 7).every((b) => b === 0xaa) && dst.subarray(7 + want.length).every((b) => b === 0xaa), 'wrote outside its range');
    }
  }
});

test('a wrong key or bad padding is "cipher final error"; nothing throws', async () => {
  const key = crypto.randomBytes(32);
  const iv = crypto.randomBytes(16);
  const sealed = (await call(v1.cipher, 'AES-256-CBC', 1, key, iv, Buffer.from('attack at dawn'))).result;
  // A wrong key decrypts to random bytes, and about one in 256 of those end in
  // valid padding (CBC has no integrity): where node:crypto then gives bytes, so
  // must this; where it fails, this fails with 1.0.2's words.
  let refused = 0;
  for (let i = 0; i < 64; i++) {
    const other = crypto.randomBytes(32);
    const got = await call(v1.cipher, 'AES-256-CBC', 0, other, iv, sealed);
    let want = null;
    try {
      const d = crypto.createDecipheriv('aes-256-cbc', other, iv);
      want = Buffer.concat([d.update(sealed), d.final()]);
    } catch {
      // bad padding
    }
    if (want === null) {
      assert.equal(got.error?.message, 'cipher final error');
      refused++;
    } else {
      assert.deepEqual(got.result, want);
    }
  }
  assert.ok(refused > 32, `only ${refused} of 64 wrong keys refused`);
  const truncated = await call(v1.cipher, 'AES-256-CBC', 0, key, iv, sealed.subarray(0, 15));
  assert.equal(truncated.error.message, 'cipher final error');
});

test('hash and hmac, both forms, as node:crypto', async () => {
  const source = crypto.randomBytes(100000);
  const key = crypto.randomBytes(40);
  for (const alg of ['MD5', 'SHA1', 'SHA256', 'SHA512']) {
    const want = crypto.createHash(alg).update(source).digest();
    assert.deepEqual((await call(v1.hash, alg, source)).result, want);
    const target = Buffer.alloc(80);
    assert.equal((await call(v1.hash, alg, source, 10, 500, target, 8)).result, want.length);
    assert.deepEqual(target.subarray(8, 8 + want.length), crypto.createHash(alg).update(source.subarray(10, 510)).digest());
    const mac = crypto.createHmac(alg, key).update(source).digest();
    assert.deepEqual((await call(v1.hmac, alg, key, source)).result, mac);
    assert.deepEqual((await call(v1.hmac, alg, Buffer.alloc(0), source)).result, crypto.createHmac(alg, Buffer.alloc(0)).update(source).digest());
  }
});

test('1.0.2\'s checks, in its order and words', () => {
  const k = Buffer.alloc(32);
  const iv = Buffer.alloc(16);
  const s = Buffer.alloc(32);
  const t = Buffer.alloc(64);
  const cb = () => assert.fail('called back');
  const throws = (fn, message) => assert.throws(fn, (e) => e instanceof Error && e.message === message);
  throws(() => v1.cipher('AES-256-CBC', 1, k, iv, s), 'bad number of arguments');
  throws(() => v1.hash('SHA256', s), 'bad number of arguments');
  throws(() => v1.hmac('SHA256', k, s), 'bad number of arguments');
  const bad = /^bad arguments, expected: \(string algorithm, int encrypt, Buffer key/;
  assert.throws(() => v1.cipher('AES-256-CBC', 1, 'key', 0, 32, iv, 0, 16, s, 0, 32, t, 0, cb), { message: bad });
  assert.throws(() => v1.cipher('AES-256-CBC', 1, k, -1, 32, iv, 0, 16, s, 0, 32, t, 0, cb), { message: bad });
  assert.throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 32, iv, 0, 16, s, 0, 32, t, 0, 'end'), { message: bad });
  assert.throws(() => v1.hash('SHA256', s, 0, 1.5, t, 0, cb), { message: /^bad arguments, expected: \(string algorithm, Buffer source/ });
  assert.throws(() => v1.hmac('SHA256', k, 0, 32, s, 0, 32, t, 0, null), { message: /^bad arguments, expected: \(string algorithm, Buffer key/ });
  throws(() => v1.cipher('AES-256-NOPE', 1, k, 0, 32, iv, 0, 16, s, 0, 32, t, 0, cb), 'algorithm not supported');
  throws(() => v1.cipher('AES-256-CBC', 2, k, 0, 32, iv, 0, 16, s, 0, 32, t, 0, cb), 'encrypt must be 0 or 1');
  throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 16, iv, 0, 16, s, 0, 32, t, 0, cb), 'invalid key size');
  throws(() => v1.cipher('AES-256-CBC', 1, k, 1, 32, iv, 0, 16, s, 0, 32, t, 0, cb), 'key would overflow');
  throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 32, iv, 0, 12, s, 0, 32, t, 0, cb), 'invalid iv size');
  throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 32, iv, 1, 16, s, 0, 32, t, 0, cb), 'iv would overflow');
  throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 32, iv, 0, 16, s, 1, 32, t, 0, cb), 'source would overflow');
  // 32 bytes encrypt to 48: 1.0.2 asked for 47 (and overran it); this entry asks for 48.
  throws(() => v1.cipher('AES-256-CBC', 1, k, 0, 32, iv, 0, 16, s, 0, 32, t, 17, cb), 'target too small');
  throws(() => v1.cipher('AES-256-CBC', 0, k, 0, 32, iv, 0, 16, s, 0, 32, t, 17, cb), 'target too small');
  throws(() => v1.hash('NOPE', s, 0, 32, t, 0, cb), 'algorithm not supported');
  throws(() => v1.hash('SHA512', s, 0, 33, t, 0, cb), 'source would overflow');
  throws(() => v1.hash('SHA512', s, 0, 32, t, 1, cb), 'target too small');
  throws(() => v1.hmac('SHA256', k, 1, 32, s, 0, 32, t, 0, cb), 'key would overflow');
});

test("@ronomon/crypto-async 5.0.1's own test.js passes against the default entry", () => {
  const original = path.dirname(require.resolve('@ronomon/crypto-async/package.json', { paths: [path.join(__dirname, '..')] }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nonceforge-ronomon-'));
  try {
    for (const f of ['test.js', 'common.js']) fs.symlinkSync(path.join(original, f), path.join(dir, f));
    fs.writeFileSync(path.join(dir, 'index.js'), `module.exports = require(${JSON.stringify(path.join(__dirname, '..', 'crypto-async.js'))});\n`);
    // --preserve-symlinks: test.js's require('.') is this directory's index.js.
    const r = spawnSync(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', path.join(dir, 'test.js')], {
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: path.join(__dirname, '..', 'node_modules') },
      maxBuffer: 1 << 30,
      timeout: 300_000,
    });
    assert.equal(r.status, 0, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
    assert.match(r.stdout, /PASSED ALL TESTS/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
