'use strict';
// NonceGenerator.lease against the real stores (PostgreSQL 15, Redis, etcd on
// loopback ports): eight Node processes at once get eight ids; a holder
// stopped (SIGSTOP) past its TTL issues nothing once continued; a holder
// killed with kill -9 frees its id after the TTL, and the next holder starts
// above its floor; every nonce of every process is distinct.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const stores = require('./support/stores.js');
const { NonceGenerator } = require('../index.js');

const HOLDER = path.join(__dirname, 'support', 'holder.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A holder process; `lines` collects what it prints, `id` resolves with its
// machine id and floor.
const CHILDREN = new Set();
test.after(() => {
  for (const child of CHILDREN) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

function holder(url, ids, ttl) {
  const child = spawn(process.execPath, [HOLDER, url, ids, String(ttl)], { stdio: ['pipe', 'pipe', 'inherit'] });
  CHILDREN.add(child);
  child.on('exit', () => CHILDREN.delete(child));
  const h = { child, lines: [], exited: new Promise((r) => child.on('exit', (code, signal) => r({ code, signal }))) };
  h.id = new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      h.lines.push(line);
      const m = /^id (\d+) (\d+)$/.exec(line);
      if (m) resolve({ machineId: Number(m[1]), floor: Number(m[2]) });
      if (line.startsWith('fail')) reject(new Error(line));
    });
    child.on('exit', () => reject(new Error(`holder exited before leasing: ${h.lines.join('\n')}`)));
  });
  h.nonces = () => h.lines.filter((l) => l.startsWith('n ')).flatMap((l) => l.split(' ').slice(2));
  h.stop = async () => {
    child.stdin.end();
    return h.exited;
  };
  return h;
}

// Leases machine id `id` as soon as the store frees it, before `deadline`.
async function takeWhenFree(url, id, deadline) {
  for (;;) {
    try {
      return await NonceGenerator.lease(url, { ids: id, ttl: 3000 });
    } catch (error) {
      assert.equal(error.code, 'ERR_NONCEFORGE_LEASE_ALL_TAKEN', error.message);
      assert.ok(Date.now() < deadline, `machine id ${id} was never freed`);
      await sleep(100);
    }
  }
}

function allDistinct(nonces) {
  const seen = new Set();
  for (const n of nonces) {
    assert.ok(!seen.has(n), `nonce ${n} issued twice`);
    seen.add(n);
  }
  return seen.size;
}

// The millisecond a counter-96 nonce (hex) carries, Unix ms.
function unixMsOf(generator, hex) {
  return generator.decompose(Buffer.from(hex, 'hex')).unixMs;
}

