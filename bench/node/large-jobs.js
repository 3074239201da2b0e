'use strict';
// Large asynchronous jobs (issue 36), nonceforge beside @ronomon/crypto-async
// in one process, rounds alternating:
//   node bench/node/large-jobs.js [--runs 5] [--seconds 0.3]
// 1. MB/s of 1 MiB jobs, 2 and 4 in flight, on the pool (default INLINE_MAX):
//    AES-256-CTR, SHA-256, HMAC-SHA256, AES-256-GCM seal, ChaCha20 (sync and
//    async); synchronous ChaCha20 at 64 KiB and 1 MiB.
// 2. The event loop's longest stall while one 64 MiB job runs: the first job
//    of a fresh process (a child per module and run) and warm jobs.
// 3. Memory: RSS added by 16 concurrent 8 MiB hashes, and still held after
//    they end (a fresh child per module and run).
// nonceforge runs zero-copy when its V8 pin is built (npm run build); set
// NONCEFORGE_ZERO_COPY=0 to measure the copying fallback. Each cell is the
// median of --runs runs.
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { maxStall, nodeDir, args, opt } = require('./calls.js');

const SECONDS = opt('--seconds', 0.3);
const RUNS = opt('--runs', 5);
const load = {
  nonceforge: () => require(path.join(nodeDir, 'crypto-async.js')),
  '@ronomon': () => require(require.resolve('@ronomon/crypto-async', { paths: [nodeDir] })),
};
const key = Buffer.alloc(32, 1);
const iv = Buffer.alloc(16, 2);
const iv12 = iv.subarray(0, 12);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// (m) => (source, target, tag, callback?) for each job.
const JOBS = {
  'AES-256-CTR': (m) => (s, d, t, cb) => m.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, s, 0, s.length, d, 0, ...(cb ? [cb] : [])),
  'SHA-256': (m) => (s, d, t, cb) => m.hash('sha256', s, 0, s.length, d, 0, ...(cb ? [cb] : [])),
  'HMAC-SHA256': (m) => (s, d, t, cb) => m.hmac('sha256', key, 0, 32, s, 0, s.length, d, 0, ...(cb ? [cb] : [])),
  'AES-256-GCM seal': (m) => (s, d, t, cb) =>
    m.cipher('aes-256-gcm', 1, key, 0, 32, iv12, 0, 12, s, 0, s.length, d, 0, t, 0, 0, t, 0, 16, ...(cb ? [cb] : [])),
  ChaCha20: (m) => (s, d, t, cb) => m.cipher('chacha20', 1, key, 0, 32, iv, 0, 16, s, 0, s.length, d, 0, ...(cb ? [cb] : [])),
};

function asyncRate(fn, size, inFlight) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    let bytes = 0;
    let running = inFlight;
    for (let i = 0; i < inFlight; i++) {
      const src = crypto.randomBytes(size);
      const dst = Buffer.alloc(size + 64);
      const tag = Buffer.alloc(16);
      const next = (error) => {
        if (error) return reject(error);
        bytes += size;
        if (now() - t0 < SECONDS) fn(src, dst, tag, next);
        else if (--running === 0) resolve(bytes / (now() - t0) / 1e6);
      };
      fn(src, dst, tag, next);
    }
  });
}

function syncRate(fn, size) {
  const src = crypto.randomBytes(size);
  const dst = Buffer.alloc(size);
  const t0 = now();
  let bytes = 0;
  while (now() - t0 < SECONDS) {
    fn(src, dst, null);
    bytes += size;
  }
  return bytes / (now() - t0) / 1e6;
}

