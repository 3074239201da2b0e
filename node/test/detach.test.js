'use strict';
// What JavaScript may do to a buffer while an asynchronous job reads or writes
// it: detach it (structuredClone with transfer), transfer it to a worker_threads
// worker (which scribbles on it and drops it), shrink its resizable ArrayBuffer,
// or drop every reference and collect it. For every kind of job on the pool (the
// drop-in's hash, HMAC, cipher and AEAD seal/open; the nonceforge API's) and every
// buffer the job reads or writes, the process must survive and each result be
// right or a clean error: a lost output is ERR_NONCEFORGE_TARGET_DETACHED;
// a lost source is ERR_NONCEFORGE_SOURCE_DETACHED where the job read it in
// place (zero-copy) and a right result where it read a copy (inputs as they
// were at the call). Small inputs (key, IV, AAD, an expected tag) are always
// copied: losing them never changes the result.
//
// Run by `npm test` in child processes under --expose-gc (node:test's own
// process has no gc()), once zero-copy and once copying
// (NONCEFORGE_ZERO_COPY=0); a child exits 0 only when every case held.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');

if (require.main === module && typeof globalThis.gc === 'function') {
  main().then(
    (report) => {
      process.stdout.write(JSON.stringify(report) + '\n');
      process.exit(report.failures.length === 0 ? 0 : 1);
    },
    (error) => {
      process.stderr.write(`${error.stack}\n`);
      process.exit(1);
    }
  );
} else {
  for (const zeroCopy of [true, false]) {
    test(`async jobs survive their buffers being detached, transferred, shrunk or collected (${zeroCopy ? 'zero-copy' : 'copying'}, child under --expose-gc)`, () => {
      const env = { ...process.env, NONCEFORGE_ZERO_COPY: zeroCopy ? '1' : '0' };
      const child = spawnSync(process.execPath, ['--expose-gc', __filename], { encoding: 'utf8', timeout: 600_000, env });
      assert.equal(child.signal, null, `the child died of ${child.signal}: ${child.stderr}`);
      assert.equal(child.status, 0, `${child.stdout}\n${child.stderr}`);
      const report = JSON.parse(child.stdout.trim().split('\n').pop());
      assert.deepEqual(report.failures, []);
      // The mode asked for is the mode that ran (the V8 pin is built by `npm run build`).
      assert.equal(report.zeroCopy, zeroCopy, `ZERO_COPY is ${report.zeroCopy}: ${report.zeroCopyOffBecause}`);
      // Every kind of job × buffer role × action ran, several times.
      assert.ok(report.cases >= 150, `only ${report.cases} cases ran`);
      assert.ok(report.detachedErrors > 0, 'no lost output was ever reported');
      if (zeroCopy) assert.ok(report.sourceErrors > 0, 'no lost source was ever reported');
      else assert.equal(report.sourceErrors, 0);
      assert.ok(report.right > report.detachedErrors + report.sourceErrors, 'too few jobs completed normally');
    });
  }
}

