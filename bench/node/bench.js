'use strict';
// Side by side in one run: nonceforge/crypto-async, @ronomon/crypto-async 5.0.1,
// node:crypto and WebCrypto, and for the async rows a ceiling (the sync call
// looping on as many worker threads as calls in flight) — AES-256-CTR, SHA-256 and HMAC-SHA256 at 256 B to
// 1 MiB, sync and with 2 and 4 calls in flight; the event loop's largest stall
// while 64 MiB is processed; nonce rates from JS. Usage:
//   node bench/node/bench.js [--seconds 0.3] [--runs 3] [--sizes 65536,1048576] [--json]
// Each cell is the median of --runs runs of --seconds each.
const path = require('node:path');
const crypto = require('node:crypto');
const { ZERO_COPY, maxStall, nodeDir, args, opt } = require('./calls.js');
const ours = require(path.join(nodeDir, 'crypto-async.js'));
const nf = require(nodeDir);
let theirs;
try {
  theirs = require(require.resolve('@ronomon/crypto-async', { paths: [nodeDir] }));
} catch {
  console.error('@ronomon/crypto-async is not installed (cd node && npm ci): its columns are left out');
}

const SECONDS = opt('--seconds', 0.3);
const RUNS = opt('--runs', 3);
const JSON_OUT = args.includes('--json');
// --nonces-only: just the nonce rows (a minute instead of several).
const NONCES_ONLY = args.includes('--nonces-only');
// --sizes 65536,1048576: only these message sizes (default: all five).
const SIZES = args.includes('--sizes')
  ? args[args.indexOf('--sizes') + 1].split(',').map(Number)
  : [256, 1024, 4096, 65536, 1 << 20];
if (!SIZES.every((n) => Number.isInteger(n) && n > 0 && n <= 1 << 30)) {
  console.error('--sizes: comma-separated byte counts, each 1..2^30');
  process.exit(2);
}

const key = crypto.randomBytes(32);
const iv = crypto.randomBytes(16);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function syncRate(fn, size) {
  const src = crypto.randomBytes(size);
  const dst = Buffer.alloc(size + 64);
  let bytes = 0;
  const t0 = now();
  while (now() - t0 < SECONDS) {
    for (let i = 0; i < 16; i++) fn(src, dst);
    bytes += 16 * size;
  }
  return bytes / (now() - t0) / 1e6;
}

function asyncRate(fn, size, inFlight) {
  return new Promise((resolve) => {
    const t0 = now();
    let bytes = 0;
    let running = inFlight;
    const chain = () => {
      const src = crypto.randomBytes(size);
      const dst = Buffer.alloc(size + 64);
      const next = (error) => {
        if (error) throw error;
        bytes += size;
        if (now() - t0 < SECONDS) fn(src, dst, next);
        else if (--running === 0) resolve(bytes / (now() - t0) / 1e6);
      };
      fn(src, dst, next);
    };
    for (let i = 0; i < inFlight; i++) chain();
  });
}

const ctrWeb = crypto.webcrypto.subtle.importKey('raw', key, 'AES-CTR', false, ['encrypt']);
const hmacWeb = crypto.webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);

const ALGS = {
  'AES-256-CTR': {
    zc: (m) => ZERO_COPY['AES-256-CTR'](m, key, iv),
    node: (s) => { const c = crypto.createCipheriv('aes-256-ctr', key, iv); c.update(s); c.final(); },
    web: async (s) => crypto.webcrypto.subtle.encrypt({ name: 'AES-CTR', counter: iv, length: 64 }, await ctrWeb, s),
  },
  'SHA-256': {
    zc: (m) => ZERO_COPY['SHA-256'](m, key, iv),
    node: (s) => crypto.createHash('sha256').update(s).digest(),
    web: (s) => crypto.webcrypto.subtle.digest('SHA-256', s),
  },
  'HMAC-SHA256': {
    zc: (m) => ZERO_COPY['HMAC-SHA256'](m, key, iv),
    node: (s) => crypto.createHmac('sha256', key).update(s).digest(),
    web: async (s) => crypto.webcrypto.subtle.sign('HMAC', await hmacWeb, s),
  },
};

