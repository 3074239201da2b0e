// Types for nonceforge/crypto-async-1: crypto-async 1.0.2's API.
/// <reference types="node" />

/** Any Buffer or TypedArray view of bytes. */
type Bytes = Buffer | NodeJS.TypedArray | DataView;
/**
 * The callback. Run-time errors are 1.0.2's (`'cipher init error'`, `'cipher final error'` for a
 * wrong key or bad padding, `'digest init error'`); a job whose source or target was detached,
 * transferred or shrunk before it ended gets an `Error` with `code`
 * `'ERR_NONCEFORGE_SOURCE_DETACHED'` or `'ERR_NONCEFORGE_TARGET_DETACHED'`.
 */
type End<T> = (error: (Error & { code?: string }) | undefined, result: T) => void;

/**
 * Encrypts (`encrypt` 1) or decrypts (0) `source` with any cipher Node's OpenSSL knows by name
 * (`'AES-256-CBC'`, `'aes-128-ctr'`, …), with OpenSSL's PKCS#7 padding for block modes; calls back
 * with a new Buffer.
 */
export declare function cipher(algorithm: string, encrypt: 0 | 1, key: Bytes, iv: Bytes, source: Bytes, end: End<Buffer>): void;
/**
 * The zero-copy form: writes into `target` at `targetOffset`, which must have room for
 * `sourceSize + blockSize - 1` bytes (encrypting) or `sourceSize + blockSize` (decrypting a block
 * mode); calls back with the bytes written.
 */
export declare function cipher(
  algorithm: string,
  encrypt: 0 | 1,
  key: Bytes,
  keyOffset: number,
  keySize: number,
  iv: Bytes,
  ivOffset: number,
  ivSize: number,
  source: Bytes,
  sourceOffset: number,
  sourceSize: number,
  target: Bytes,
  targetOffset: number,
  end: End<number>
): void;
/** The digest of `source` (`'SHA256'`, `'MD5'`, …), as a new Buffer. */
export declare function hash(algorithm: string, source: Bytes, end: End<Buffer>): void;
/** The zero-copy form: writes the digest into `target` at `targetOffset`; calls back with its length. */
export declare function hash(
  algorithm: string,
  source: Bytes,
  sourceOffset: number,
  sourceSize: number,
  target: Bytes,
  targetOffset: number,
  end: End<number>
): void;
/** The HMAC of `source` under `key`, as a new Buffer. */
export declare function hmac(algorithm: string, key: Bytes, source: Bytes, end: End<Buffer>): void;
/** The zero-copy form: writes the HMAC into `target` at `targetOffset`; calls back with its length. */
export declare function hmac(
  algorithm: string,
  key: Bytes,
  keyOffset: number,
  keySize: number,
  source: Bytes,
  sourceOffset: number,
  sourceSize: number,
  target: Bytes,
  targetOffset: number,
  end: End<number>
): void;
