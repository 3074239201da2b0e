'use strict';
// One id space across faces (docs/contracts.md): the external ids this package
// makes are the bytes of testdata/vectors/extid.json, written by an
// independent Python implementation and read by the Rust and Go tests too.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const nf = require('..');

const file = path.join(__dirname, '..', '..', 'testdata', 'vectors', 'extid.json');

test('external ids: every shared vector — modes, rounds, UUID versions, out-of-band versions, a rotated keyring, the call without rand', () => {
  // seq and rand go past 2^53: read them as text, not as JSON numbers.
  const text = fs.readFileSync(file, 'utf8').replace(/"(seq|rand|derived_rand)": (\d+)/g, '"$1": "$2"');
  const { master_hex: masterHex, rotated_master_hex: rotatedHex, vectors } = JSON.parse(text);
  const keys = { 0: Buffer.from(masterHex, 'hex'), 3: Buffer.from(rotatedHex, 'hex') };
  assert.ok(vectors.length >= 120, `only ${vectors.length} vectors`);
  const seen = new Set();
  for (const v of vectors) {
    const codec = new nf.ExtIdCodec({ current: v.key_version, keys }, v.type, {
      mode: v.mode, rounds: v.rounds, uuidVersion: v.uuid_version, keyVersionInBand: v.key_version_in_band,
    });
    const what = `${v.mode} r${v.rounds} v${v.uuid_version} ${v.key_version_in_band ? 'in' : 'out'} k${v.key_version} ${v.type} ${v.seq}`;
    assert.strictEqual(codec.encode(BigInt(v.seq), BigInt(v.rand)), v.uuid, what);
    assert.strictEqual(codec.derivedRand(BigInt(v.seq)), BigInt(v.derived_rand), what);
    if (v.default_call) assert.strictEqual(codec.encode(BigInt(v.seq)), v.uuid, `the call without rand: ${what}`);
    const inBand = v.mode === 'feistel-uuid' && v.key_version_in_band;
    const back = codec.decodeUnverified(v.uuid, inBand ? {} : { keyVersion: v.key_version });
    assert.deepStrictEqual(back, { seq: BigInt(v.seq), rand: BigInt(v.rand), keyVersion: v.key_version, derived: v.derived }, what);
    // The checked decode: the derived rows decode, the others are refused.
    if (v.derived) assert.strictEqual(codec.decodeSeq(v.uuid), BigInt(v.seq), what);
    else assert.throws(() => codec.decode(v.uuid), /'id' was not made by this codec/, what);
    seen.add(`${v.mode} ${v.rounds} ${v.uuid_version} ${v.key_version_in_band} ${v.key_version} ${v.default_call}`);
  }
  assert.ok(seen.size >= 13, [...seen].join('; '));
});

test('time-prefixed ids: the compact text and timestamps of testdata/vectors/uuid.json (the file Rust, Go and Elixir read)', () => {
  // unix_ns goes past 2^53: read it as text.
  const raw = fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'vectors', 'uuid.json'), 'utf8')
    .replace(/"unix_ns": (\d+)/g, '"unix_ns": "$1"');
  const doc = JSON.parse(raw);
  const bytes = (uuid) => Buffer.from(uuid.replace(/-/g, ''), 'hex');
  assert.ok(doc.v7.length >= 5 && doc.tuid6.length >= 3 && doc.bad_compact.length >= 5);
  for (const v of [...doc.v7, ...doc.tuid6]) {
    assert.deepStrictEqual(nf.fromCompact(v.compact), bytes(v.uuid), v.uuid);
    assert.strictEqual(nf.timestampOf(bytes(v.uuid)), v.unix_ms, v.uuid);
  }
  // This package makes no stuid: a 32-byte compact text is not an id here.
  for (const v of doc.stuid) assert.throws(() => nf.fromCompact(v.compact), /'text'/, v.hex);
  for (const v of doc.bad_compact) assert.throws(() => nf.fromCompact(v.text), /'text'/, v.why);
  // What this package makes has the layouts above: version 7 and RFC 9562's
  // variant, the clock's millisecond in front; a tuid6 the same millisecond.
  const before = Date.now();
  const id = nf.uuidv7Buffer();
  const t = nf.tuid6Buffer();
  const after = Date.now();
  assert.strictEqual(id[6] >> 4, 7);
  assert.strictEqual(id[8] >> 6, 0b10);
  for (const x of [id, t]) assert.ok(nf.timestampOf(x) >= before && nf.timestampOf(x) <= after);
});