for (const kind of stores.KINDS) {
  test(`leases on ${kind}`, { timeout: 120000 }, async (t) => {
    const store = await stores.start(kind);
    t.after(() => stores.stop(store));
    const decoder = new NonceGenerator({ machineId: 0 });

    await t.test('eight processes at once get eight ids; release frees them; all nonces distinct', async () => {
      const hs = Array.from({ length: 8 }, () => holder(store.url, '0-511', 3000));
      const ids = await Promise.all(hs.map((h) => h.id));
      assert.equal(new Set(ids.map((i) => i.machineId)).size, 8, JSON.stringify(ids));
      // Every holder issues for a while (a loaded machine starts some late).
      for (let i = 0; i < 200 && hs.some((h) => h.lines.filter((l) => l.startsWith('n ')).length < 3); i++) await sleep(50);
      const results = await Promise.all(hs.map((h) => h.stop()));
      for (const [i, r] of results.entries()) assert.equal(r.code, 0, hs[i].lines.slice(-3).join('\n'));
      for (const h of hs) assert.ok(h.lines.includes('released'));
      const all = hs.flatMap((h) => h.nonces());
      assert.ok(all.length > 8 * 150, `${all.length} nonces`);
      allDistinct(all);
      // Released: the same ids are free again, and a new holder starts above the floor.
      const g = await NonceGenerator.lease(store.url, { ids: '0-7', ttl: 3000 });
      assert.ok(g.machineId <= 7);
      const mine = hs.find((_, i) => ids[i].machineId === g.machineId);
      const last = Math.max(...mine.nonces().filter((n) => n.length === 24).map((n) => unixMsOf(decoder, n)));
      assert.ok(g.lease.floorUnixMs >= last, `floor ${g.lease.floorUnixMs} below the last nonce ${last}`);
      assert.ok(unixMsOf(decoder, g.counter(96).toString('hex')) > g.lease.floorUnixMs);
      // With history, but by default not fast: a store that went back may not show every holder.
      assert.equal(g.lease.hasHistory, true);
      assert.equal(g.lease.startedFast, false);
      await g.release();
      // Declared fast: right above the floor.
      const f = await NonceGenerator.lease(store.url, { ids: '0-7', ttl: 3000, fastStart: 'declared' });
      assert.equal(f.lease.startedFast, f.lease.hasHistory);
      await f.release();
      assert.throws(() => g.counter(96), { code: 'ERR_NONCEFORGE_DISABLED' });
      assert.equal(g.lease.state, 'released');
    });

    await t.test('a holder stopped past its TTL issues nothing once continued, and learns it lost the id', async () => {
      const ttl = 1000;
      const a = holder(store.url, '9', ttl);
      const { machineId } = await a.id;
      assert.equal(machineId, 9);
      for (let i = 0; i < 100 && !a.lines.some((l) => l.startsWith('n ')); i++) await sleep(20);
      a.child.kill('SIGSTOP');
      const stoppedAt = Date.now();
      // The id is free after the TTL: another process takes it.
      const b = await takeWhenFree(store.url, 9, stoppedAt + ttl + 8000);
      const takenAt = Date.now();
      const bNonces = [];
      for (let i = 0; i < 200; i++) bNonces.push(b.counter(96).toString('hex'));
      const continuedAt = Date.now();
      a.child.kill('SIGCONT');
      // Its next renewal finds another holder (within a renewal period and a request timeout).
      for (let i = 0; i < 100 && !a.lines.includes('event lost taken'); i++) await sleep(50);
      const after = a.lines.filter((l) => Number(l.split(' ')[1]) > continuedAt);
      assert.ok(after.some((l) => l.startsWith('e ')), `no refusal after SIGCONT: ${after.slice(0, 3).join('\n')}`);
      // A batch begun before the stop is printed after it, stamped with the time
      // of printing: the nonces carry their own time, below the new holder's.
      const bFirst = unixMsOf(decoder, bNonces[0]);
      for (const l of after) {
        if (l.startsWith('e ')) assert.match(l, /ERR_NONCEFORGE_DISABLED$/);
        if (l.startsWith('n ')) {
          for (const n of l.split(' ').slice(2).filter((x) => x.length === 24)) {
            assert.ok(unixMsOf(decoder, n) < bFirst, `a nonce at ${unixMsOf(decoder, n)} after SIGCONT, the new holder started at ${bFirst}`);
          }
        }
      }
      const lastLines = a.lines.filter((l) => l.startsWith('n ') || l.startsWith('e '));
      assert.ok(lastLines[lastLines.length - 1].startsWith('e '), 'it still issues after SIGCONT');
      // 'lost' for good; 'lapsed' before it only when the watcher saw the
      // deadline pass before the first renewal after SIGCONT found the id taken.
      const events = a.lines.filter((l) => l.startsWith('event '));
      assert.ok(events.includes('event lost taken'), `${a.lines.filter((l) => /^(s|event)/.test(l)).slice(-4).join(' / ')}`);
      assert.deepEqual(events.filter((e) => e !== 'event lapsed'), ['event lost taken'], events.join(','));
      assert.ok(events.indexOf('event lapsed') < events.indexOf('event lost taken'), events.join(','));
      // A's deadline came before the store let B take the id, and B started above A.
      const aLast = Math.max(...a.nonces().filter((n) => n.length === 24).map((n) => unixMsOf(decoder, n)));
      assert.ok(aLast < takenAt, `A issued at ${aLast}, B took the id at ${takenAt}`);
      assert.ok(unixMsOf(decoder, bNonces[0]) > aLast, 'B starts above A');
      allDistinct([...a.nonces(), ...bNonces]);
      a.child.stdin.end();
      const r = await a.exited;
      assert.equal(r.code, 1, 'A cannot release an id it lost'); // release-error
      assert.ok(a.lines.some((l) => l === 'release-error ERR_NONCEFORGE_LEASE_LOST'), a.lines.slice(-2).join('\n'));
      await b.release();
    });

    await t.test('kill -9 frees the id after the TTL; the next holder starts above the floor', async () => {
      const ttl = 1000;
      const a = holder(store.url, '12', ttl);
      assert.equal((await a.id).machineId, 12);
      await sleep(300);
      a.child.kill('SIGKILL');
      const killedAt = Date.now();
      await a.exited;
      const b = await takeWhenFree(store.url, 12, killedAt + ttl + 8000);
      const takenAt = Date.now();
      const aNonces = a.nonces();
      const aLast = Math.max(...aNonces.filter((n) => n.length === 24).map((n) => unixMsOf(decoder, n)));
      const bNonces = Array.from({ length: 1000 }, () => b.counter(96).toString('hex'));
      assert.ok(aLast < takenAt, `A issued at ${aLast}, B took the id at ${takenAt}`);
      assert.ok(unixMsOf(decoder, bNonces[0]) > aLast, 'the next holder starts above the floor');
      allDistinct([...aNonces, ...bNonces]);
      await b.release();
    });
  });
}

