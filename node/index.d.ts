// Types for nonceforge (main entry).
/// <reference types="node" />
import { EventEmitter } from 'node:events';
import * as cryptoAsyncModule from './crypto-async';

export type NonceKind = 'counter' | 'sortable' | 'encrypted';
export type NonceBits = 64 | 96 | 128;
type Bytes = Buffer | NodeJS.TypedArray | DataView;

/**
 * Where the machine id sits: 'standard' (NoNoncense's 9 bits, every size; the
 * default) or 'wide' (16 bits, 0..65535, 96- and 128-bit nonces only). Every
 * member of a fleet uses one layout.
 */
export type NonceLayout = 'standard' | 'wide';

export interface NonceGeneratorOptions {
  /** 0..511 (0..65535 with layout 'wide'), unique among the live generators of a cluster. */
  machineId: number;
  /** At least 32 bytes; needed for encrypted nonces. */
  key?: Bytes;
  /** Move the epoch (Unix ms); every generator of a cluster must use the same. */
  epochUnixMs?: number;
  /** The layout (default 'standard'); 64-bit calls on a 'wide' generator throw. */
  layout?: NonceLayout;
}

export interface NonceParts {
  unixMs: number;
  machineId: number;
  counter: bigint;
}

/** How long: milliseconds, or a string like '10s', '250ms', '2m', '1h'. */
export type Duration = number | string;

/** The options of `NonceGenerator.lease`: the CLI's lease options, and the generator's. */
export interface LeaseOptions {
  /** How long the store keeps a lease without renewal (default '10s'; 1 s to 1 h). */
  ttl?: Duration;
  /** How often to renew (default TTL/3; at most (TTL - margin)/2). */
  renewEvery?: Duration;
  /** Stop generating this long before the lease would expire (default TTL/10). */
  margin?: Duration;
  /** Give up connecting and acquiring after this long (default '5s'). */
  connectTimeout?: Duration;
  /** The ids this cluster leases: one id, [first, last] or 'FIRST-LAST' (default: every id of the layout, 0-511 or 0-65535). */
  ids?: number | [number, number] | string;
  /**
   * A Kubernetes StatefulSet: lease exactly the pod's index — `'env:VAR'` (the downward API's
   * `apps.kubernetes.io/pod-index` label, or a pod name ending in it), `'file:PATH'` (a downward
   * API labels file) or `'hostname'` — waiting while another member holds it (the pod this one
   * replaces); not with `ids`.
   */
  idFrom?: string;
  /** With `idFrom`: how long to wait while another member holds the id (default: as long as it takes). */
  idWait?: Duration;
  /** Lease table name prefix (PostgreSQL) or key prefix (Redis, etcd); default 'nonceforge'. */
  namespace?: string;
  /** This process's name in the store (default host/pid/random). */
  holder?: string;
  /** PostgreSQL: the schema of the lease tables, the store role's own (default 'nonceforge_lease'). */
  pgSchema?: string;
  /**
   * When a new grant may start right above the store's floor instead of the TTL and margin
   * ahead of this clock (default 'off': safe even when the store fails over to a replica that
   * was behind or is restored from a backup); 'verify' where the store can show that
   * acknowledged writes survive a failover, 'declared' on the operator's word. The same on
   * every member (docs/lease-protocol.md).
   */
  fastStart?: 'off' | 'verify' | 'declared';
  /** At least 32 bytes; needed for encrypted nonces. */
  key?: Bytes;
  /** Move the epoch (Unix ms); every generator of a cluster must use the same. */
  epochUnixMs?: number;
  /**
   * The members' layout (default 'standard'): 'wide' leases ids 0..65535 for 96- and 128-bit
   * nonces. The namespace records it and refuses a member of the other one.
   */
  layout?: NonceLayout;
}

export type LeaseStateName = 'held' | 'lapsed' | 'lost' | 'released';

export type LeaseLostReason = 'taken' | 'evicted' | 'store' | 'rollback';

