// Compiled with `tsc --noEmit` by `npm test`: the declarations must accept real
// uses and reject wrong ones (the @ts-expect-error lines fail the build if they
// ever type-check).
import * as nf from '../index';
import * as ca from '../crypto-async';
import * as ca1 from '../crypto-async-1';

const g = new nf.NonceGenerator({ machineId: 7, key: Buffer.alloc(32) });
const a: Buffer = g.counter(96);
const b: bigint = g.bigint('sortable', 64);
const parts: nf.NonceParts = g.decompose(g.sortable());
const many: Buffer = g.many('encrypted', 128, 100);
const filled: Uint8Array = g.fillInto('counter', 64, new Uint8Array(80));
// @ts-expect-error bits must be 64, 96 or 128
g.counter(32);
// @ts-expect-error machineId is required
new nf.NonceGenerator({});
const wide = new nf.NonceGenerator({ machineId: 40000, layout: 'wide' });
const wideLayout: nf.NonceLayout = wide.layout;
// @ts-expect-error the layout is 'standard' or 'wide'
new nf.NonceGenerator({ machineId: 1, layout: 'narrow' });
const samples: nf.MetricSample[] = g.metrics();
const sampleType: 'counter' | 'gauge' = samples[0].type;
const ready = g.readiness();
const notReadyWhy: string | null = ready.reason;
if (!ready.ready) {
  const reason: string = ready.reason;
  void reason;
}
const message: nf.LeaseChannelMessage = { event: 'lost', machineId: 3, reason: 'taken' };
// @ts-expect-error a lease channel event is lapsed, resumed or lost
const badMessage: nf.LeaseChannelMessage = { event: 'renewed', machineId: 3, reason: null };

async function pooled(): Promise<number> {
  const pool: nf.LeasePool = await nf.LeasePool.connect('postgres://app@db/app', { conns: 8, layout: 'wide', ttl: '10s' });
  const g: nf.NonceGenerator = await pool.lease({ key: Buffer.alloc(32) });
  // @ts-expect-error a pool takes the lowest free ids: no pod index
  await nf.LeasePool.connect('redis://r', { idFrom: 'env:POD_INDEX' });
  return g.machineId + pool.conns;
}
void pooled;

const codec = new nf.ExtIdCodec(Buffer.alloc(32), 'user', { mode: 'aes128' });
const id: string = codec.encode(42n, 7);
const back: bigint = codec.decodeUnverified(id).seq;
const derivedId: string = codec.encode(42);
const isOurs: boolean = codec.decodeUnverified(derivedId, { keyVersion: 0 }).derived;
const checked: nf.DecodedExtId = codec.decode(derivedId);
// @ts-expect-error the checked decode has no `derived`: every id it returns is
checked.derived;
const half: bigint = codec.derivedRand(42);
const looked: bigint = codec.decodeSeq(derivedId);
const ring: nf.ExtIdKeyring = { current: 1, keys: { 0: Buffer.alloc(32), 1: Buffer.alloc(32) } };
new nf.ExtIdCodec(ring, 'user', { rounds: 4, uuidVersion: 4, keyVersionInBand: false });
// @ts-expect-error rounds are 2 or 4
new nf.ExtIdCodec(ring, 'user', { rounds: 3 });

const aead = new nf.SanitizedAead('aes-256-gcm', Buffer.alloc(32));
const strict: nf.SanitizedAeadOptions = { mode: 'counter', counterWindow: 1 << 20, allowIdentical: true, checkOpen: true, maxSeals: 1e6 };
new nf.SanitizedAead('xchacha20-poly1305', Buffer.alloc(32), strict);
// @ts-expect-error: no such mode
new nf.SanitizedAead('aes-192-gcm', Buffer.alloc(24), { mode: 'fast' });
// @ts-expect-error: no such option
new nf.SanitizedAead('aes-192-gcm', Buffer.alloc(24), { allowIdenticals: true });
const sealed: Buffer = aead.seal(Buffer.alloc(12), Buffer.from('x'));
// @ts-expect-error only the five AEADs
new nf.SanitizedAead('aes-256-cbc', Buffer.alloc(32));

async function promises(signal: AbortSignal): Promise<string> {
  const digest: Buffer = await nf.hash('sha256', Buffer.from('x'), { signal });
  const mac: Buffer = await nf.hmac('sha256', Buffer.alloc(32), digest);
  const ct: Buffer = await nf.encrypt('aes-256-gcm', Buffer.alloc(32), Buffer.alloc(12), mac, { tag: Buffer.alloc(16) });
  return nf.createHash('blake3').update(ct).update('more', 'utf8').digest('hex');
}

const n: number = ca.cipher('aes-256-ctr', 1, Buffer.alloc(32), 0, 32, Buffer.alloc(16), 0, 16, Buffer.alloc(4), 0, 4, Buffer.alloc(4), 0);
ca.hash('sha256', Buffer.alloc(1), (error, digest) => {
  if (!error && digest) digest.toString('hex');
});
// @ts-expect-error encrypt is 0 or 1
ca.cipher('aes-256-ctr', 2, Buffer.alloc(32), Buffer.alloc(16), Buffer.alloc(1));
const max: 32 = ca.CIPHER_BLOCK_MAX;
const t: number = nf.timestampOf(nf.uuidv7Buffer());

export { a, b, parts, many, filled, back, sealed, promises, n, max, t };

// crypto-async 1.0.2's entry, and the zero-copy switch of the default one.
const zc: boolean = ca.ZERO_COPY;
const why: string = ca.ZERO_COPY_OFF_BECAUSE;
ca1.cipher('AES-256-CBC', 1, Buffer.alloc(32), Buffer.alloc(16), Buffer.from('x'), (error, ciphertext) => {
  if (error) throw error;
  const b: Buffer | undefined = ciphertext;
  void b;
});
ca1.hash('SHA256', Buffer.alloc(1), 0, 1, Buffer.alloc(32), 0, (error, size) => {
  const n: number | undefined = size;
  void [error, n, zc, why];
});

// nonceforge/otel: the bridge's types.
import { registerMetrics, metricDefs } from '../otel';
import type { MeterLike } from '../otel';
declare const meterLike: MeterLike;
const otelReg: { unregister(): void } = registerMetrics(meterLike, new nf.NonceGenerator({ machineId: 1 }), { attributes: { pod: 'a' } });
otelReg.unregister();
const firstDef: 'counter' | 'gauge' = metricDefs()[0].type;
void firstDef;