// The store goes away: renewals fail, and a loop that never yields to the
// event loop (so no event or callback can reach it) stops by the lease's local
// deadline — the gate the watcher thread raises — with nothing issued after it.
// Also without the gate, as where a runtime copies external buffers: then each
// call reads the clock against the deadline as of its pool's refill.
for (const gated of [true, false]) test(`lease: a store outage stops a synchronous loop by the local deadline (${gated ? 'gate' : 'no gate: the clock'})`, { timeout: 60000 }, async () => {
  const store = await stores.start('redis');
  let stopped = false;
  try {
    const gen = await NonceGenerator.lease(store.url, { ttl: 1500, ids: '0-3' });
    assert.equal(gen.lease.state, 'held');
    assert.notEqual(gen._gate, null, 'this Node shares external buffers: the gate must be used');
    if (!gated) gen._gate = null;
    const lapsed = new Promise((resolve) => gen.once('lapsed', resolve));
    stores.stop(store);
    stopped = true;
    await sleep(100); // a renewal in flight has ended: the deadline no longer moves
    const { deadlineInMs } = gen.lease;
    const deadline = performance.now() + deadlineInMs;
    assert.ok(deadlineInMs > 0, `deadline in ${deadlineInMs} ms`);
    let lastOk = 0;
    let calls = 0;
    let gateUpAt = 0;
    let sinceGate = 0;
    let error;
    for (;;) {
      if (gated && gateUpAt === 0 && Atomics.load(gen._gate, 0) === 1) gateUpAt = performance.now();
      // The time before the call: the call decided at or after it (read
      // after, it would also count the time this thread waited for a core
      // once the call had returned — milliseconds when the machine is busy).
      const callAt = performance.now();
      try {
        if (calls % 2 === 0) gen.counter(96);
        else gen.sortable(128);
        lastOk = callAt;
        if (gateUpAt !== 0 && ++sinceGate >= 2) {
          // Once the gate is up, each kind's next call drops its pool (the
          // sortable path keeps its last single nonce): the generator saw the
          // gate in this very loop.
          for (const pool of gen._pools.values()) {
            assert.ok(pool.buffer.length <= 16, `a pool of ${pool.buffer.length} bytes in use after the gate went up`);
          }
        }
        calls++;
      } catch (e) {
        error = e;
        break;
      }
      assert.ok(performance.now() < deadline + 2000, 'still issuing 2 s past the deadline');
    }
    assert.equal(error.code, 'ERR_NONCEFORGE_DISABLED', error.message);
    // 2 ms: the core's deadline is a whole millisecond on its own clock (no
    // timestamp later than it), and performance.now() here is read apart.
    assert.ok(lastOk <= deadline + 2, `a call begun ${lastOk - deadline} ms past the deadline issued a nonce`);
    assert.ok(calls > 1000, `only ${calls} calls before the deadline`);
    // The watcher raised the gate before the deadline (50 ms ahead): pooled
    // nonces stopped there, the core answered each call after.
    if (gated) assert.ok(gateUpAt > 0 && gateUpAt <= deadline, `gate raised ${gateUpAt - deadline} ms after the deadline`);
    // The loop ends at the first refusal, which may come from the other kind
    // inside the deadline's own 2 ms (allowed above): poll the clock past them,
    // then every kind refuses.
    while (performance.now() <= deadline + 3);
    assert.throws(() => gen.counter(96), { code: 'ERR_NONCEFORGE_DISABLED' });
    assert.throws(() => gen.sortable(128), { code: 'ERR_NONCEFORGE_DISABLED' });
    // (the watcher's callback is weak: a timer keeps the loop alive meanwhile)
    const timer = setTimeout(() => {}, 5000);
    await lapsed;
    clearTimeout(timer);
    await assert.rejects(gen.release(), (e) => /^ERR_NONCEFORGE_LEASE/.test(e.code));
  } finally {
    if (!stopped) stores.stop(store);
  }
});