// Child modes: one measurement in a fresh process, printed as JSON.
async function child(mode, name) {
  const m = load[name]();
  if (mode === 'first-stall') {
    const big = Buffer.alloc(64 << 20, 7);
    const out = Buffer.alloc(64 << 20);
    const ms = await maxStall(() => new Promise((res, rej) => JOBS['SHA-256'](m)(big, out, null, (e) => (e ? rej(e) : res()))));
    return { ms };
  }
  // memory: 16 concurrent 8 MiB hashes
  const srcs = Array.from({ length: 16 }, () => Buffer.alloc(8 << 20, 3));
  const outs = Array.from({ length: 16 }, () => Buffer.alloc(64));
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1);
  await Promise.all(srcs.map((s, i) => new Promise((res, rej) => JOBS['SHA-256'](m)(s, outs[i], null, (e) => (e ? rej(e) : res())))));
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  global.gc?.();
  const after = process.memoryUsage().rss;
  return { added: (peak - before) / 1048576, held: (after - before) / 1048576 };
}

function inChild(mode, name) {
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', mode, name], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${mode} ${name}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function main() {
  if (opt('--child')) {
    process.stdout.write(JSON.stringify(await child(opt('--child'), args[args.indexOf('--child') + 2])));
    return;
  }
  const modules = Object.fromEntries(Object.entries(load).map(([n, f]) => [n, f()]));
  const names = Object.keys(modules);
  const nf = modules.nonceforge;
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`# Node ${process.versions.node}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE || 4}; nonceforge ZERO_COPY=${nf.ZERO_COPY}${nf.ZERO_COPY ? '' : ` (${nf.ZERO_COPY_OFF_BECAUSE})`}`);
  console.log(`# MB/s, median of ${RUNS} runs of ${SECONDS}s, columns alternating run by run; default INLINE_MAX`);
  console.log(`| job | size | in flight | ${names.join(' | ')} | nonceforge / @ronomon |`);
  console.log('|---|---|---|---|---|---|');
  const row = async (label, size, k, measure) => {
    const xs = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < RUNS; r++) for (const n of names) xs[n].push(await measure(modules[n]));
    const m = Object.fromEntries(names.map((n) => [n, median(xs[n])]));
    console.log(`| ${label} | ${size} | ${k} | ${names.map((n) => fmt(m[n])).join(' | ')} | ${(m.nonceforge / m['@ronomon']).toFixed(2)}× |`);
  };
  for (const [job, make] of Object.entries(JOBS)) {
    for (const k of [2, 4]) await row(`${job}, async`, '1 MiB', k, (m) => asyncRate(make(m), 1 << 20, k));
  }
  for (const size of [64 << 10, 1 << 20]) await row('ChaCha20, sync', `${size >> 10} KiB`, 'sync', (m) => syncRate(JOBS.ChaCha20(m), size));

  console.log(`\n# longest event-loop stall (ms) while one 64 MiB SHA-256 runs: the first job of a fresh process, and warm; median of ${RUNS}`);
  console.log(`| stall | ${names.join(' | ')} | nonceforge / @ronomon |`);
  console.log('|---|---|---|---|');
  const first = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) for (const n of names) first[n].push(inChild('first-stall', n).ms);
  const big = Buffer.alloc(64 << 20, 7);
  const out = Buffer.alloc(64 << 20);
  const warm = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) {
    for (const n of names) {
      warm[n].push(await maxStall(() => new Promise((res, rej) => JOBS['SHA-256'](modules[n])(big, out, null, (e) => (e ? rej(e) : res())))));
    }
  }
  for (const [label, xs] of [['first job', first], ['warm', warm]]) {
    const m = names.map((n) => median(xs[n]));
    console.log(`| ${label} | ${m.map((x) => x.toFixed(2)).join(' | ')} | ${(m[0] / m[1]).toFixed(2)}× |`);
  }

  console.log(`\n# RSS (MiB) added while 16 concurrent 8 MiB SHA-256 jobs run, and still held after (fresh process each), median of ${RUNS}`);
  console.log(`| | ${names.join(' | ')} |`);
  console.log('|---|---|---|');
  const mem = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) for (const n of names) mem[n].push(inChild('memory', n));
  for (const field of ['added', 'held']) {
    console.log(`| ${field} | ${names.map((n) => median(mem[n].map((x) => x[field])).toFixed(1)).join(' | ')} |`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
