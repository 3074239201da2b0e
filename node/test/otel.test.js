'use strict';
// nonceforge/otel: the fleet's series as OpenTelemetry observable instruments,
// read through the SDK's in-memory exporter; the families are metrics.json's;
// bad arguments are refused with Node's error codes.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const {
  MeterProvider,
  PeriodicExportingMetricReader,
  InMemoryMetricExporter,
  AggregationTemporality,
  DataPointType,
} = require('@opentelemetry/sdk-metrics');
const crypto = require('node:crypto');
const { NonceGenerator, SanitizedAead } = require('../index.js');
const { registerMetrics, metricDefs } = require('../otel.js');

const FLEET = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'vectors', 'metrics.json'), 'utf8'));

function setup() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: the test collects with forceFlush, never on a timer.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return { exporter, reader, provider, meter: provider.getMeter('test') };
}

// name → [{ attributes, value }] of the last export.
async function collect({ exporter, reader }) {
  exporter.reset();
  await reader.forceFlush();
  const out = new Map();
  for (const rm of exporter.getMetrics()) {
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        out.set(m.descriptor.name, { type: m.dataPointType, monotonic: m.isMonotonic, points: m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })) });
      }
    }
  }
  return out;
}

test('otel: metricDefs are metrics.json, in its order (metrics, then sanitizer_metrics)', () => {
  const defs = metricDefs();
  assert.deepEqual(
    defs.map((d) => ({ name: d.name, type: d.type, labels: [...d.labels], help: d.help })),
    [...FLEET.metrics, ...FLEET.sanitizer_metrics].map((m) => ({ name: m.name, type: m.type, labels: m.labels, help: m.help }))
  );
});

test('otel: the sanitizer\'s figures (SanitizedAead.metrics) through the SDK', async () => {
  const sdk = setup();
  registerMetrics(sdk.meter, { metrics: () => SanitizedAead.metrics() });
  const aead = new SanitizedAead('aes-256-gcm', crypto.randomBytes(32), { mode: 'random' });
  const nonce = crypto.randomBytes(12);
  aead.seal(nonce, Buffer.from('one'));
  assert.throws(() => aead.seal(nonce, Buffer.from('two')), { code: 'ERR_NONCE_REUSE' });
  const samples = SanitizedAead.metrics();
  for (const s of samples) assert.ok(FLEET.sanitizer_metrics.some((m) => m.name === s.name && m.type === s.type), s.name);
  const got = await collect(sdk);
  const reuse = got.get('nonceforge_sanitizer_refusals_total').points.find((p) => p.attributes.violation === 'reuse');
  assert.ok(reuse.value >= 1);
  assert.ok(got.get('nonceforge_sanitizer_seals_total').points[0].value >= 1);
  assert.ok(got.get('nonceforge_sanitizer_keys').points[0].value >= 1);
  assert.ok(got.get('nonceforge_sanitizer_memory_bytes').points[0].value > 0);
  await sdk.provider.shutdown();
});

test('otel: a generator\'s figures through the SDK, with the caller\'s attributes', async () => {
  const sdk = setup();
  const gen = new NonceGenerator({ machineId: 9 });
  const reg = registerMetrics(sdk.meter, gen, { attributes: { service: 'billing' } });
  gen.many('counter', 96, 1000);
  gen.many('sortable', 64, 10);
  let got = await collect(sdk);
  const issued = got.get('nonceforge_nonces_issued_total');
  assert.equal(issued.type, DataPointType.SUM);
  assert.equal(issued.monotonic, true);
  const point = (m, attrs) => got.get(m).points.find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
  assert.equal(point('nonceforge_nonces_issued_total', { kind: 'counter', bits: '96', service: 'billing' }).value, 1000);
  assert.equal(point('nonceforge_nonces_issued_total', { kind: 'sortable', bits: '64', service: 'billing' }).value, 10);
  assert.equal(issued.points.length, 6);
  assert.equal(got.get('nonceforge_generator_enabled').type, DataPointType.GAUGE);
  assert.equal(point('nonceforge_generator_enabled', { service: 'billing' }).value, 1);
  for (const name of got.keys()) assert.ok(FLEET.metrics.some((m) => m.name === name), name);
  gen.disable();
  assert.throws(() => gen.next('counter', 64), { code: 'ERR_NONCEFORGE_DISABLED' });
  got = await collect(sdk);
  assert.equal(point('nonceforge_generator_enabled', { service: 'billing' }).value, 0);
  assert.equal(point('nonceforge_refusals_total', { reason: 'disabled' }).value, 1);
  // Unregistered: the generator is no longer read (the SDK keeps the last values).
  reg.unregister();
  reg.unregister();
  gen.enable();
  gen.many('counter', 96, 5);
  got = await collect(sdk);
  const after = got.get('nonceforge_nonces_issued_total');
  assert.ok(after === undefined || after.points.every((p) => p.attributes.bits !== '96' || p.attributes.kind !== 'counter' || p.value === 1000));
  await sdk.provider.shutdown();
});

test('otel: bad arguments are refused with Node\'s codes', () => {
  const { meter } = setup();
  const gen = new NonceGenerator({ machineId: 9 });
  assert.throws(() => registerMetrics(null, gen), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => registerMetrics({ createObservableCounter() {} }, gen), { code: 'ERR_INVALID_ARG_VALUE', message: /addBatchObservableCallback|createObservableGauge/ });
  assert.throws(() => registerMetrics(meter, {}), { code: 'ERR_INVALID_ARG_TYPE', message: /source/ });
  assert.throws(() => registerMetrics(meter, gen, null), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => registerMetrics(meter, gen, { attributes: [] }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => registerMetrics(meter, gen, { attributes: { pod: 3 } }), { code: 'ERR_INVALID_ARG_VALUE', message: /pod/ });
});
