'use strict';
// Memory and set-up cost per live key: SanitizedAead beside node:crypto
// holding a KeyObject (the plain way to keep a key and seal with it).
//
//   node --expose-gc bench/node/sanitizer-keys.js [KEYS]
//
// Makes KEYS live keys (default 100,000) of AES-256-GCM, seals 4 messages of
// 64 bytes under each (counter nonces, then random ones), keeps them all, and
// prints the RSS and V8 heap each key holds (after a collection) and the µs to
// make one; median of 5 rounds, the two ways alternating.
const crypto = require('node:crypto');
const { SanitizedAead } = require('../../node');

if (typeof global.gc !== 'function') {
  console.error('run with --expose-gc');
  process.exit(2);
}
const KEYS = Number(process.argv[2] || 100000);
let made = 0;

function nextKey() {
  const k = Buffer.alloc(32);
  k.writeUInt32LE(++made, 0);
  k.writeUInt32LE(process.pid, 4);
  return k;
}

function nonceFor(i, random) {
  const n = Buffer.alloc(12);
  if (random) crypto.randomFillSync(n);
  else n.writeBigUInt64BE(BigInt(i), 4);
  return n;
}

const msg = Buffer.alloc(64);
const ways = {
  'node:crypto KeyObject (plain)': {
    make: (k) => crypto.createSecretKey(k),
    seal: (key, nonce) => {
      const c = crypto.createCipheriv('aes-256-gcm', key, nonce);
      return Buffer.concat([c.update(msg), c.final(), c.getAuthTag()]);
    },
  },
  'SanitizedAead (defaults)': {
    make: (k) => new SanitizedAead('aes-256-gcm', k),
    seal: (a, nonce) => a.seal(nonce, msg),
  },
};

function round(way, random) {
  global.gc();
  const before = process.memoryUsage();
  const held = new Array(KEYS);
  let making = 0n;
  for (let i = 0; i < KEYS; i++) {
    const k = nextKey();
    const t = process.hrtime.bigint();
    held[i] = way.make(k);
    making += process.hrtime.bigint() - t;
    for (let s = 0; s < 4; s++) way.seal(held[i], nonceFor(s, random));
  }
  global.gc();
  const after = process.memoryUsage();
  const r = {
    rss: (after.rss - before.rss) / KEYS,
    heap: (after.heapUsed + after.external - before.heapUsed - before.external) / KEYS,
    us: Number(making) / 1000 / KEYS,
  };
  held.length = 0;
  return r;
}

const median = (v) => v.slice().sort((a, b) => a - b)[v.length >> 1];
for (const random of [false, true]) {
  const results = Object.fromEntries(Object.keys(ways).map((w) => [w, { rss: [], heap: [], us: [] }]));
  for (let r = 0; r < 5; r++) {
    for (const [name, way] of Object.entries(ways)) {
      const x = round(way, random);
      for (const f of ['rss', 'heap', 'us']) results[name][f].push(x[f]);
    }
  }
  console.log(`\n${KEYS} live keys, 4 seals each, ${random ? 'random' : 'counter'} nonces (median of 5)\n`);
  console.log('| way | RSS a key (B) | V8 heap + external a key (B) | µs to make |');
  console.log('|---|---:|---:|---:|');
  for (const [name, r] of Object.entries(results)) {
    console.log(`| ${name} | ${median(r.rss).toFixed(0)} | ${median(r.heap).toFixed(0)} | ${median(r.us).toFixed(2)} |`);
  }
}