async function main() {
  const crypto = require('node:crypto');
  const { Worker } = require('node:worker_threads');
  const path = require('node:path');
  const cryptoAsync = require(path.join(__dirname, '..', 'crypto-async.js'));
  const cryptoAsync1 = require(path.join(__dirname, '..', 'crypto-async-1.js'));
  const nf = require(path.join(__dirname, '..', 'index.js'));
  cryptoAsync.INLINE_MAX = 0; // every job to the pool

  // A worker that takes transferred ArrayBuffers, writes over them, drops them and collects.
  const sink = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', (ab) => { new Uint8Array(ab).fill(0xee); ab = null; globalThis.gc(); parentPort.postMessage('ok'); });`,
    { eval: true } // inherits --expose-gc: V8 flags are per process
  );
  const sinkDone = () => new Promise((resolve) => sink.once('message', resolve));

  const SIZE = 1 << 20;
  // A fresh buffer of `n` bytes over an ArrayBuffer of its own, resizable when asked.
  function fresh(n, fill, resizable, dataView) {
    const ab = resizable ? new ArrayBuffer(n, { maxByteLength: n }) : new ArrayBuffer(n);
    const b = Buffer.from(ab);
    if (dataView) return new DataView(ab);
    if (typeof fill === 'number') b.fill(fill);
    else if (fill) fill.copy(b);
    return b;
  }

  // Does to `buf` what `action` says; returns once it is done.
  async function act(action, holder, role) {
    const buf = holder[role];
    if (action === 'detach') structuredClone(buf.buffer, { transfer: [buf.buffer] });
    else if (action === 'transfer') {
      const done = sinkDone();
      sink.postMessage(buf.buffer, [buf.buffer]);
      await done;
    } else if (action === 'resize') buf.buffer.resize(0);
    else if (action === 'collect') holder[role] = null;
    globalThis.gc();
    // Allocate over what was freed, so a stale pointer would read or write live data.
    for (let i = 0; i < 8; i++) Buffer.alloc(SIZE, 0x55);
  }

  const key32 = crypto.randomBytes(32);
  const iv16 = crypto.randomBytes(16);
  const iv12 = crypto.randomBytes(12);
  const plain = crypto.randomBytes(SIZE);
  const aadBytes = crypto.randomBytes(64);
  const gcm = crypto.createCipheriv('aes-256-gcm', key32, iv12);
  gcm.setAAD(aadBytes);
  const sealed = Buffer.concat([gcm.update(plain), gcm.final()]);
  const gcmTag = gcm.getAuthTag();

  const cbc = crypto.createCipheriv('aes-256-cbc', key32, iv16);
  const cbcSealed = Buffer.concat([cbc.update(plain), cbc.final()]);
  const want = {
    cbc: cbcSealed,
    hash: crypto.createHash('sha256').update(plain).digest(),
    hmac: crypto.createHmac('sha256', key32).update(plain).digest(),
    ctr: Buffer.concat([crypto.createCipheriv('aes-256-ctr', key32, iv16).update(plain)]),
    seal: sealed,
    sealTag: gcmTag,
    open: plain,
  };

  // Each kind: the buffers it takes (name → [bytes, is it written]), how to start it
  // (calls back with (error, result)), and the result it must give.
  const kinds = {
    'drop-in hash': {
      buffers: { source: [plain], target: [32, true] },
      start: (b, cb) => cryptoAsync.hash('sha256', b.source, 0, SIZE, b.target, 0, cb),
      check: (b, n) => n === 32 && want.hash.equals(b.target.subarray(0, 32)),
    },
    'drop-in hash into a DataView': {
      buffers: { source: [plain], target: [32, true, 'dataview'] },
      start: (b, cb) => cryptoAsync.hash('sha256', b.source, 0, SIZE, b.target, 0, cb),
      check: (b, n) => n === 32 && want.hash.equals(new Uint8Array(b.target.buffer, b.target.byteOffset, 32)),
    },
    'drop-in hmac': {
      buffers: { key: [key32], source: [plain], target: [32, true] },
      start: (b, cb) => cryptoAsync.hmac('sha256', b.key, 0, 32, b.source, 0, SIZE, b.target, 0, cb),
      check: (b, n) => n === 32 && want.hmac.equals(b.target.subarray(0, 32)),
    },
    'drop-in aes-256-ctr': {
      buffers: { key: [key32], iv: [iv16], source: [plain], target: [SIZE, true] },
      start: (b, cb) => cryptoAsync.cipher('aes-256-ctr', 1, b.key, 0, 32, b.iv, 0, 16, b.source, 0, SIZE, b.target, 0, cb),
      check: (b, n) => n === SIZE && want.ctr.equals(b.target),
    },
    'drop-in aes-256-gcm seal': {
      buffers: { key: [key32], iv: [iv12], source: [plain], target: [SIZE, true], aad: [aadBytes], tag: [16, true] },
      start: (b, cb) =>
        cryptoAsync.cipher('aes-256-gcm', 1, b.key, 0, 32, b.iv, 0, 12, b.source, 0, SIZE, b.target, 0, b.aad, 0, 64, b.tag, 0, 16, cb),
      check: (b, n) => n === SIZE && want.seal.equals(b.target) && want.sealTag.equals(b.tag),
    },
    'drop-in aes-256-gcm open': {
      buffers: { key: [key32], iv: [iv12], source: [sealed], target: [SIZE, true], aad: [aadBytes], tag: [gcmTag] },
      start: (b, cb) =>
        cryptoAsync.cipher('aes-256-gcm', 0, b.key, 0, 32, b.iv, 0, 12, b.source, 0, SIZE, b.target, 0, b.aad, 0, 64, b.tag, 0, 16, cb),
      check: (b, n) => n === SIZE && want.open.equals(b.target),
    },
    'drop-in in place (source = target)': {
      buffers: { key: [key32], iv: [iv16], source: [plain, true] },
      start: (b, cb) => cryptoAsync.cipher('aes-256-ctr', 1, b.key, 0, 32, b.iv, 0, 16, b.source, 0, SIZE, b.source, 0, cb),
      check: (b, n) => n === SIZE && want.ctr.equals(b.source),
    },
    '1.0.2 aes-256-cbc encrypt': {
      buffers: { key: [key32], iv: [iv16], source: [plain], target: [SIZE + 16, true] },
      start: (b, cb) => cryptoAsync1.cipher('AES-256-CBC', 1, b.key, 0, 32, b.iv, 0, 16, b.source, 0, SIZE, b.target, 0, cb),
      check: (b, n) => n === SIZE + 16 && want.cbc.equals(b.target),
    },
    '1.0.2 aes-256-cbc decrypt': {
      buffers: { key: [key32], iv: [iv16], source: [cbcSealed], target: [SIZE + 32, true] },
      start: (b, cb) => cryptoAsync1.cipher('AES-256-CBC', 0, b.key, 0, 32, b.iv, 0, 16, b.source, 0, SIZE + 16, b.target, 0, cb),
      check: (b, n) => n === SIZE && plain.equals(b.target.subarray(0, SIZE)),
    },
    'nonceforge hash': {
      buffers: { source: [plain] },
      start: (b, cb) => nf.hash('sha256', b.source).then((r) => cb(null, r), cb),
      check: (b, r) => want.hash.equals(r),
    },
    'nonceforge hmac': {
      buffers: { key: [key32], source: [plain] },
      start: (b, cb) => nf.hmac('sha256', b.key, b.source).then((r) => cb(null, r), cb),
      check: (b, r) => want.hmac.equals(r),
    },
    'nonceforge aes-256-gcm seal': {
      buffers: { key: [key32], iv: [iv12], source: [plain], aad: [aadBytes], tag: [16, true] },
      start: (b, cb) => nf.encrypt('aes-256-gcm', b.key, b.iv, b.source, { aad: b.aad, tag: b.tag }).then((r) => cb(null, r), cb),
      check: (b, r) => want.seal.equals(r) && want.sealTag.equals(b.tag),
    },
  };

  const actions = ['detach', 'transfer', 'resize', 'collect'];
  const report = {
    zeroCopy: cryptoAsync.ZERO_COPY,
    zeroCopyOffBecause: cryptoAsync.ZERO_COPY_OFF_BECAUSE,
    cases: 0,
    right: 0,
    detachedErrors: 0,
    sourceErrors: 0,
    failures: [],
  };
  // Read in place when zero-copy (so its loss is reported): the message, not the small inputs.
  const inPlace = (role) => report.zeroCopy && role === 'source';
  for (let round = 0; round < 2; round++) {
    for (const [kind, spec] of Object.entries(kinds)) {
      for (const role of Object.keys(spec.buffers)) {
        for (const action of actions) {
          const resizable = action === 'resize';
          const holder = {};
          for (const [name, [init, , dataView]] of Object.entries(spec.buffers)) {
            const rz = resizable && name === role;
            holder[name] = typeof init === 'number' ? fresh(init, 0, rz, dataView) : fresh(init.length, init, rz, dataView);
          }
          const written = spec.buffers[role][1] === true;
          // The outputs, kept for the check; nothing else holds the inputs once the call returned.
          const keep = {};
          for (const [name, [, isOutput]] of Object.entries(spec.buffers)) if (isOutput) keep[name] = holder[name];
          const outcome = new Promise((resolve) => {
            try {
              spec.start(holder, (error, result) => resolve({ error, result }));
            } catch (error) {
              resolve({ error, result: undefined });
            }
          });
          await act(action, holder, role);
          const { error, result } = await outcome;
          report.cases++;
          const where = `${kind}: ${role} ${action === 'collect' ? 'collected' : action + (action === 'resize' ? 'd to 0' : 'ed')}`;
          if (written && action !== 'collect') {
            // Its output is gone: a clean error, and nothing written anywhere.
            if (error && error.code === 'ERR_NONCEFORGE_TARGET_DETACHED') report.detachedErrors++;
            else report.failures.push(`${where}: expected ERR_NONCEFORGE_TARGET_DETACHED, got ${error ? error.stack : 'success'}`);
            continue;
          }
          if (error && error.code === 'ERR_NONCEFORGE_SOURCE_DETACHED' && inPlace(role) && action !== 'collect' && action !== 'resize') {
            report.sourceErrors++;
            continue;
          }
          if (error) {
            report.failures.push(`${where}: ${error.stack}`);
            continue;
          }
          if (spec.check(keep, result)) report.right++;
          else report.failures.push(`${where}: wrong result`);
        }
      }
    }
  }
  await sink.terminate();
  return report;
}
