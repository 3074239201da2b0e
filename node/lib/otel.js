'use strict';
// An OpenTelemetry bridge: the fleet's metric series (NonceGenerator#metrics(),
// the names every face exports: testdata/vectors/metrics.json) as observable
// instruments on a meter the caller gives (@opentelemetry/api's Meter, from
// whatever MeterProvider the service set up). No dependency: the meter is the
// caller's. The instruments are read when the SDK collects; nothing is added
// to the hot path.
const binding = require('./binding.js');
const { argType, argValue } = require('./errors.js');
const { checkOptions } = require('./check.js');

let defs = null;

/** Every family, in metrics.json's order: { name, type, labels, help }. */
function metricDefs() {
  if (defs === null) defs = Object.freeze(binding.metricDefs().map((d) => Object.freeze(d)));
  return defs;
}

/**
 * Registers `source`'s figures (a NonceGenerator, or anything with a
 * `metrics()` that returns the fleet's samples) on `meter`: one observable
 * counter or gauge per family, named as the fleet names it, each series with
 * `options.attributes` (string values: a service's own, such as `service` or
 * `pod`) beside its labels. Returns `{ unregister() }`.
 */
function registerMetrics(meter, source, options = {}) {
  checkOptions(meter, 'meter');
  for (const m of ['createObservableCounter', 'createObservableGauge', 'addBatchObservableCallback', 'removeBatchObservableCallback']) {
    if (typeof meter[m] !== 'function') throw argValue('meter', `must be an OpenTelemetry Meter (it has no ${m}())`);
  }
  if (source === null || typeof source !== 'object' || typeof source.metrics !== 'function') {
    throw argType('source', 'an object with a metrics() method (a NonceGenerator)', source);
  }
  checkOptions(options, 'options');
  const attributes = options.attributes === undefined ? {} : options.attributes;
  if (attributes === null || typeof attributes !== 'object' || Array.isArray(attributes)) {
    throw argType('options.attributes', 'an object of strings', attributes);
  }
  for (const [k, v] of Object.entries(attributes)) {
    if (typeof v !== 'string') throw argValue('options.attributes', `must hold strings only (${k} does not)`, v);
  }
  const instruments = new Map();
  for (const d of metricDefs()) {
    const opts = { description: d.help };
    instruments.set(d.name, d.type === 'counter' ? meter.createObservableCounter(d.name, opts) : meter.createObservableGauge(d.name, opts));
  }
  const observables = [...instruments.values()];
  const callback = (result) => {
    for (const s of source.metrics()) {
      const instrument = instruments.get(s.name);
      if (instrument !== undefined) result.observe(instrument, s.value, { ...attributes, ...s.labels });
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  let registered = true;
  return {
    unregister() {
      if (registered) meter.removeBatchObservableCallback(callback, observables);
      registered = false;
    },
  };
}

module.exports = { registerMetrics, metricDefs };
