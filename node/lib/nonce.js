'use strict';
// NonceGenerator: counter, sortable and encrypted nonces, leased or not.

const { EventEmitter } = require('node:events');
const diagnosticsChannel = require('node:diagnostics_channel');
const { performance } = require('node:perf_hooks');
const binding = require('./binding.js');
const { argType, argValue, fromNative, native } = require('./errors.js');
const { checkBuffer, checkString, checkOptions, checkInteger, checkKey } = require('./check.js');
const { leaseOptions, hold, forget, LEASED, LEASE_STATES } = require('./lease.js');

const KINDS = ['counter', 'sortable', 'encrypted'];

// Node's convention for a library's events (diagnostics_channel): each change
// of a lease's state is published here as { event, machineId, reason } —
// 'lapsed', 'resumed', 'lost' (with its reason) — beside the generator's own
// events, so that a process's telemetry can watch every lease without a
// reference to each generator.
const leaseChannel = diagnosticsChannel.channel('nonceforge:lease');
const SIZES = [64, 96, 128];

// The number the addon takes for a kind and size: kind * 3 + size (see
// kind_bits in crates/nonceforge-node/src/lib.rs).
function nonceCode(kind, bits) {
  const k = KINDS.indexOf(kind);
  if (k === -1) {
    if (typeof kind !== 'string') throw argType('kind', 'of type string', kind);
    throw argValue('kind', "must be one of 'counter', 'sortable', 'encrypted'", kind);
  }
  const size = SIZES.indexOf(bits);
  if (size === -1) {
    if (typeof bits !== 'number') throw argType('bits', 'of type number', bits);
    throw argValue('bits', 'must be one of 64, 96, 128', bits);
  }
  return k * 3 + size;
}


// Nonces are taken from the core a batch at a time (one atomic reservation per
// batch) and handed out one by one: a napi call per nonce would cost more
// than the nonce. A batch is at most BATCH nonces.
//
// Sortable nonces carry the millisecond they were made in, so a batch of them
// is handed out only while Date.now() still reads the millisecond of its first
// nonce; a new batch starts when it does not. Batches start at one nonce and
// double while a batch runs out within its millisecond, so a caller taking one
// a millisecond pays for one, and one taking thousands pays for a napi call per
// BATCH. Where the wall clock and the generator's (monotonic) clock disagree,
// every call makes a fresh batch of one: slower, never staler.
const BATCH = 256;
const DEFAULT_EPOCH_UNIX_MS = binding.defaultEpochUnixMs(); // the core's (2025-01-01T00:00:00Z)

// The next nonce of a pool into `out`. A loop, not Buffer#copy: for 8–16 bytes
// the copy's call into C++ costs about as much as the allocation and the loop
// together (bench/RESULTS.md, "The measurements behind the code").
function take(pool, out, size) {
  const b = pool.buffer;
  const at = pool.at;
  for (let i = 0; i < size; i++) out[i] = b[at + i];
  pool.at = at + size;
}

// The layout: 'standard' (undefined: the default) or 'wide' (16-bit machine
// ids, 96- and 128-bit nonces only).
function checkLayout(layout, name) {
  if (layout === undefined) return 'standard';
  checkString(layout, name);
  if (layout !== 'standard' && layout !== 'wide') {
    throw argValue(name, "must be 'standard' (9-bit machine ids, NoNoncense's) or 'wide' (16-bit machine ids, 96 and 128 bits)", layout);
  }
  return layout;
}

function checkGeneratorOptions(options, name) {
  const { key, epochUnixMs } = options;
  if (key !== undefined) checkKey(key, `${name}.key`);
  if (epochUnixMs !== undefined) checkInteger(epochUnixMs, `${name}.epochUnixMs`, 0, Number.MAX_SAFE_INTEGER);
}


// Leases the lowest free id, or exactly a pod's index (options.idFrom): when
// another member holds that id (the pod this one replaces, or another with
// the same index), says so once — a process warning and a 'waiting' message
// on the lease channel — then waits for it (options.idWait at most).
async function acquire(url, opts) {
  if (opts.idFrom === undefined || opts.idWaitMs === 0) return binding.leaseAcquire(url, opts);
  try {
    return await binding.leaseAcquire(url, { ...opts, idWaitMs: 0 });
  } catch (error) {
    if (!/^ERR_NONCEFORGE_LEASE_ALL_TAKEN\b/.test(String(error && error.message))) throw error;
  }
  const machineId = binding.podIndex(opts.idFrom, opts.layout);
  process.emitWarning(
    `machine id ${machineId} (from ${opts.idFrom}) is held by another member — the pod this one replaces, or another with the same index: waiting for it to be released or to lapse; nothing is issued meanwhile`,
    { code: 'NONCEFORGE_LEASE_WAITING' }
  );
  if (leaseChannel.hasSubscribers) leaseChannel.publish({ event: 'waiting', machineId, reason: null });
  return binding.leaseAcquire(url, opts);
}

