'use strict';
const path = require('node:path');

// The node/ directory every benchmark here loads, and their command line:
// opt('--name', dflt) is the word after --name (a number where dflt is one),
// dflt without it.
const nodeDir = path.join(__dirname, '..', '..', 'node');
const args = process.argv.slice(2);
function opt(name, dflt) {
  const i = args.indexOf(name);
  if (i === -1) return dflt;
  return typeof dflt === 'number' ? Number(args[i + 1]) : args[i + 1];
}

// The zero-copy calls bench.js measures, for any module with the
// @ronomon/crypto-async interface: ZERO_COPY[name](m, key, iv) gives
// (source, target[, callback]) — synchronous without a callback. Shared by
// bench.js and its ceiling workers (ceiling-worker.js).
const ZERO_COPY = {
  'AES-256-CTR': (m, key, iv) => (s, d, cb) => cb
    ? m.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, s, 0, s.length, d, 0, cb)
    : m.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, s, 0, s.length, d, 0),
  'SHA-256': (m) => (s, d, cb) => cb
    ? m.hash('sha256', s, 0, s.length, d, 0, cb)
    : m.hash('sha256', s, 0, s.length, d, 0),
  'HMAC-SHA256': (m, key) => (s, d, cb) => cb
    ? m.hmac('sha256', key, 0, 32, s, 0, s.length, d, 0, cb)
    : m.hmac('sha256', key, 0, 32, s, 0, s.length, d, 0),
};

const now = () => Number(process.hrtime.bigint()) / 1e9;

// The largest gap, in ms, between 1 ms interval ticks while `work()` (a
// promise) runs: how long the event loop was blocked. Shared by bench.js and
// pool-copy.js.
async function maxStall(work) {
  let last = now();
  let worst = 0;
  const timer = setInterval(() => {
    const t = now();
    worst = Math.max(worst, t - last);
    last = t;
  }, 1);
  await new Promise((r) => setTimeout(r, 50));
  worst = 0;
  last = now();
  await work();
  // One more tick, so that a stall at the very end is seen too.
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(timer);
  return worst * 1000;
}

module.exports = { ZERO_COPY, maxStall, nodeDir, args, opt };
