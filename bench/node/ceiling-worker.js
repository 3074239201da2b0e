'use strict';
// One thread of the "ceiling" column of bench.js: the synchronous call in a
// loop, on a worker thread of its own, with no hand-off to a pool and back —
// what this many threads can do on this machine when nothing waits.
const { parentPort, workerData } = require('node:worker_threads');
const path = require('node:path');
const m = require(path.join(__dirname, '..', '..', 'node', 'crypto-async.js'));
const { ZERO_COPY } = require('./calls.js');

const { algorithm, size, seconds } = workerData;
const key = Buffer.from(workerData.key);
const iv = Buffer.from(workerData.iv);
const src = Buffer.alloc(size, 1);
const dst = Buffer.alloc(size + 64);
const make = ZERO_COPY[algorithm];
if (!make) throw new Error(`ceiling-worker: unknown algorithm ${algorithm}`);
const run = make(m, key, iv);

parentPort.once('message', () => {
  const now = () => Number(process.hrtime.bigint()) / 1e9;
  const t0 = now();
  let bytes = 0;
  while (now() - t0 < seconds) {
    run(src, dst);
    bytes += size;
  }
  parentPort.postMessage({ bytes, seconds: now() - t0 });
});
parentPort.postMessage('ready');