class NonceGenerator extends EventEmitter {
  /**
   * @param {{machineId: number, key?: Buffer, epochUnixMs?: number, layout?: 'standard' | 'wide'}} options
   */
  constructor(options, leased) {
    super();
    if (leased === LEASED) {
      // From NonceGenerator.lease: the same constructor, so that leased and
      // unleased generators share one object shape (and call sites stay
      // monomorphic: a leased generator built with Object.create ran 15-25%
      // slower on encrypted nonces).
      this._init(options.nativeGenerator, options.epochUnixMs, options.handle);
      this._gate = options.gate;
      return;
    }
    checkOptions(options, 'options');
    const layout = checkLayout(options.layout, 'options.layout');
    checkInteger(options.machineId, 'options.machineId', 0, layout === 'wide' ? 65535 : 511);
    checkGeneratorOptions(options, 'options');
    this._init(native('options', () => new binding.Generator(options.machineId, options.key, options.epochUnixMs, layout)), options.epochUnixMs, null);
  }

  _init(nativeGenerator, epochUnixMs, lease) {
    this._native = nativeGenerator;
    this._handle = nativeGenerator.handle();
    this._epoch = epochUnixMs === undefined ? DEFAULT_EPOCH_UNIX_MS : epochUnixMs;
    this._pools = new Map();
    // Leased: pooled nonces are handed out only while the lease's gate is
    // down (an Int32Array the lease's watcher thread raises 50 ms before the
    // local deadline; then each nonce comes from the core, which reads its
    // clock). Where the runtime has no shared external buffers (the gate is
    // null), a pool is used until the deadline as it stood when it was filled
    // (performance.now() ms).
    this._lease = lease;
    this._gate = null;
  }

  /**
   * A generator whose machine id is leased from `url` (postgres://…,
   * redis://…, etcd://host:port[,host:port…]) through the Rust lease crate:
   * the same records and rules as the CLI's --lease. Resolves once an id is
   * held. Past the lease's local deadline every call throws
   * ERR_NONCEFORGE_DISABLED; the generator emits 'lapsed' (renewals go on, and
   * 'resumed' if the store still has the id for us) and 'lost' (for good).
   */
  static async lease(url, options = {}) {
    checkString(url, 'url');
    checkOptions(options, 'options');
    // The namespace records the layout and refuses a member of the other one.
    checkLayout(options.layout, 'options.layout');
    const opts = leaseOptions(options);
    checkGeneratorOptions(options, 'options');
    let handle;
    try {
      handle = await acquire(url, opts);
    } catch (error) {
      throw fromNative(error, 'url');
    }
    return leasedGenerator(handle, options);
  }

  /** The lease of a leased generator (null otherwise): id, token, floor, holder, store, state. */
  get lease() {
    const h = this._lease;
    if (h === null) return null;
    const [state, deadlineInMs] = h.state();
    const [renewals, failedRenewals, lastError] = h.renewals();
    return {
      renewals,
      failedRenewals,
      lastError,
      machineId: h.machineId,
      token: h.token,
      floorUnixMs: h.floorUnixMs,
      hasHistory: h.hasHistory,
      startedFast: h.startedFast,
      lostReason: h.lostReason(),
      holder: h.holder,
      backend: h.backend,
      state: LEASE_STATES[state],
      deadlineInMs,
    };
  }

  /** Stops issuing, records the last timestamp as the id's floor and frees the id. */
  async release() {
    const h = this._lease;
    if (h === null) throw argValue('this', 'must be a leased generator (NonceGenerator.lease)');
    forget(h);
    this._pools.clear();
    try {
      await h.release();
    } catch (error) {
      throw fromNative(error, 'this');
    }
  }

  // `count` nonces of `code` from the core, its errors made Node's.
  _fill(code, count) {
    try {
      return this._native.fill(code, count);
    } catch (error) {
      throw fromNative(error, 'kind');
    }
  }

  // Without a gate: whether a leased generator may hand out `pool`'s nonces
  // (or fill one): the deadline as of its refill has not passed. (With a gate,
  // the callers read it inline.)
  _clockOpen(pool) {
    return pool === undefined || performance.now() < pool.until;
  }

  // The deadline a new pool may be used until (0: unleased, never checked).
  _until() {
    if (this._lease === null || this._gate !== null) return 0;
    const [state, deadlineInMs] = this._lease.state();
    return state === 0 ? performance.now() + deadlineInMs : 0;
  }

