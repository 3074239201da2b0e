'use strict';
// Leased against unleased generators, side by side in one run:
//   node bench/node/lease.js [--runs 5] [--seconds 0.5]
// Starts a Redis on a loopback port (node/test/support/stores.js), leases an
// id from it, and times counter(96), sortable(128) and encrypted(128) calls
// of both generators in alternating rounds; prints medians and the ratio.
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const stores = require(path.join(__dirname, '..', '..', 'node', 'test', 'support', 'stores.js'));
const { NonceGenerator } = require(path.join(__dirname, '..', '..', 'node', 'index.js'));

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const runs = arg('--runs', 5);
const seconds = arg('--seconds', 0.5);

function rate(fn) {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) fn();
    n += 1000;
  }
  return n / seconds / 1e6;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];

(async () => {
  const store = await stores.start('redis');
  try {
    const key = Buffer.alloc(32, 5);
    const plain = new NonceGenerator({ machineId: 1, key });
    const leased = await NonceGenerator.lease(store.url, { key, ttl: '10s' });
    console.log(`| call | unleased M/s | leased M/s | leased / unleased |`);
    console.log(`|---|---|---|---|`);
    for (const [name, call] of [
      ['counter(96)', (g) => () => g.counter(96)],
      ['sortable(128)', (g) => () => g.sortable(128)],
      ['encrypted(128)', (g) => () => g.encrypted(128)],
    ]) {
      const a = [];
      const b = [];
      for (let r = 0; r < runs; r++) {
        a.push(rate(call(plain)));
        b.push(rate(call(leased)));
      }
      const ma = median(a);
      const mb = median(b);
      console.log(`| ${name} | ${ma.toFixed(2)} | ${mb.toFixed(2)} | ${(mb / ma).toFixed(2)} |`);
    }
    await leased.release();
  } finally {
    stores.stop(store);
  }
})();
