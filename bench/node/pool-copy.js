'use strict';
// What the pool path's copies cost (issue 27): jobs on the pool read copies of
// their inputs made at the call and write the target when they end. Side by
// side in one run: nonceforge (this checkout), @ronomon/crypto-async and, with
// --before DIR, the node/ directory of an older checkout (its addon built):
// async SHA-256 and AES-256-CTR with 2 and 4 calls in flight, every job sent to
// the pool (INLINE_MAX = 0) and with the default INLINE_MAX; then the largest
// event-loop stall while 64 MiB is processed. Usage:
//   node bench/node/pool-copy.js [--before /tmp/before/node] [--runs 5] [--seconds 0.3]
// Each cell is the median of --runs runs; the columns of a row alternate run by run.
const path = require('node:path');
const crypto = require('node:crypto');
const { ZERO_COPY, maxStall, nodeDir, opt } = require('./calls.js');

const SECONDS = opt('--seconds', 0.3);
const RUNS = opt('--runs', 5);
const modules = { nonceforge: require(path.join(nodeDir, 'crypto-async.js')) };
if (opt('--before')) modules.before = require(path.join(path.resolve(opt('--before')), 'crypto-async.js'));
try {
  modules['@ronomon'] = require(require.resolve('@ronomon/crypto-async', { paths: [nodeDir] }));
} catch {
  console.error('@ronomon/crypto-async is not installed (cd node && npm ci): its column is left out');
}
const names = Object.keys(modules);
const key = crypto.randomBytes(32);
const iv = crypto.randomBytes(16);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function asyncRate(fn, size, inFlight) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    let bytes = 0;
    let running = inFlight;
    for (let i = 0; i < inFlight; i++) {
      const src = crypto.randomBytes(size);
      const dst = Buffer.alloc(size + 64);
      const next = (error) => {
        if (error) return reject(error);
        bytes += size;
        if (now() - t0 < SECONDS) fn(src, dst, next);
        else if (--running === 0) resolve(bytes / (now() - t0) / 1e6);
      };
      fn(src, dst, next);
    }
  });
}

function setInline(value) {
  for (const m of Object.values(modules)) if ('INLINE_MAX' in m) m.INLINE_MAX = value;
}

async function main() {
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`# MB/s, median of ${RUNS} runs of ${SECONDS}s, columns alternating run by run`);
  const ratioCols = names.filter((n) => n !== 'nonceforge').map((n) => `nonceforge / ${n}`);
  console.log(`| algorithm | size | in flight | INLINE_MAX | ${names.join(' | ')} | ${ratioCols.join(' | ')} |`);
  console.log(`|${'---|'.repeat(4 + names.length + ratioCols.length)}`);
  for (const inline of [0, 16384]) {
    setInline(inline);
    for (const alg of ['SHA-256', 'AES-256-CTR']) {
      for (const size of [256, 4096, 65536, 1 << 20]) {
        for (const k of [2, 4]) {
          const xs = Object.fromEntries(names.map((n) => [n, []]));
          for (let r = 0; r < RUNS; r++) {
            for (const n of names) xs[n].push(await asyncRate(ZERO_COPY[alg](modules[n], key, iv), size, k));
          }
          const m = Object.fromEntries(names.map((n) => [n, median(xs[n])]));
          const ratios = names.filter((n) => n !== 'nonceforge').map((n) => `${(m.nonceforge / m[n]).toFixed(2)}×`);
          console.log(`| ${alg} | ${size} | ${k} | ${inline} | ${names.map((n) => fmt(m[n])).join(' | ')} | ${ratios.join(' | ')} |`);
        }
      }
    }
  }
  setInline(16384);
  console.log(`\n# largest event-loop stall (ms) while 64 MiB is processed asynchronously, median of ${RUNS}`);
  console.log(`| job | ${names.join(' | ')} |`);
  console.log(`|---|${'---|'.repeat(names.length)}`);
  const big = Buffer.alloc(64 << 20, 7);
  const out = Buffer.alloc(64 << 20);
  const jobs = {
    'SHA-256': (m) => new Promise((res, rej) => m.hash('sha256', big, 0, big.length, out, 0, (e) => (e ? rej(e) : res()))),
    'AES-256-CTR': (m) => new Promise((res, rej) => m.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, big, 0, big.length, out, 0, (e) => (e ? rej(e) : res()))),
  };
  for (const [job, start] of Object.entries(jobs)) {
    const xs = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < RUNS; r++) for (const n of names) xs[n].push(await maxStall(() => start(modules[n])));
    console.log(`| ${job} | ${names.map((n) => median(xs[n]).toFixed(2)).join(' | ')} |`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