export interface LeaseInfo {
  machineId: number;
  /** The fencing token of this grant: greater than every earlier grant's. */
  token: bigint;
  /** The previous holder's last timestamp; this generator starts above it. */
  floorUnixMs: number;
  /**
   * Whether the store had a record of the id. False for a new namespace or a
   * store that lost its data: the start then waited out the TTL and margin.
   */
  hasHistory: boolean;
  /**
   * Whether the generator started right above the previous holder's floor
   * (`fastStart` verified or declared, and the id has history) instead of the
   * TTL and margin ahead of this host's clock.
   */
  startedFast: boolean;
  /**
   * Why the lease was lost: 'taken' (another holder has the id), 'evicted'
   * (an operator freed it), 'store' (the store lost its data), 'rollback' (the
   * store went back to an older copy of its data); null until then.
   */
  lostReason: LeaseLostReason | null;
  holder: string;
  /** The store's URL without its password. */
  backend: string;
  state: LeaseStateName;
  /** Time left until the local deadline (0 unless held). */
  deadlineInMs: number;
  /** Renewals that succeeded and that failed (a failure is retried). */
  renewals: number;
  failedRenewals: number;
  /** The last renewal error while the latest renewal failed; null otherwise. */
  lastError: string | null;
}

/** An error of this package: Node's codes for arguments, and its own. */
export interface NonceforgeError extends Error {
  code:
    | 'ERR_INVALID_ARG_TYPE'
    | 'ERR_INVALID_ARG_VALUE'
    | 'ERR_OUT_OF_RANGE'
    | 'ERR_NONCE_REUSE'
    | 'ERR_NONCEFORGE_DISABLED'
    | 'ERR_NONCEFORGE_AUTH'
    | 'ERR_NONCEFORGE_LEASE_UNREACHABLE'
    | 'ERR_NONCEFORGE_LEASE_TIMEOUT'
    | 'ERR_NONCEFORGE_LEASE_REFUSED'
    | 'ERR_NONCEFORGE_LEASE_ALL_TAKEN'
    | 'ERR_NONCEFORGE_LEASE_LOST'
    | 'ERR_NONCEFORGE_CLOCK_BEHIND'
    | 'ERR_NONCEFORGE_LEASE';
}

export declare class NonceGenerator extends EventEmitter {
  constructor(options: NonceGeneratorOptions);
  /**
   * A generator on a machine id leased from `url` (postgres://…, redis://…,
   * etcd://host:port[,host:port…]) with the same records and rules as the CLI.
   * Past the lease's local deadline every call throws ERR_NONCEFORGE_DISABLED.
   */
  static lease(url: string, options?: LeaseOptions): Promise<NonceGenerator>;
  /** The lease of a leased generator; null otherwise. */
  readonly lease: LeaseInfo | null;
  /** Stops issuing, records the floor and frees the id (leased generators only). */
  release(): Promise<void>;
  /** 'lapsed': the local deadline passed (renewals go on); 'resumed': renewed again. */
  on(event: 'lapsed' | 'resumed', listener: () => void): this;
  /** 'lost': the grant is gone for good, and why ('taken', 'evicted', 'store'). */
  on(event: 'lost', listener: (reason: LeaseLostReason | null) => void): this;
  once(event: 'lapsed' | 'resumed', listener: () => void): this;
  once(event: 'lost', listener: (reason: LeaseLostReason | null) => void): this;
  readonly machineId: number;
  /** The layout it was built with. */
  readonly layout: NonceLayout;
  readonly enabled: boolean;
  /** One nonce as a new Buffer (8, 12 or 16 bytes). Throws when disabled. */
  next(kind?: NonceKind, bits?: NonceBits): Buffer;
  counter(bits?: NonceBits): Buffer;
  /**
   * A sortable nonce: strictly increasing per generator (across next, sortable,
   * many and fillInto), carrying the millisecond it is handed out in. Taken
   * from the core in batches that are used only within their own millisecond.
   */
  sortable(bits?: NonceBits): Buffer;
  encrypted(bits?: NonceBits): Buffer;
  /** One nonce as an unsigned big-endian integer. */
  bigint(kind?: NonceKind, bits?: NonceBits): bigint;
  /** `count` nonces back to back in one Buffer. */
  many(kind: NonceKind, bits: NonceBits, count: number): Buffer;
  /** Fill `out` (a whole number of nonces) in place. */
  fillInto<T extends Bytes>(kind: NonceKind, bits: NonceBits, out: T): T;
  decrypt(nonce: Bytes): Buffer;
  decompose(nonce: Bytes): NonceParts;
  disable(): void;
  enable(): void;
  /**
   * The generator's figures (and its lease's) as samples of the fleet's metric
   * series: the names every face exports (docs/operations.md).
   */
  metrics(): MetricSample[];
  /** Whether it issues now, and why not: what a readiness probe returns. */
  readiness(): Readiness;
}