test('lease: bad arguments are Node-style errors naming the option, before any connection', async () => {
  const bad = (code, re) => (e) => e.code === code && re.test(e.message);
  await assert.rejects(NonceGenerator.lease(42), bad('ERR_INVALID_ARG_TYPE', /"url" argument must be of type string/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ttl: 'soon' }), bad('ERR_INVALID_ARG_VALUE', /'options\.ttl' must be a duration/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ids: [3, 600] }), bad('ERR_OUT_OF_RANGE', /"options\.ids\[1\]"/));
  // Text forms are read by the lease crate, as the CLI reads them: its rule is quoted.
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ids: '9-2' }), bad('ERR_INVALID_ARG_VALUE', /'options\.ids' must be 'FIRST-LAST' or one id \(.*within 0\.\.=511\)/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ids: '+5' }), bad('ERR_INVALID_ARG_VALUE', /'options\.ids'/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ttl: '10 parsecs' }), bad('ERR_INVALID_ARG_VALUE', /unknown unit "parsecs"/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { pgSchema: 'pg_catalog' }), bad('ERR_INVALID_ARG_VALUE', /pg_schema/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { fastStart: 'sometimes' }), bad('ERR_INVALID_ARG_VALUE', /fastStart.*off, verify or declared/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { fastStart: true }), bad('ERR_INVALID_ARG_TYPE', /options\.fastStart/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { machineId: 3 }), bad('ERR_INVALID_ARG_VALUE', /'options\.machineId' is not a lease option/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { key: Buffer.alloc(4) }), bad('ERR_OUT_OF_RANGE', /"options\.key\.byteLength"/));
  await assert.rejects(NonceGenerator.lease('mysql://x'), bad('ERR_INVALID_ARG_VALUE', /mysql/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { ttl: 100 }), bad('ERR_INVALID_ARG_VALUE', /ttl/));
  await assert.rejects(NonceGenerator.lease('redis://127.0.0.1:1', { connectTimeout: 300 }), bad('ERR_NONCEFORGE_LEASE_UNREACHABLE', /127\.0\.0\.1/));
  const g = new NonceGenerator({ machineId: 1 });
  assert.equal(g.lease, null);
  await assert.rejects(g.release(), bad('ERR_INVALID_ARG_VALUE', /leased generator/));
});
