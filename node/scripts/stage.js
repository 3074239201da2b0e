'use strict';
// Stages a release of the npm packages, the napi-rs way, and packs them:
//   node scripts/stage.js [OUT_DIR]
// - OUT_DIR/nonceforge: this package's files (package.json "files") and a
//   package.json that lists one optional dependency per platform package;
// - OUT_DIR/nonceforge-<platform>: each platform package with its addon.
// Then `npm pack` in each writes the tarballs into OUT_DIR. Here only
// linux-x64-gnu is built (from target/release); a release builds the others
// on their own runners (darwin-arm64, darwin-x64, linux-arm64-gnu,
// linux-x64-musl, win32-x64-msvc), drops each addon into npm/<platform>/ and
// runs this script once, then `npm publish` for each platform tarball before
// the main one.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const out = path.resolve(process.argv[2] || path.join(root, 'dist'));
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const platforms = manifest.napi.platforms;

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

// The addon of this machine's platform, built from source (npm run build).
const built = [path.join(root, 'nonceforge.node'), path.join(root, '..', 'target', 'release', 'libnonceforge_node.so')].find((f) =>
  fs.existsSync(f)
);

const tarballs = [];
for (const platform of platforms) {
  const src = path.join(root, 'npm', platform);
  const dst = path.join(out, `nonceforge-${platform}`);
  fs.mkdirSync(dst);
  const pkg = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8'));
  pkg.version = manifest.version;
  fs.writeFileSync(path.join(dst, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  fs.copyFileSync(path.join(src, 'README.md'), path.join(dst, 'README.md'));
  for (const file of ['LICENSE-MIT', 'LICENSE-APACHE']) fs.copyFileSync(path.join(root, '..', file), path.join(dst, file));
  const addon = path.join(src, pkg.main);
  const here = require('../lib/binding.js').platform() === platform;
  if (fs.existsSync(addon)) fs.copyFileSync(addon, path.join(dst, pkg.main));
  else if (here && built) {
    fs.copyFileSync(built, path.join(dst, pkg.main));
    // The release profile keeps debug info (for profiling the benchmarks): the
    // published addon goes without it (a third of the size), where strip exists.
    try {
      execFileSync('strip', ['--strip-debug', path.join(dst, pkg.main)], { stdio: 'ignore' });
    } catch {
      // no strip here: ship it as built
    }
  }
  else throw new Error(`no addon for ${platform}: build it on that platform and put it at ${addon}`);
  // The V8 pins, one per Node ABI (bulk/pin.rs): prebuilt ones dropped into
  // npm/<platform>/ by a release, and this machine's (scripts/build-v8.js).
  const pins = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []).filter((f) => /^nonceforge-v8\.abi\d+\.node$/.test(f));
  for (const f of pins(src)) fs.copyFileSync(path.join(src, f), path.join(dst, f));
  if (here) for (const f of pins(root)) fs.copyFileSync(path.join(root, f), path.join(dst, f));
  tarballs.push(execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: dst, encoding: 'utf8' }).trim());
}

const main = path.join(out, 'nonceforge');
fs.mkdirSync(main);
// The license files live at the repository's root, beside every package's.
const LICENSES = ['LICENSE-MIT', 'LICENSE-APACHE'];
const sourceOf = (file) => (LICENSES.includes(file) ? path.join(root, '..', file) : path.join(root, file));
for (const file of manifest.files) fs.cpSync(sourceOf(file), path.join(main, file), { recursive: true });
const published = { ...manifest };
delete published.devDependencies;
delete published.napi;
delete published.scripts;
delete published.allowScripts;
published.optionalDependencies = Object.fromEntries(platforms.map((p) => [`nonceforge-${p}`, manifest.version]));
fs.writeFileSync(path.join(main, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
tarballs.unshift(execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: main, encoding: 'utf8' }).trim());

for (const t of tarballs) console.log(path.join(out, t));
