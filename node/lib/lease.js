'use strict';
// The lease options of NonceGenerator.lease, and the leases this process holds.

const { argType, argValue, outOfRange } = require('./errors.js');
const { checkString, checkInteger } = require('./check.js');

// A duration as the CLI takes it: milliseconds as a number, or a string
// ('10s', '250ms', '2m', '1h', '1.5' seconds) read by the lease crate — one
// parser for every face.
function duration(value, name) {
  let ms;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    try {
      ms = binding().parseLeaseDuration(value);
    } catch (error) {
      throw argValue(name, ruleOf(error, "must be a duration: milliseconds, or a string like '10s', '250ms', '2m', '1h'"), value);
    }
  } else {
    throw argType(name, 'of type number or string', value);
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > 2 ** 32 - 1) throw outOfRange(name, '>= 0 ms and < 2^32 ms', value);
  return Math.round(ms);
}

// `what`, and the lease crate's rule from a parse error of the addon
// ("ERR_INVALID_ARG_VALUE: <rule>").
function ruleOf(error, what) {
  const m = /ERR_INVALID_ARG_VALUE: (.*)$/s.exec(String(error && error.message));
  return m === null ? what : `${what} (${m[1]})`;
}

// The addon, loaded when first needed.
function binding() {
  return require('./binding.js');
}

// The lease options of NonceGenerator.lease, with the CLI's names; what is
// left out takes the lease crate's default; the lease crate checks the rules between them (TTL 1 s..1 h,
// renewal and margin against the TTL) and names the option that breaks one.
function leaseOptions(options) {
  const known = new Set(['ttl', 'renewEvery', 'margin', 'connectTimeout', 'ids', 'idFrom', 'idWait', 'namespace', 'holder', 'pgSchema', 'fastStart', 'key', 'epochUnixMs', 'layout']);
  for (const k of Object.keys(options)) {
    if (!known.has(k)) throw argValue(`options.${k}`, `is not a lease option (${[...known].join(', ')})`);
  }
  // The layout's ids: 0..511, or 0..65535 for 'wide' (checked by the caller).
  const layout = options.layout === undefined ? 'standard' : options.layout;
  const top = layout === 'wide' ? 65535 : 511;
  let first = 0;
  let last = top;
  const { ids } = options;
  if (typeof ids === 'number') {
    checkInteger(ids, 'options.ids', 0, top);
    first = last = ids;
  } else if (typeof ids === 'string') {
    try {
      [first, last] = binding().parseLeaseIds(ids, layout);
    } catch (error) {
      throw argValue('options.ids', ruleOf(error, "must be 'FIRST-LAST' or one id"), ids);
    }
  } else if (Array.isArray(ids) && ids.length === 2) {
    [first, last] = ids;
    checkInteger(first, 'options.ids[0]', 0, top);
    checkInteger(last, 'options.ids[1]', 0, top);
  } else if (ids !== undefined) {
    throw argType('options.ids', "a number, a [first, last] array or a 'FIRST-LAST' string", ids);
  }
  if (first > top || last > top || first > last) throw outOfRange('options.ids', `a range within 0..${top}, first <= last`, ids);
  const { namespace, holder, pgSchema, fastStart, idFrom } = options;
  // A StatefulSet pod's index, leased exactly: the source's syntax is the lease crate's.
  if (idFrom !== undefined) {
    checkString(idFrom, 'options.idFrom');
    if (ids !== undefined) throw argValue('options.idFrom', 'cannot be given with options.ids (the id is the pod index)', idFrom);
  } else if (options.idWait !== undefined) {
    throw argValue('options.idWait', 'needs options.idFrom (it is how long to wait for the pod index\'s id)', options.idWait);
  }
  if (namespace !== undefined) checkString(namespace, 'options.namespace');
  if (holder !== undefined) checkString(holder, 'options.holder');
  if (pgSchema !== undefined) checkString(pgSchema, 'options.pgSchema');
  // Its values are checked by the lease crate (one owner of the rule).
  if (fastStart !== undefined) checkString(fastStart, 'options.fastStart');
  // What is left out gets the lease crate's default (every default stated there once).
  const ms = (name) => (options[name] === undefined ? undefined : duration(options[name], `options.${name}`));
  return {
    ttlMs: ms('ttl'),
    renewEveryMs: ms('renewEvery'),
    marginMs: ms('margin'),
    connectTimeoutMs: ms('connectTimeout'),
    idsFirst: ids === undefined ? undefined : first,
    idsLast: ids === undefined ? undefined : last,
    namespace,
    holder,
    pgSchema,
    fastStart,
    layout,
    idFrom,
    idWaitMs: ms('idWait'),
  };
}

// Leases held by this process, released when it exits normally.
const HELD = new Set();
// The constructor's second argument from NonceGenerator.lease (module-private).
const LEASED = Symbol('leased');
let exitHook = false;
function releaseAtExit() {
  for (const handle of HELD) {
    try {
      handle.releaseSync();
    } catch {
      // The process is going away; the store frees the id after the TTL.
    }
  }
  HELD.clear();
}


// Remembers a lease handle until it is released or the process exits normally.
function hold(handle) {
  HELD.add(handle);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', releaseAtExit);
  }
}

function forget(handle) {
  HELD.delete(handle);
}

const LEASE_STATES = ['held', 'lapsed', 'lost', 'released'];

module.exports = { duration, leaseOptions, hold, forget, LEASED, LEASE_STATES };
