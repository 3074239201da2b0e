'use strict';
// The wide layout (16-bit machine ids): the wide rows of
// testdata/vectors/nonces.json (written by an independent Python
// implementation, read by Rust, Go, the CLI, Python and Elixir too), nonces
// made at a machine id above 9 bits, and what is refused.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const nf = require('..');

// Counters go past 2^53: read them as text.
const doc = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'vectors', 'nonces.json'), 'utf8')
    .replace(/"counter": (\d+)/g, '"counter": "$1"')
);

test('wide layout: every wide layout row decomposes to its fields', () => {
  const g = new nf.NonceGenerator({ machineId: 1, layout: 'wide', epochUnixMs: 0 });
  assert.equal(g.layout, 'wide');
  assert.ok(doc.wide.layout.length >= 12);
  for (const v of doc.wide.layout) {
    assert.deepStrictEqual(
      g.decompose(Buffer.from(v.hex, 'hex')),
      { unixMs: v.timestamp_ms, machineId: v.machine_id, counter: BigInt(v.counter) },
      v.hex
    );
  }
  // The same bytes read in the standard layout mean something else.
  const std = new nf.NonceGenerator({ machineId: 1, epochUnixMs: 0 });
  assert.equal(std.layout, 'standard');
  const row = doc.wide.layout.find((v) => v.machine_id === 50000 && v.bits === 96);
  assert.notStrictEqual(std.decompose(Buffer.from(row.hex, 'hex')).machineId, 50000);
});

test('wide layout: a generator at machine id 65535 makes 96- and 128-bit nonces of every kind, distinct within each kind and size, and refuses 64 bits', () => {
  const g = new nf.NonceGenerator({ machineId: 65535, layout: 'wide', key: Buffer.alloc(32, 7) });
  // Distinct within one kind and size: a counter and a sortable nonce of one
  // size may share a value (the crate's promise: one kind per key).
  for (const bits of [96, 128]) {
    for (const kind of ['counter', 'sortable', 'encrypted']) {
      const seen = new Set();
      const batch = g.many(kind, bits, 1000);
      for (let i = 0; i < 1000; i++) {
        const one = g.next(kind, bits);
        for (const n of [one, batch.subarray(i * bits / 8, (i + 1) * bits / 8)]) {
          seen.add(n.toString('hex'));
          if (kind !== 'encrypted') assert.equal(g.decompose(n).machineId, 65535);
        }
      }
      assert.equal(seen.size, 2000, `${kind}/${bits}`);
    }
  }
  for (const f of [() => g.counter(64), () => g.sortable(64), () => g.encrypted(64), () => g.many('counter', 64, 3), () => g.next('sortable', 64), () => g.decompose(Buffer.alloc(8))]) {
    assert.throws(f, /the wide layout has no 64-bit nonces/);
  }
  assert.equal(g.enabled, true);
  assert.equal(g.counter(96).length, 12);
});

test('wide layout: bad options are clear errors', () => {
  assert.throws(() => new nf.NonceGenerator({ machineId: 600 }), { code: 'ERR_OUT_OF_RANGE', message: /"options\.machineId" is out of range\. It must be an integer >= 0 and <= 511\. Received 600/ });
  assert.throws(() => new nf.NonceGenerator({ machineId: 65536, layout: 'wide' }), { code: 'ERR_OUT_OF_RANGE', message: /<= 65535\. Received 65536/ });
  assert.throws(() => new nf.NonceGenerator({ machineId: 1, layout: 'Wide' }), { code: 'ERR_INVALID_ARG_VALUE', message: /'options\.layout' must be 'standard' .* or 'wide'/ });
  assert.throws(() => new nf.NonceGenerator({ machineId: 1, layout: 16 }), { code: 'ERR_INVALID_ARG_TYPE', message: /"options\.layout" argument must be of type string/ });
});

test('wide layout: a lease of the wide layout on Redis; the namespace records it and refuses the other', { timeout: 60000 }, async (t) => {
  const stores = require('./support/stores.js');
  const store = await stores.start('redis');
  t.after(() => stores.stop(store));
  const opts = { layout: 'wide', namespace: 'widenode', ttl: 2000, connectTimeout: 30000 };
  const gs = await Promise.all([1, 2, 3].map(() => nf.NonceGenerator.lease(store.url, opts)));
  try {
    assert.equal(new Set(gs.map((g) => g.machineId)).size, 3);
    for (const g of gs) {
      assert.equal(g.layout, 'wide');
      assert.ok(g.machineId <= 65535);
      assert.equal(g.decompose(g.counter(96)).machineId, g.machineId);
      assert.throws(() => g.counter(64), /the wide layout has no 64-bit nonces/);
    }
    // A standard member of the wide namespace: refused, both layouts named.
    await assert.rejects(nf.NonceGenerator.lease(store.url, { namespace: 'widenode', ttl: 2000 }), {
      code: 'ERR_NONCEFORGE_LEASE_REFUSED',
      message: /holds members of the wide layout; this member asks for the standard layout/,
    });
    // Wide ids and ranges: in the wide layout's 0..65535 only.
    await assert.rejects(nf.NonceGenerator.lease(store.url, { ...opts, ids: '0-65536' }), { code: 'ERR_INVALID_ARG_VALUE', message: /within 0\.\.=65535 \(the wide layout\)/ });
    await assert.rejects(nf.NonceGenerator.lease(store.url, { ids: [0, 600] }), { code: 'ERR_OUT_OF_RANGE', message: /<= 511\. Received 600/ });
    const g = await nf.NonceGenerator.lease(store.url, { ...opts, ids: [60000, 60000] });
    assert.equal(g.machineId, 60000);
    await g.release();
  } finally {
    await Promise.all(gs.map((g) => g.release()));
  }
});