  get machineId() {
    return this._native.machineId;
  }

  get layout() {
    return this._native.layout;
  }

  /** One nonce of `kind` ('counter' | 'sortable' | 'encrypted') and `bits` (64 | 96 | 128), as a Buffer. */
  next(kind = 'counter', bits = 96) {
    const code = nonceCode(kind, bits);
    const size = bits / 8;
    if (kind === 'sortable') return this._sortable(code, size);
    let pool = this._pools.get(code);
    // The gate is read with a plain load, not Atomics.load (a tenth of a
    // counter(96) call: bench/RESULTS.md, "The measurements behind the code"):
    // every call stores
    // into a new Buffer (take), which the compiler must assume may alias any
    // typed array, so the load is redone each call, never hoisted out of a
    // caller's loop (lease.test.js checks it in a synchronous loop).
    if (this._lease !== null && (this._gate !== null ? this._gate[0] !== 0 : !this._clockOpen(pool))) {
      // Near or past the deadline: one nonce at a time from the core.
      this._pools.delete(code);
      return this._fill(code, 1);
    }
    if (pool === undefined || pool.at === pool.buffer.length) {
      pool = { buffer: this._fill(code, BATCH), at: 0, until: this._until() };
      this._pools.set(code, pool);
    }
    const out = Buffer.allocUnsafe(size);
    take(pool, out, size);
    return out;
  }

  _sortable(code, size) {
    const now = Date.now();
    let pool = this._pools.get(code);
    if (this._lease !== null && pool !== undefined && (this._gate !== null ? this._gate[0] !== 0 : !this._clockOpen(pool))) {
      this._pools.delete(code);
      pool = undefined;
    }
    const out = Buffer.allocUnsafe(size);
    if (pool !== undefined && pool.at < pool.buffer.length && pool.ms === now) {
      take(pool, out, size);
      return out;
    }
    let n = 1;
    if (pool !== undefined) {
      const used = pool.at / size;
      // Ran out within its millisecond: double; outlived it: what was used.
      n = pool.at === pool.buffer.length && pool.ms === now ? Math.min(2 * used, BATCH) : Math.max(1, used);
    }
    const until = this._until();
    if (n === 1) {
      try {
        binding.nextNonceInto(this._handle, code, out);
      } catch (error) {
        throw fromNative(error, 'kind');
      }
      this._pools.set(code, { buffer: out, at: size, ms: now, until });
      return out;
    }
    const buffer = this._fill(code, n);
    // The millisecond of its first nonce: the top 42 bits.
    const ms = Math.floor(buffer.readUIntBE(0, 6) / 64) + this._epoch;
    buffer.copy(out, 0, 0, size);
    this._pools.set(code, { buffer, at: size, ms, until });
    return out;
  }

  counter(bits = 96) {
    return this.next('counter', bits);
  }

  sortable(bits = 128) {
    return this.next('sortable', bits);
  }

  encrypted(bits = 128) {
    return this.next('encrypted', bits);
  }

  /** One nonce as an unsigned big-endian BigInt. */
  bigint(kind = 'counter', bits = 64) {
    const b = this.next(kind, bits);
    return bits === 64 ? b.readBigUInt64BE(0) : BigInt('0x' + b.toString('hex'));
  }

  /** `count` nonces back to back in one new Buffer (one reservation). */
  many(kind, bits, count) {
    const code = nonceCode(kind, bits);
    this._pools.delete(code); // sortable: what follows must sort after what came before
    checkInteger(count, 'count', 0, 2 ** 28);
    return this._fill(code, count);
  }

  /** Fill `out` (a whole number of nonces) in place; returns it. */
  fillInto(kind, bits, out) {
    const code = nonceCode(kind, bits);
    this._pools.delete(code); // sortable: what follows must sort after what came before
    checkBuffer(out, 'out');
    native('out', () => this._native.fillInto(code, out));
    return out;
  }

  /** The counter form of an encrypted nonce. */
  decrypt(nonce) {
    checkBuffer(nonce, 'nonce');
    return native('nonce', () => this._native.decrypt(nonce));
  }

  /** `{ unixMs, machineId, counter }` of a counter or sortable nonce. */
  decompose(nonce) {
    checkBuffer(nonce, 'nonce');
    const [unixMs, machineId, counter] = native('nonce', () => this._native.decompose(nonce));
    return { unixMs, machineId, counter };
  }

  /** Stop issuing (every call throws) until enable(); drops nonces already reserved. */
  disable() {
    this._native.disable();
    this._pools.clear();
  }

  enable() {
    this._native.enable();
  }

