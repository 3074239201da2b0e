// Types for nonceforge (main entry).
import * as cryptoAsyncModule from './crypto-async';

export type NonceKind = 'counter' | 'sortable' | 'encrypted';
export type NonceBits = 64 | 96 | 128;
type Bytes = Buffer | NodeJS.TypedArray | DataView;

export interface NonceGeneratorOptions {
  /** 0..511, unique among the live generators of a cluster. */
  machineId: number;
  /** At least 32 bytes; needed for encrypted nonces. */
  key?: Bytes;
  /** Move the epoch (Unix ms); every generator of a cluster must use the same. */
  epochUnixMs?: number;
}

export interface NonceParts {
  unixMs: number;
  machineId: number;
  counter: bigint;
}

export declare class NonceGenerator {
  constructor(options: NonceGeneratorOptions);
  readonly machineId: number;
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
  inspect(nonce: Bytes): NonceParts;
  disable(): void;
  enable(): void;
}

export interface ExtIdOptions {
  /** 'feistel-uuid' (default), 'aes128' or 'cycle-walk'. */
  mode?: 'feistel-uuid' | 'aes128' | 'cycle-walk';
  /** Key version stored in the id, 0..255 (default 1). */
  version?: number;
}

export interface DecodedExtId {
  seq: bigint;
  rand: bigint;
  keyVersion: number;
}

export declare class ExtIdCodec {
  constructor(key: Bytes, typeName: string, options?: ExtIdOptions);
  encode(seq: number | bigint, rand?: number | bigint): string;
  /**
   * Any well-formed id decodes (an id of another key or type gives an unrelated
   * seq): check `seq` against the ids you issued, or `rand` against the stored one.
   */
  decode(id: string): DecodedExtId;
}

export type SanitizedAlgorithm = 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305';

export declare class SanitizedAead {
  constructor(algorithm: SanitizedAlgorithm, key: Bytes, options?: { window?: number });
  /** ciphertext ‖ tag; throws (code 'ERR_NONCE_REUSE') on a repeated nonce. */
  seal(nonce: Bytes, plaintext: Bytes, aad?: Bytes): Buffer;
  open(nonce: Bytes, sealed: Bytes, aad?: Bytes): Buffer;
}

export interface CipherOptions {
  aad?: Buffer;
  /** Written on encrypt, checked on decrypt. */
  tag?: Buffer;
  signal?: AbortSignal;
}

export declare function cipher(algorithm: string, encrypt: boolean, key: Buffer, iv: Buffer, source: Buffer, options?: CipherOptions): Promise<Buffer>;
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
