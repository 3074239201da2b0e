'use strict';
// LeasePool on every store (started by the test): 30 leased generators over 2
// connections take the 30 ids of the range, each once; the 31st is refused;
// every lease renews on its own; a released id comes back through the pool;
// all nonces distinct; bad options are clear errors.
const test = require('node:test');
const assert = require('node:assert');
const { LeasePool, NonceGenerator } = require('..');
const stores = require('./support/stores.js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const kind of stores.KINDS) {
  test(`a lease pool on ${kind}`, { timeout: 120000 }, async (t) => {
    const store = await stores.start(kind);
    t.after(() => stores.stop(store));
    const pool = await LeasePool.connect(store.url, { conns: 2, ids: '0-29', ttl: '2s', namespace: 'nodepool', layout: 'wide' });
    assert.equal(pool.conns, 2);
    // At once: each new id waits out the TTL and margin before it starts.
    const gens = await Promise.all(Array.from({ length: 30 }, () => pool.lease()));
    try {
      assert.deepEqual(gens.map((g) => g.machineId).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i));
      await assert.rejects(pool.lease(), { code: 'ERR_NONCEFORGE_LEASE_ALL_TAKEN' });
      const seen = new Set();
      for (const g of gens) {
        assert.equal(g.layout, 'wide');
        const buf = g.many('counter', 96, 200);
        for (let i = 0; i < buf.length; i += 12) seen.add(buf.subarray(i, i + 12).toString('hex'));
      }
      assert.equal(seen.size, 30 * 200);
      // Every lease renews on its own over the two connections.
      const t0 = Date.now();
      while (!gens.every((g) => g.lease.renewals >= 2 && g.lease.state === 'held')) {
        assert.ok(Date.now() - t0 < 30000, JSON.stringify(gens.map((g) => [g.machineId, g.lease.renewals, g.lease.state])));
        await sleep(50);
      }
      const freed = gens.splice(7, 1)[0];
      await freed.release();
      const again = await pool.lease();
      assert.equal(again.machineId, freed.machineId);
      gens.push(again);
    } finally {
      await Promise.all(gens.map((g) => g.release()));
    }
    // Released: another pool takes all 30.
    const other = await LeasePool.connect(store.url, { conns: 1, ids: '0-29', ttl: '2s', namespace: 'nodepool', layout: 'wide' });
    const taken = await Promise.all(Array.from({ length: 30 }, () => other.lease()));
    await Promise.all(taken.map((g) => g.release()));
    assert.ok(taken.every((g) => g instanceof NonceGenerator));
  });
}

test('a lease pool: bad options are clear errors', async () => {
  await assert.rejects(LeasePool.connect('redis://127.0.0.1:1', { conns: 257 }), { code: 'ERR_INVALID_ARG_VALUE', message: /conns = 257/ });
  await assert.rejects(LeasePool.connect('redis://127.0.0.1:1', { conns: -1 }), { code: 'ERR_OUT_OF_RANGE', message: /options\.conns/ });
  await assert.rejects(LeasePool.connect('redis://127.0.0.1:1', { idFrom: 'env:POD_INDEX' }), { code: 'ERR_INVALID_ARG_VALUE', message: /options\.idFrom/ });
  await assert.rejects(LeasePool.connect('redis://127.0.0.1:1', { nope: 1 }), { code: 'ERR_INVALID_ARG_VALUE', message: /options\.nope/ });
  await assert.rejects(LeasePool.connect('redis://127.0.0.1:1', { connectTimeout: '300ms' }), { code: 'ERR_NONCEFORGE_LEASE_UNREACHABLE' });
  assert.throws(() => new LeasePool(), TypeError);
});