  get enabled() {
    return this._native.enabled;
  }

  /**
   * The generator's figures — and a leased generator's lease's — as samples of
   * the fleet's metric series ({ name, type, labels, value }; the names every
   * face exports: testdata/vectors/metrics.json, docs/operations.md). Feed them
   * to an exporter (prom-client, OpenTelemetry's observable instruments) from
   * its collect callback. Counters count since the generator was built; a pool
   * of nonces counts when it is filled.
   */
  metrics() {
    const out = this._native.samples();
    const h = this._lease;
    if (h !== null) out.push(...h.samples());
    return out;
  }

  /**
   * Whether the generator issues now — what a readiness probe returns:
   * { ready: true, reason: null }, or { ready: false, reason } (disabled, or
   * the lease starting, lapsed, lost or released).
   */
  readiness() {
    if (this._lease !== null) {
      const reason = this._lease.readiness();
      if (reason !== null) return { ready: false, reason };
    }
    if (!this._native.enabled) return { ready: false, reason: 'disabled' };
    return { ready: true, reason: null };
  }
}


// A generator on a held lease (from NonceGenerator.lease or a LeasePool):
// attached to it, reporting its changes, released with it.
async function leasedGenerator(handle, options) {
  let nativeGenerator;
  try {
    nativeGenerator = binding.Generator.leased(handle, options.key, options.epochUnixMs);
  } catch (error) {
    await handle.release().catch(() => {});
    throw fromNative(error, 'options');
  }
  // The watcher reports to the generator made just below (its first
  // report comes from another thread, after this function has returned).
  let generator;
  let last = 0;
  const gate = handle.watch((state) => {
    if (state !== 0) generator._pools.clear();
    let event = null;
    let reason = null;
    if (state === 1) event = 'lapsed';
    else if (state === 2) [event, reason] = ['lost', handle.lostReason()];
    else if (state === 0 && last === 1) event = 'resumed';
    last = state;
    if (event === null) return;
    if (event === 'lost') generator.emit('lost', reason);
    else generator.emit(event);
    if (leaseChannel.hasSubscribers) leaseChannel.publish({ event, machineId: handle.machineId, reason });
  });
  generator = new NonceGenerator(
    { nativeGenerator, epochUnixMs: options.epochUnixMs, handle, gate: gate === null ? null : new Int32Array(gate) },
    LEASED,
  );
  hold(handle);
  return generator;
}

/**
 * Many leases of one namespace over a few shared store connections and one
 * native thread: for a process that holds many machine ids (a worker, tenant
 * or shard each), where a connection a lease is more than a PostgreSQL server
 * allows. Each generator it gives is a leased one like NonceGenerator.lease's.
 */
class LeasePool {
  constructor(handle, generatorOptions, token) {
    if (token !== LEASED) throw new TypeError('use LeasePool.connect(url, options)');
    this._handle = handle;
    this._generatorOptions = generatorOptions;
  }

  /**
   * Connects to the store at `url` (checked now) for leases with `options`
   * (NonceGenerator.lease's, without idFrom), keeping up to `options.conns`
   * connections (0 or undefined: the lease crate's default, 8; at most 256).
   */
  static async connect(url, options = {}) {
    checkString(url, 'url');
    checkOptions(options, 'options');
    const { conns = 0, ...rest } = options;
    checkInteger(conns, 'options.conns', 0, 0xffffffff);
    checkLayout(rest.layout, 'options.layout');
    const opts = leaseOptions(rest);
    checkGeneratorOptions(rest, 'options');
    let handle;
    try {
      handle = await binding.leasePoolConnect(url, opts, conns);
    } catch (error) {
      throw fromNative(error, 'url');
    }
    return new LeasePool(handle, { key: rest.key, epochUnixMs: rest.epochUnixMs }, LEASED);
  }

  /**
   * A generator on the lowest free machine id, through the pool: resolves once
   * its generators may start. `options.key`, `options.epochUnixMs`: the
   * generator's (default: the pool's options').
   */
  async lease(options = {}) {
    checkOptions(options, 'options');
    checkGeneratorOptions(options, 'options');
    for (const k of Object.keys(options)) {
      if (k !== 'key' && k !== 'epochUnixMs') throw argValue(`options.${k}`, 'is not a generator option (key, epochUnixMs)');
    }
    let handle;
    try {
      handle = await this._handle.acquire();
    } catch (error) {
      throw fromNative(error, 'url');
    }
    return leasedGenerator(handle, { ...this._generatorOptions, ...options });
  }

  /** The most store connections the pool keeps. */
  get conns() {
    return this._handle.conns;
  }
}

module.exports = { NonceGenerator, LeasePool, KINDS, SIZES };
