'use strict';
// As an npm user gets it: the release is staged and packed (scripts/stage.js:
// the main package, which lists the per-platform packages as optional
// dependencies, and linux-x64-gnu's), both tarballs are installed into an
// empty project with npm — offline, from an empty cache, on a PATH that has
// node and npm and no cargo — and a CommonJS and an ES module example run
// there, and a TypeScript ES module example type-checks against the installed
// declarations.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');

function which(program) {
  for (const dir of (process.env.PATH || '').split(':')) {
    const file = path.join(dir, program);
    if (dir && fs.existsSync(file)) return fs.realpathSync(file);
  }
  throw new Error(`${program} not on PATH`);
}

test('npm pack, install the tarballs into an empty project without cargo, run CommonJS and ESM examples', { timeout: 180000 }, (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nonceforge-pack-'));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const out = execFileSync(process.execPath, [path.join(root, 'scripts', 'stage.js'), path.join(work, 'dist')], { encoding: 'utf8' });
  const tarballs = out.trim().split('\n');
  assert.equal(tarballs.length, 2, out);
  const listing = execFileSync('tar', ['tzf', tarballs[0]], { encoding: 'utf8' });
  assert.ok(!/\.node\n/.test(listing), 'the main package carries no binary');
  assert.match(execFileSync('tar', ['tzf', tarballs[1]], { encoding: 'utf8' }), /nonceforge\.linux-x64-gnu\.node/);

  // A PATH of node and npm only.
  const bin = path.join(work, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  fs.symlinkSync(which('npm'), path.join(bin, 'npm'));
  fs.symlinkSync(which('sh'), path.join(bin, 'sh'));
  const env = {
    PATH: bin,
    HOME: path.join(work, 'home'),
    npm_config_cache: path.join(work, 'cache'),
    npm_config_update_notifier: 'false',
  };
  assert.throws(() => execFileSync('cargo', ['--version'], { env, stdio: 'ignore' }), 'cargo is reachable');

  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "version": "1.0.0", "private": true }\n');
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: app, env, stdio: 'pipe' });
  assert.ok(fs.existsSync(path.join(app, 'node_modules', 'nonceforge-linux-x64-gnu', 'nonceforge.linux-x64-gnu.node')));

  fs.writeFileSync(path.join(app, 'example.cjs'), `
const { NonceGenerator, uuidv7 } = require('nonceforge');
const cryptoAsync = require('nonceforge/crypto-async');
const g = new NonceGenerator({ machineId: 3 });
const digest = cryptoAsync.hash('sha256', Buffer.from('abc'));
console.log(JSON.stringify({ nonce: g.counter(96).length, machineId: g.machineId, uuid: uuidv7().length,
  digest: digest.toString('hex'), addon: require.resolve('nonceforge-linux-x64-gnu'),
  zeroCopy: cryptoAsync.ZERO_COPY, why: cryptoAsync.ZERO_COPY_OFF_BECAUSE,
  cbc: require('nonceforge/crypto-async-1').cipher.length === 0 }));
`);
  fs.writeFileSync(path.join(app, 'example.mjs'), `
import { NonceGenerator, ExtIdCodec } from 'nonceforge';
import nonceforge from 'nonceforge';
import cryptoAsync, { hmac } from 'nonceforge/crypto-async';
const g = new NonceGenerator({ machineId: 4 });
const codec = new ExtIdCodec(Buffer.alloc(32, 1), 'user');
const id = codec.encode(42);
cryptoAsync.hash('sha256', Buffer.from('abc'), (error, digest) => {
  console.log(JSON.stringify({ nonce: g.sortable(128).length, seq: String(codec.decode(id).seq), same: nonceforge.NonceGenerator === NonceGenerator,
    mac: hmac('sha256', Buffer.alloc(4), Buffer.from('x')).length, digest: digest.toString('hex') }));
});
`);
  const cjs = JSON.parse(execFileSync('node', ['example.cjs'], { cwd: app, env, encoding: 'utf8' }));
  assert.equal(cjs.nonce, 12);
  assert.equal(cjs.machineId, 3);
  assert.equal(cjs.uuid, 36);
  assert.equal(cjs.digest, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  // The platform package carries the V8 pin built for this Node: pool jobs are zero-copy there.
  assert.equal(cjs.zeroCopy, true, cjs.why);
  assert.equal(cjs.cbc, true);
  assert.ok(cjs.addon.includes(path.join('node_modules', 'nonceforge-linux-x64-gnu')), cjs.addon);
  const esm = JSON.parse(execFileSync('node', ['example.mjs'], { cwd: app, env, encoding: 'utf8' }));
  assert.deepEqual(esm, { nonce: 16, seq: '42', same: true, mac: 32, digest: cjs.digest });

  // Without the platform package (optional dependencies omitted): a clear error
  // naming the platform and the way to build from source, not a stack of
  // MODULE_NOT_FOUND.
  const bare = path.join(work, 'bare');
  fs.mkdirSync(bare);
  fs.writeFileSync(path.join(bare, 'package.json'), '{ "name": "bare", "version": "1.0.0", "private": true }\n');
  execFileSync('npm', ['install', '--offline', '--omit=optional', '--no-audit', '--no-fund', tarballs[0]], { cwd: bare, env, stdio: 'pipe' });
  assert.ok(!fs.existsSync(path.join(bare, 'node_modules', 'nonceforge-linux-x64-gnu')));
  const probe = "try { require('nonceforge'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }";
  const failed = JSON.parse(execFileSync('node', ['-e', probe], { cwd: bare, env, encoding: 'utf8' }));
  assert.equal(failed.code, 'ERR_NONCEFORGE_NO_ADDON');
  assert.match(failed.message, /no native addon for linux-x64-gnu/);
  assert.match(failed.message, /nonceforge-linux-x64-gnu/);
  assert.match(failed.message, /npm run build/);

  // Types, as a TypeScript ES module project sees them (tsc and @types/node of this package's dev dependencies).
  fs.writeFileSync(path.join(app, 'example.mts'), `
import { NonceGenerator, type LeaseInfo } from 'nonceforge';
import cryptoAsync from 'nonceforge/crypto-async';
const g: NonceGenerator = new NonceGenerator({ machineId: 1 });
const info: LeaseInfo | null = g.lease;
const d: Buffer = cryptoAsync.hash('sha256', Buffer.alloc(1));
// @ts-expect-error bits must be 64, 96 or 128
g.counter(48);
export { info, d };
`);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--typeRoots', path.join(root, 'node_modules', '@types'), '--types', 'node', 'example.mts'], { cwd: app, env, stdio: 'pipe' });
});