// The ceiling for k calls in flight: k worker threads, each calling the
// synchronous function in a loop (no pool, no hand-off), started together.
// No asynchronous call can beat it: it is the same work with nothing waiting.
function ceilingRate(algorithm, size, threads) {
  const { Worker } = require('node:worker_threads');
  const file = path.join(__dirname, 'ceiling-worker.js');
  const workers = [];
  for (let i = 0; i < threads; i++) {
    workers.push(new Worker(file, { workerData: { algorithm, size, seconds: SECONDS, key, iv } }));
  }
  const ready = workers.map((w) => new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  }));
  return Promise.all(ready).then(() => {
    const done = workers.map((w) => new Promise((resolve) => w.once('message', resolve)));
    for (const w of workers) w.postMessage('go');
    return Promise.all(done);
  }).then((results) => {
    for (const w of workers) w.terminate();
    const bytes = results.reduce((a, r) => a + r.bytes, 0);
    return bytes / Math.max(...results.map((r) => r.seconds)) / 1e6;
  });
}

async function measure(f) {
  const xs = [];
  for (let r = 0; r < RUNS; r++) xs.push(await f());
  return median(xs);
}

async function main() {
  const rows = [];
  const fmt = (x) => (x === undefined ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
  let stalls = {};
  if (!NONCES_ONLY) {
    console.log(`# MB/s, median of ${RUNS} runs of ${SECONDS}s; ratio = nonceforge / @ronomon;`);
    console.log('# ceiling = as many threads as calls in flight, each calling the sync function in a loop');
    console.log('| algorithm | size | mode | nonceforge | @ronomon | ratio | ceiling | node:crypto | WebCrypto |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const [name, a] of Object.entries(ALGS)) {
      for (const size of SIZES) {
        const cells = [
          ['sync', () => syncRate(a.zc(ours), size), theirs && (() => syncRate(a.zc(theirs), size)), () => syncRate(a.node, size), undefined],
          ...[2, 4].map((k) => [
            `async ×${k}`,
            () => asyncRate(a.zc(ours), size, k),
            theirs && (() => asyncRate(a.zc(theirs), size, k)),
            undefined,
            () => asyncRate((s, d, cb) => a.web(s).then(() => cb(), cb), size, k),
            () => ceilingRate(name, size, k),
          ]),
        ];
        for (const [mode, o, t, n, w, c] of cells) {
          const r = { algorithm: name, size, mode };
          r.nonceforge = await measure(o);
          if (t) r.ronomon = await measure(t);
          if (c) r.ceiling = await measure(c);
          if (n) r.node = await measure(n);
          if (w) r.webcrypto = await measure(w);
          r.ratio = r.ronomon ? r.nonceforge / r.ronomon : undefined;
          rows.push(r);
          console.log(`| ${name} | ${size} | ${mode} | ${fmt(r.nonceforge)} | ${fmt(r.ronomon)} | ${r.ratio ? r.ratio.toFixed(2) + '×' : '-'} | ${fmt(r.ceiling)} | ${fmt(r.node)} | ${fmt(r.webcrypto)} |`);
        }
      }
    }

    // The other ciphers users reach for, synchronously, against the original only.
    console.log('\n# more ciphers, sync (MB/s, median of runs)');
    console.log('| algorithm | size | nonceforge | @ronomon | ratio |');
    console.log('|---|---|---|---|---|');
    const aad16 = Buffer.alloc(16);
    const tag16 = Buffer.alloc(16);
    const MORE = {
      'AES-256-GCM': (m) => (s, d) => m.cipher('aes-256-gcm', 1, key, 0, 32, iv, 0, 12, s, 0, s.length, d, 0, aad16, 0, 16, tag16, 0, 16),
      'ChaCha20-Poly1305': (m) => (s, d) => m.cipher('chacha20-poly1305', 1, key, 0, 32, iv, 0, 12, s, 0, s.length, d, 0, aad16, 0, 16, tag16, 0, 16),
      ChaCha20: (m) => (s, d) => m.cipher('chacha20', 1, key, 0, 32, iv, 0, 16, s, 0, s.length, d, 0, aad16, 0, 0, tag16, 0, 0),
    };
    for (const [name, f] of Object.entries(MORE)) {
      for (const size of [1024, 65536, 1 << 20]) {
        const r = { algorithm: name, size, mode: 'sync' };
        r.nonceforge = await measure(() => syncRate(f(ours), size));
        if (theirs) r.ronomon = await measure(() => syncRate(f(theirs), size));
        r.ratio = r.ronomon ? r.nonceforge / r.ronomon : undefined;
        rows.push(r);
        console.log(`| ${name} | ${size} | ${fmt(r.nonceforge)} | ${fmt(r.ronomon)} | ${r.ratio ? r.ratio.toFixed(2) + '×' : '-'} |`);
      }
    }

    console.log('\n# largest event-loop stall (ms) while 64 MiB is processed asynchronously; idle first');
    const big = Buffer.alloc(64 << 20, 7);
    const out = Buffer.alloc(64 << 20);
    const idle = await maxStall(() => new Promise((r) => setTimeout(r, 300)));
    stalls = { idle };
    const run = (m, f) => () => new Promise((resolve) => f(m, resolve));
    const hashOn = (m, done) => m.hash('sha256', big, 0, big.length, out, 0, done);
    const ctrOn = (m, done) => m.cipher('aes-256-ctr', 1, key, 0, 32, iv, 0, 16, big, 0, big.length, out, 0, done);
    stalls['nonceforge SHA-256'] = await maxStall(run(ours, hashOn));
    stalls['nonceforge AES-256-CTR'] = await maxStall(run(ours, ctrOn));
    if (theirs) {
      stalls['@ronomon SHA-256'] = await maxStall(run(theirs, hashOn));
      stalls['@ronomon AES-256-CTR'] = await maxStall(run(theirs, ctrOn));
    }
    stalls['node:crypto SHA-256 (sync, for scale)'] = await maxStall(async () => crypto.createHash('sha256').update(big).digest());
    for (const [k, v] of Object.entries(stalls)) console.log(`| ${k} | ${v.toFixed(2)} |`);

  }
  console.log('\n# nonces from JavaScript (M/s, median of runs)');
  const g = new nf.NonceGenerator({ machineId: 1, key: crypto.randomBytes(32) });
  // The wide layout (16-bit machine ids) beside the standard one: it should cost nothing a value.
  const w = new nf.NonceGenerator({ machineId: 40000, layout: 'wide', key: crypto.randomBytes(32) });
  const rate = (f, per) => measure(async () => {
    let n = 0;
    const t0 = now();
    while (now() - t0 < SECONDS) {
      for (let i = 0; i < 1000; i++) f();
      n += 1000 * per;
    }
    return n / (now() - t0) / 1e6;
  });
  const batch = Buffer.alloc(12 * 4096);
  const nonces = {
    'counter 96, one call each': await rate(() => g.counter(96), 1),
    'counter 96, wide layout, one call each': await rate(() => w.counter(96), 1),
    'sortable 64, one call each': await rate(() => g.sortable(64), 1),
    'sortable 96, one call each': await rate(() => g.sortable(96), 1),
    'sortable 96, wide layout, one call each': await rate(() => w.sortable(96), 1),
    'encrypted 128, one call each': await rate(() => g.encrypted(128), 1),
    'counter 96, batches of 4096 into a Buffer': await rate(() => g.fillInto('counter', 96, batch), 4096),
    'uuidv7 strings': await rate(() => nf.uuidv7(), 1),
    'crypto.randomUUID (for scale)': await rate(() => crypto.randomUUID(), 1),
  };
  for (const [k, v] of Object.entries(nonces)) console.log(`| ${k} | ${v.toFixed(1)} |`);
  if (JSON_OUT) console.log(JSON.stringify({ rows, stalls, nonces }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
