// Types for nonceforge/crypto-async: a drop-in for @ronomon/crypto-async 5.0.1.
/// <reference types="node" />

/** Any Buffer or TypedArray view of bytes. */
type Bytes = Buffer | NodeJS.TypedArray | DataView;
/**
 * The callback of an asynchronous call. Besides the original's errors, a job whose target (or a
 * seal's tag) or source was detached, transferred or shrunk before it ended gets an `Error` with
 * `code` `'ERR_NONCEFORGE_TARGET_DETACHED'` or `'ERR_NONCEFORGE_SOURCE_DETACHED'`. As in Node's own
 * callback types, `result` is typed as present: it is, whenever `error` is undefined.
 */
type Done<T> = (error: (Error & { code?: string }) | undefined, result: T) => void;

export declare const CIPHER_BLOCK_MAX: 32;
/** Hash, HMAC and AEAD jobs of at most this many bytes (AES-CTR and ChaCha20: 4x) run on the calling thread; their callback still comes later. Default 16384; 0 sends every job to the pool. */
export declare let INLINE_MAX: number;
/** Whether pool jobs read and write the buffers in place (V8's backing store pinned) rather than copies. */
export declare const ZERO_COPY: boolean;
/** Why {@link ZERO_COPY} is false (`''` when it is true). */
export declare const ZERO_COPY_OFF_BECAUSE: string;

export declare const E_AAD: string;
export declare const E_AAD_INVALID: string;
export declare const E_AAD_OFFSET: string;
export declare const E_AAD_RANGE: string;
export declare const E_AAD_SIZE: string;
export declare const E_ALGORITHM: string;
export declare const E_ALGORITHM_DISABLED: string;
export declare const E_ALGORITHM_UNKNOWN: string;
export declare const E_ARGUMENTS: string;
export declare const E_BUFFER_LENGTH: string;
export declare const E_CALLBACK: string;
export declare const E_CANCELLED: string;
export declare const E_CORRUPT: string;
export declare const E_ENCRYPT: string;
export declare const E_IV: string;
export declare const E_IV_INVALID: string;
export declare const E_IV_OFFSET: string;
export declare const E_IV_RANGE: string;
export declare const E_IV_SIZE: string;
export declare const E_KEY: string;
export declare const E_KEY_INVALID: string;
export declare const E_KEY_OFFSET: string;
export declare const E_KEY_RANGE: string;
export declare const E_KEY_SIZE: string;
export declare const E_OOM: string;
export declare const E_SOURCE: string;
export declare const E_SOURCE_OFFSET: string;
export declare const E_SOURCE_RANGE: string;
export declare const E_SOURCE_SIZE: string;
export declare const E_TAG: string;
export declare const E_TAG_INVALID: string;
export declare const E_TAG_OFFSET: string;
export declare const E_TAG_RANGE: string;
export declare const E_TAG_SIZE: string;
export declare const E_TARGET: string;
export declare const E_TARGET_OFFSET: string;
export declare const E_TARGET_RANGE: string;

/** Encrypt (1) or decrypt (0) into a new Buffer. */
export declare function cipher(algorithm: string, encrypt: 0 | 1, key: Buffer, iv: Buffer, source: Buffer): Buffer;
export declare function cipher(algorithm: string, encrypt: 0 | 1, key: Buffer, iv: Buffer, source: Buffer, end: Done<Buffer>): void;
/** AEAD: `tag` is written on encrypt and checked on decrypt (Error 'corrupt'). */
export declare function cipher(algorithm: string, encrypt: 0 | 1, key: Buffer, iv: Buffer, source: Buffer, aad: Buffer, tag: Buffer): Buffer;
export declare function cipher(algorithm: string, encrypt: 0 | 1, key: Buffer, iv: Buffer, source: Buffer, aad: Buffer, tag: Buffer, end: Done<Buffer>): void;
/** Zero-copy: writes `sourceSize` bytes at `target[targetOffset]`; returns that count. */
export declare function cipher(
  algorithm: string, encrypt: 0 | 1,
  key: Bytes, keyOffset: number, keySize: number,
  iv: Bytes, ivOffset: number, ivSize: number,
  source: Bytes, sourceOffset: number, sourceSize: number,
  target: Bytes, targetOffset: number
): number;
export declare function cipher(
  algorithm: string, encrypt: 0 | 1,
  key: Bytes, keyOffset: number, keySize: number,
  iv: Bytes, ivOffset: number, ivSize: number,
  source: Bytes, sourceOffset: number, sourceSize: number,
  target: Bytes, targetOffset: number,
  end: Done<number>
): void;
export declare function cipher(
  algorithm: string, encrypt: 0 | 1,
  key: Bytes, keyOffset: number, keySize: number,
  iv: Bytes, ivOffset: number, ivSize: number,
  source: Bytes, sourceOffset: number, sourceSize: number,
  target: Bytes, targetOffset: number,
  aad: Bytes, aadOffset: number, aadSize: number,
  tag: Bytes, tagOffset: number, tagSize: number
): number;
export declare function cipher(
  algorithm: string, encrypt: 0 | 1,
  key: Bytes, keyOffset: number, keySize: number,
  iv: Bytes, ivOffset: number, ivSize: number,
  source: Bytes, sourceOffset: number, sourceSize: number,
  target: Bytes, targetOffset: number,
  aad: Bytes, aadOffset: number, aadSize: number,
  tag: Bytes, tagOffset: number, tagSize: number,
  end: Done<number>
): void;

export declare function hash(algorithm: string, source: Buffer): Buffer;
export declare function hash(algorithm: string, source: Buffer, end: Done<Buffer>): void;
export declare function hash(algorithm: string, source: Bytes, sourceOffset: number, sourceSize: number, target: Bytes, targetOffset: number): number;
export declare function hash(algorithm: string, source: Bytes, sourceOffset: number, sourceSize: number, target: Bytes, targetOffset: number, end: Done<number>): void;

export declare function hmac(algorithm: string, key: Buffer, source: Buffer): Buffer;
export declare function hmac(algorithm: string, key: Buffer, source: Buffer, end: Done<Buffer>): void;
export declare function hmac(algorithm: string, key: Bytes, keyOffset: number, keySize: number, source: Bytes, sourceOffset: number, sourceSize: number, target: Bytes, targetOffset: number): number;
export declare function hmac(algorithm: string, key: Bytes, keyOffset: number, keySize: number, source: Bytes, sourceOffset: number, sourceSize: number, target: Bytes, targetOffset: number, end: Done<number>): void;