/** The options of `LeasePool.connect`: `NonceGenerator.lease`'s (without `idFrom`), and `conns`. */
export interface LeasePoolOptions extends Omit<LeaseOptions, 'idFrom' | 'idWait'> {
  /** The most store connections the pool keeps (0 or undefined: 8; at most 256). */
  conns?: number;
}

/**
 * Many leases of one namespace over a few shared store connections and one native
 * thread: for a process that holds many machine ids (a connection a lease is more
 * than a PostgreSQL server allows at thousands).
 */
export declare class LeasePool {
  private constructor();
  /** Connects to the store at `url` (checked now) for leases with `options`. */
  static connect(url: string, options?: LeasePoolOptions): Promise<LeasePool>;
  /** A generator on the lowest free machine id, through the pool (resolves once it may start). */
  lease(options?: Pick<NonceGeneratorOptions, 'key' | 'epochUnixMs'>): Promise<NonceGenerator>;
  /** The most store connections the pool keeps. */
  readonly conns: number;
}

/** One value of one metric series (testdata/vectors/metrics.json). */
export interface MetricSample {
  /** `nonceforge_…`. */
  name: string;
  type: 'counter' | 'gauge';
  /** The series' own labels (kind, bits, reason, state, failure, lost_reason). */
  labels: Record<string, string>;
  value: number;
}

/** A generator's readiness: a reason whenever it is not ready. */
export type Readiness = { ready: true; reason: null } | { ready: false; reason: string };

/**
 * Published on the diagnostics_channel `nonceforge:lease` at each change of a
 * leased generator's lease.
 */
export interface LeaseChannelMessage {
  /** 'waiting': an `idFrom` lease found its id held by another member and waits for it. */
  event: 'lapsed' | 'resumed' | 'lost' | 'waiting';
  machineId: number;
  reason: LeaseLostReason | null;
}

export interface ExtIdOptions {
  /** 'feistel-uuid' (default), 'aes128' or 'cycle-walk'. */
  mode?: 'feistel-uuid' | 'aes128' | 'cycle-walk';
  /** The key version of a single key, 0..15 (default 0, as in every face); a keyring names its own. */
  version?: number;
  /** feistel-uuid rounds: 2 (default) or 4. */
  rounds?: 2 | 4;
  /** The UUID version feistel-uuid ids carry: 8 (default) or 4. */
  uuidVersion?: 4 | 8;
  /** false: the key version travels beside the id (60-bit sequence numbers, the post's layout). Default true. */
  keyVersionInBand?: boolean;
}

/** Master keys by version (0..15), `current` the one new ids are made with. */
export interface ExtIdKeyring {
  current: number;
  keys: Record<number, Bytes>;
}

export interface DecodedExtId {
  seq: bigint;
  rand: bigint;
  keyVersion: number;
}

export interface UnverifiedExtId extends DecodedExtId {
  /** The random half is the one `encode(seq)` derives: made by this codec (false for made-up ids). */
  derived: boolean;
}

export declare class ExtIdCodec {
  constructor(key: Bytes | ExtIdKeyring, typeName: string, options?: ExtIdOptions);
  /**
   * Without `rand`, the random half is derived from `seq` under the key (stable ids that look
   * random; `decode(id)` refuses made-up ones). With `rand`: fresh and random per row, stored beside it.
   */
  encode(seq: number | bigint, rand?: number | bigint): string;
  /** The random half `encode(seq)` uses. */
  derivedRand(seq: number | bigint): bigint;
  /**
   * An id made by `encode(seq)`; any other id (made up, another key or type, a stored `rand`)
   * throws ERR_INVALID_ARG_VALUE. `keyVersion`: that version only.
   */
  decode(id: string, options?: { keyVersion?: number }): DecodedExtId;
  /** `decode(id, options).seq`. */
  decodeSeq(id: string, options?: { keyVersion?: number }): bigint;
  /**
   * Any well-formed id decodes, unverified (an id of another key or type gives an unrelated seq,
   * with `derived` false): for ids made with a stored `rand`, compared with the row's before
   * trusting. `keyVersion` for ids that do not carry theirs.
   */
  decodeUnverified(id: string, options?: { keyVersion?: number }): UnverifiedExtId;
}

