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

test('external ids: the shared vectors, every mode this package offers', () => {
  // seq and rand go past 2^53: read them as text, not as JSON numbers.
  const text = fs.readFileSync(file, 'utf8').replace(/"(seq|rand)": (\d+)/g, '"$1": "$2"');
  const { master_hex: masterHex, vectors } = JSON.parse(text);
  const key = Buffer.from(masterHex, 'hex');
  // The package's codec: 2-round feistel-uuid (UUID version 8, key version in
  // band), aes128 and cycle-walk, key version 0.
  const ours = vectors.filter(
    (v) => v.key_version === 0 && v.rounds === 2 && v.uuid_version === 8 && v.key_version_in_band,
  );
  assert.ok(ours.length >= 30, `only ${ours.length} vectors apply`);
  const modes = new Set();
  for (const v of ours) {
    const codec = new nf.ExtIdCodec(key, v.type, { mode: v.mode });
    assert.strictEqual(codec.encode(BigInt(v.seq), BigInt(v.rand)), v.uuid, `${v.mode} ${v.type} ${v.seq}`);
    const back = codec.decode(v.uuid);
    assert.strictEqual(BigInt(back.seq), BigInt(v.seq));
    assert.strictEqual(BigInt(back.rand), BigInt(v.rand));
    modes.add(v.mode);
  }
  assert.deepStrictEqual([...modes].sort(), ['aes128', 'cycle-walk', 'feistel-uuid']);
});
