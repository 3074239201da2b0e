'use strict';
// The addon in several worker_threads at once: each loads it, makes nonces
// and hashes (sync and on the pool), and exits; workers are started again
// after others were terminated mid-work; the main thread uses it throughout.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const path = require('node:path');

const INDEX = path.join(__dirname, '..', 'index.js');
const CRYPTO = path.join(__dirname, '..', 'crypto-async.js');

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const nf = require(${JSON.stringify(INDEX)});
const cryptoAsync = require(${JSON.stringify(CRYPTO)});
const g = new nf.NonceGenerator({ machineId: workerData.machineId, key: Buffer.alloc(32, 9) });
const nonces = [];
for (let i = 0; i < 2000; i++) nonces.push(g.counter(96).toString('hex'), g.sortable(128).toString('hex'), g.encrypted(64).toString('hex'));
const big = Buffer.alloc(1 << 20, workerData.machineId);
cryptoAsync.hash('sha256', big, (error, digest) => {
  if (error) throw error;
  parentPort.postMessage({ nonces, digest: digest.toString('hex'), sync: cryptoAsync.hash('sha256', big).toString('hex'), uuid: nf.uuidv7() });
});
`;

function run(machineId) {
  return new Promise((resolve, reject) => {
    const w = new Worker(SOURCE, { eval: true, workerData: { machineId } });
    w.once('message', (m) => {
      resolve(m);
      w.terminate();
    });
    w.once('error', reject);
    w.once('exit', (code) => code !== 0 && code !== 1 && reject(new Error(`worker exited with ${code}`)));
  });
}

test('the addon loads and works in eight worker threads at once, and after others were terminated', async () => {
  const nf = require('../index.js');
  const crypto = require('node:crypto');
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => run(i + 1)));
  // Terminated mid-work: workers stopped while hashing on the pool.
  for (let i = 0; i < 4; i++) {
    const w = new Worker(SOURCE, { eval: true, workerData: { machineId: 20 + i } });
    setTimeout(() => w.terminate(), 5 + i);
    await new Promise((r) => w.once('exit', r));
  }
  results.push(...(await Promise.all([run(30), run(31)])));
  const all = new Set();
  for (const [i, r] of results.entries()) {
    const machineId = i < 8 ? i + 1 : 22 + i;
    const want = crypto.createHash('sha256').update(Buffer.alloc(1 << 20, machineId)).digest('hex');
    assert.equal(r.digest, want);
    assert.equal(r.sync, want);
    assert.match(r.uuid, /^[0-9a-f-]{36}$/);
    for (const n of r.nonces) {
      assert.ok(!all.has(n), `nonce ${n} twice`);
      all.add(n);
    }
  }
  assert.equal(all.size, results.length * 6000);
  assert.equal(new nf.NonceGenerator({ machineId: 0 }).counter(64).length, 8);
});
