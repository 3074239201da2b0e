'use strict';
// Where asynchronous hashing loses against its ceiling: one call in flight,
// SHA-256 of 64 KiB synchronously and asynchronously (the difference is the
// round trip to libuv's pool and back), and of 1 byte (the round trip when no
// thread gets to go idle). Usage: node bench/node/roundtrip.js [--runs 3]
const path = require('node:path');
const crypto = require('node:crypto');
const ours = require(path.join(__dirname, '..', '..', 'node', 'crypto-async.js'));

const i = process.argv.indexOf('--runs');
const RUNS = i === -1 ? 3 : Number(process.argv[i + 1]);
const now = () => Number(process.hrtime.bigint()) / 1e3; // µs

function syncEach(size, n) {
  const src = crypto.randomBytes(size);
  const dst = Buffer.alloc(32);
  for (let k = 0; k < 200; k++) ours.hash('sha256', src, 0, size, dst, 0);
  const t0 = now();
  for (let k = 0; k < n; k++) ours.hash('sha256', src, 0, size, dst, 0);
  return (now() - t0) / n;
}

function asyncEach(size, n) {
  return new Promise((resolve, reject) => {
    const src = crypto.randomBytes(size);
    const dst = Buffer.alloc(32);
    let done = 0;
    const t0 = now();
    const next = () => ours.hash('sha256', src, 0, size, dst, 0, (error) => {
      if (error) return reject(error);
      if (++done === n) return resolve((now() - t0) / n);
      next();
    });
    next();
  });
}

(async () => {
  console.log('| run | 64 KiB sync µs | 64 KiB async µs | round trip µs | 1 B async µs | bound at ×2: sync ÷ (sync + round trip) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (let r = 1; r <= RUNS; r++) {
    const s = syncEach(65536, 2000);
    const a = await asyncEach(65536, 3000);
    const tiny = await asyncEach(1, 20000);
    const rt = a - s;
    console.log(`| ${r} | ${s.toFixed(1)} | ${a.toFixed(1)} | ${rt.toFixed(1)} | ${tiny.toFixed(1)} | ${(s / (s + rt)).toFixed(2)} |`);
  }
})();
