'use strict';
// metrics(), readiness() and the diagnostics_channel 'nonceforge:lease': the
// fleet's metric names (testdata/vectors/metrics.json, the core's mapping),
// exact counts, and a leased generator on a real Redis through its start wait,
// renewals and an outage that lapses it.
const test = require('node:test');
const assert = require('node:assert/strict');
const diagnosticsChannel = require('node:diagnostics_channel');
const fs = require('node:fs');
const path = require('node:path');
const stores = require('./support/stores.js');
const { NonceGenerator } = require('../index.js');

const FLEET = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'vectors', 'metrics.json'), 'utf8'));
const DEFS = new Map(FLEET.metrics.map((m) => [m.name, m]));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The value of `name` whose labels include `labels`.
function value(samples, name, labels = {}) {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}: ${found.length} series`);
  return found[0].value;
}

function checkNames(samples) {
  for (const s of samples) {
    const def = DEFS.get(s.name);
    assert.ok(def, `${s.name} is not a fleet metric`);
    assert.equal(s.type, def.type, s.name);
    assert.deepEqual(Object.keys(s.labels).sort(), [...def.labels].sort(), s.name);
  }
}

test('metrics: an unleased generator, its counts exact, its readiness', () => {
  const gen = new NonceGenerator({ machineId: 9 });
  gen.many('counter', 96, 1000);
  gen.many('sortable', 64, 10);
  const samples = gen.metrics();
  checkNames(samples);
  assert.equal(value(samples, 'nonceforge_nonces_issued_total', { kind: 'counter', bits: '96' }), 1000);
  assert.equal(value(samples, 'nonceforge_nonces_issued_total', { kind: 'sortable', bits: '64' }), 10);
  assert.equal(value(samples, 'nonceforge_generator_enabled'), 1);
  assert.ok(!samples.some((s) => s.name.startsWith('nonceforge_lease_')));
  assert.deepEqual(gen.readiness(), { ready: true, reason: null });
  gen.disable();
  assert.deepEqual(gen.readiness(), { ready: false, reason: 'disabled' });
  assert.throws(() => gen.many('counter', 96, 1), { code: 'ERR_NONCEFORGE_DISABLED' });
  assert.equal(value(gen.metrics(), 'nonceforge_refusals_total', { reason: 'disabled' }), 1);
  assert.equal(value(gen.metrics(), 'nonceforge_generator_enabled'), 0);
});

test('metrics: a leased generator through its start, renewals and an outage', { timeout: 60000 }, async () => {
  const store = await stores.start('redis');
  const heard = [];
  const listener = (message) => heard.push(message);
  diagnosticsChannel.subscribe('nonceforge:lease', listener);
  let stopped = false;
  try {
    const gen = await NonceGenerator.lease(store.url, { ttl: 2000, renewEvery: 200 });
    // A new namespace: the start waits out the TTL and margin (building the
    // generator waits for it, so by now it is over or nearly).
    const first = gen.readiness();
    if (!first.ready) assert.match(first.reason, /^starting: the first value in \d+ ms/);
    const t = Date.now();
    while (!gen.readiness().ready || value(gen.metrics(), 'nonceforge_lease_renewals_total') < 2) {
      assert.ok(Date.now() - t < 10000, JSON.stringify(gen.readiness()));
      await sleep(20);
    }
    gen.many('counter', 128, 100);
    let samples = gen.metrics();
    checkNames(samples);
    assert.equal(value(samples, 'nonceforge_nonces_issued_total', { kind: 'counter', bits: '128' }), 100);
    assert.equal(value(samples, 'nonceforge_lease_state', { state: 'held' }), 1);
    assert.equal(value(samples, 'nonceforge_lease_ready'), 1);
    assert.equal(value(samples, 'nonceforge_lease_machine_id'), gen.machineId);
    assert.equal(value(samples, 'nonceforge_lease_token'), Number(gen.lease.token));
    assert.ok(value(samples, 'nonceforge_deadline_headroom_seconds') > 0);
    assert.ok(value(samples, 'nonceforge_lease_start_wait_seconds') >= 2);

    // The store goes away: the lease lapses, the channel hears it.
    const lapsed = new Promise((resolve) => gen.once('lapsed', resolve));
    stores.stop(store);
    stopped = true;
    // (the watcher's callback is weak: a timer keeps the loop alive meanwhile)
    const timer = setTimeout(() => {}, 10000);
    await lapsed;
    clearTimeout(timer);
    assert.deepEqual(heard, [{ event: 'lapsed', machineId: gen.machineId, reason: null }]);
    assert.deepEqual(gen.readiness(), { ready: false, reason: 'lapsed: no renewal reached the store before the deadline' });
    samples = gen.metrics();
    assert.equal(value(samples, 'nonceforge_lease_state', { state: 'lapsed' }), 1);
    assert.equal(value(samples, 'nonceforge_lease_lapses_total'), 1);
    assert.ok(
      value(samples, 'nonceforge_lease_renewal_failures_total', { failure: 'unreachable' }) +
        value(samples, 'nonceforge_lease_renewal_failures_total', { failure: 'timeout' }) >= 1,
    );
    assert.throws(() => gen.many('counter', 128, 1), { code: 'ERR_NONCEFORGE_DISABLED' });
    assert.equal(value(gen.metrics(), 'nonceforge_refusals_total', { reason: 'deadline' }), 1);
    await assert.rejects(gen.release());
  } finally {
    diagnosticsChannel.unsubscribe('nonceforge:lease', listener);
    if (!stopped) stores.stop(store);
  }
});

// A StatefulSet: two pods with the same index (the downward API's variable)
// on one real Redis. The second waits — saying so, once — while the first
// holds the id, and gets it only when the first has released it: never both
// issuing, and no value repeated.
test('idFrom: two pods with one index take turns, and no value repeats', async () => {
  const store = await stores.start('redis');
  const heard = [];
  const listener = (message) => heard.push(message);
  diagnosticsChannel.subscribe('nonceforge:lease', listener);
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  process.env.NF_TEST_POD_NAME = 'nonces-3';
  try {
    const options = { idFrom: 'env:NF_TEST_POD_NAME', ttl: '1s', namespace: 'pods' };
    const a = await NonceGenerator.lease(store.url, options);
    assert.equal(a.machineId, 3);
    const seen = new Set();
    const draw = (gen, n) => {
      const buf = gen.many('counter', 96, n);
      assert.equal(buf.length, 12 * n);
      for (let i = 0; i < buf.length; i += 12) {
        const hex = buf.subarray(i, i + 12).toString('hex');
        assert.ok(!seen.has(hex), `repeated ${hex}`);
        seen.add(hex);
      }
    };
    draw(a, 1000);
    let bReady = false;
    const b = NonceGenerator.lease(store.url, options).then((gen) => {
      bReady = true;
      return gen;
    });
    // The second pod says it waits, and does.
    const t = Date.now();
    while (!heard.some((m) => m.event === 'waiting')) {
      assert.ok(Date.now() - t < 10000, 'no waiting message');
      await sleep(20);
    }
    assert.deepEqual(heard.find((m) => m.event === 'waiting'), { event: 'waiting', machineId: 3, reason: null });
    await sleep(300);
    assert.equal(bReady, false, 'the second pod got the id while the first held it');
    draw(a, 1000);
    await a.release();
    assert.throws(() => a.many('counter', 96, 1), { code: 'ERR_NONCEFORGE_DISABLED' });
    const second = await b;
    assert.equal(second.machineId, 3);
    draw(second, 1000);
    assert.equal(warnings.filter((w) => w.code === 'NONCEFORGE_LEASE_WAITING').length, 1);
    await second.release();
    // Bad sources are refused by the lease crate's rule, naming the option.
    await assert.rejects(NonceGenerator.lease(store.url, { idFrom: 'pod-index' }), { code: 'ERR_INVALID_ARG_VALUE', message: /options\.idFrom/ });
    await assert.rejects(NonceGenerator.lease(store.url, { idFrom: 'hostname', ids: 3 }), { code: 'ERR_INVALID_ARG_VALUE' });
    await assert.rejects(NonceGenerator.lease(store.url, { idWait: '1s' }), { code: 'ERR_INVALID_ARG_VALUE', message: /idFrom/ });
    // A StatefulSet of more than 512 pods: pod 40000 of a wide namespace
    // takes exactly id 40000; in the standard layout its index is refused.
    process.env.NF_TEST_POD_NAME = 'nonces-40000';
    await assert.rejects(NonceGenerator.lease(store.url, { idFrom: 'env:NF_TEST_POD_NAME', namespace: 'widepods' }), { code: 'ERR_INVALID_ARG_VALUE', message: /options\.idFrom.*511/ });
    const wide = await NonceGenerator.lease(store.url, { idFrom: 'env:NF_TEST_POD_NAME', layout: 'wide', ttl: '1s', namespace: 'widepods' });
    assert.equal(wide.machineId, 40000);
    assert.equal(wide.decompose(wide.counter(96)).machineId, 40000);
    await wide.release();
  } finally {
    delete process.env.NF_TEST_POD_NAME;
    process.off('warning', onWarning);
    diagnosticsChannel.unsubscribe('nonceforge:lease', listener);
    stores.stop(store);
  }
});
