'use strict';
// A leased Node process for test/lease.test.js:
//   node holder.js URL IDS TTL
// Leases a machine id, prints `id <machineId> <floorUnixMs>`, then makes
// nonces of every kind until its stdin closes, printing each batch as
// `n <Date.now()> <hex> <hex> …` and each refusal as `e <Date.now()> <code>`,
// and its events as `event <name>`; then releases the id and prints `released`.
const { NonceGenerator } = require('../../index.js');

const [url, ids, ttl] = process.argv.slice(2);
const out = (line) => process.stdout.write(`${line}\n`);

(async () => {
  const g = await NonceGenerator.lease(url, { ids, ttl: Number(ttl), key: Buffer.alloc(32, 7), connectTimeout: 5000 });
  for (const event of ['lapsed', 'resumed']) g.on(event, () => out(`event ${event}`));
  g.on('lost', (reason) => out(`event lost ${reason}`));
  if (process.env.HOLDER_DEBUG) setInterval(() => out(`s ${Date.now()} ${JSON.stringify(g.lease, (k, v) => (typeof v === 'bigint' ? String(v) : v))}`), 500).unref();
  out(`id ${g.machineId} ${g.lease.floorUnixMs}`);
  let open = true;
  process.stdin.on('end', () => { open = false; });
  process.stdin.resume();
  const tick = () => {
    if (!open) {
      g.release().then(() => { out('released'); process.exit(0); }, (e) => { out(`release-error ${e.code}`); process.exit(1); });
      return;
    }
    const batch = [];
    try {
      for (let i = 0; i < 50; i++) {
        batch.push(g.counter(96).toString('hex'), g.sortable(128).toString('hex'), g.encrypted(64).toString('hex'));
      }
      out(`n ${Date.now()} ${batch.join(' ')}`);
    } catch (error) {
      if (batch.length) out(`n ${Date.now()} ${batch.join(' ')}`);
      out(`e ${Date.now()} ${error.code}`);
    }
    setTimeout(tick, 2);
  };
  tick();
})().catch((error) => {
  out(`fail ${error.code} ${error.message}`);
  process.exit(2);
});