export type SanitizedAlgorithm = 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm' | 'chacha20-poly1305' | 'xchacha20-poly1305';
/** The sanitizer's options (docs/contracts.md §8 says what each mode guarantees); an unknown name throws. */
export interface SanitizedAeadOptions {
  /** 'auto' (default): counter-shaped nonces take the exact counter path, others the window; 'counter': every nonce must be a counter; 'random': the window only. */
  mode?: 'auto' | 'counter' | 'random';
  /** Seals remembered exactly for non-counter nonces (64..2^24; default 1024). */
  window?: number;
  /** How far below the highest a counter may arrive and still be checked exactly (64..2^30; default 65,536). */
  counterWindow?: number;
  /** The same message sealed again under a nonce is accepted (same bytes, nothing leaks). Default false. */
  allowIdentical?: boolean;
  /** open() refuses a nonce opened before (replay detection). Default false. */
  checkOpen?: boolean;
  /** At most this many seals under the key (default 2^32; counters 2^62). */
  maxSeals?: number;
  /** At most this many plaintext bytes under the key (default: no limit). */
  maxBytes?: number;
}

export declare class SanitizedAead {
  constructor(algorithm: SanitizedAlgorithm, key: Bytes, options?: SanitizedAeadOptions);
  /** ciphertext ‖ tag; throws (code 'ERR_NONCE_REUSE') on a repeated nonce. */
  seal(nonce: Bytes, plaintext: Bytes, aad?: Bytes): Buffer;
  open(nonce: Bytes, sealed: Bytes, aad?: Bytes): Buffer;
  /**
   * The nonce sanitizer's figures for this process (seals checked, refusals by violation, keys
   * held, their memory) as samples of the fleet's series (testdata/vectors/metrics.json).
   */
  static metrics(): MetricSample[];
}

export interface CipherOptions {
  aad?: Buffer;
  /** Written on encrypt, checked on decrypt. */
  tag?: Buffer;
  signal?: AbortSignal;
}

/** Encrypt `source` on the thread pool; an AEAD writes `options.tag`. */
export declare function encrypt(algorithm: string, key: Buffer, iv: Buffer, source: Buffer, options?: CipherOptions): Promise<Buffer>;
/** Decrypt `source` on the thread pool; an AEAD checks `options.tag` before anything is written. */
export declare function decrypt(algorithm: string, key: Buffer, iv: Buffer, source: Buffer, options?: CipherOptions): Promise<Buffer>;
export declare function hash(algorithm: string, source: Buffer, options?: { signal?: AbortSignal }): Promise<Buffer>;
export declare function hmac(algorithm: string, key: Buffer, source: Buffer, options?: { signal?: AbortSignal }): Promise<Buffer>;

export declare class Hash {
  constructor(algorithm: string);
  update(data: Bytes | string, encoding?: BufferEncoding): this;
  digest(): Buffer;
  digest(encoding: BufferEncoding): string;
}
export declare function createHash(algorithm: string): Hash;

/** A UUIDv7 (RFC 9562) as canonical text. */
export declare function uuidv7(): string;
/** A tuid6 as canonical text. */
export declare function tuid6(): string;
export declare function uuidv7Buffer(): Buffer;
export declare function tuid6Buffer(): Buffer;
/** 22 characters of base64url. */
export declare function uuidv7Compact(): string;
export declare function tuid6Compact(): string;
export declare function fromCompact(text: string): Buffer;
/** The Unix ms in the first 48 bits of a UUIDv7 or tuid6. */
export declare function timestampOf(id: Bytes): number;

export declare const cryptoAsync: typeof cryptoAsyncModule;
