'use strict';
// Loads the native addon, the napi-rs way: a prebuilt per-platform package
// (`nonceforge-<platform>`, an optional dependency of this one that npm
// installs only where its os/cpu/libc match), or an addon built here from
// source (`npm run build`, for development and unsupported platforms).
const fs = require('node:fs');
const path = require('node:path');

function isMusl() {
  if (process.platform !== 'linux') return false;
  try {
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return fs.existsSync('/etc/alpine-release');
  }
}

// The platform's name as the per-platform packages spell it.
function platform() {
  const { platform: os, arch } = process;
  if (os === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (os === 'win32') return `win32-${arch}-msvc`;
  return `${os}-${arch}`;
}

// This package's directory (lib/ is one level down).
const PACKAGE_DIR = path.join(__dirname, '..');

function load() {
  const name = platform();
  const tried = [];
  const candidates = [
    path.join(PACKAGE_DIR, `nonceforge.${name}.node`),
    path.join(PACKAGE_DIR, 'nonceforge.node'),
    `nonceforge-${name}`,
    path.join(PACKAGE_DIR, '..', 'target', 'release', 'libnonceforge_node.so'),
  ];
  for (const file of candidates) {
    try {
      const addon = require(file);
      zeroCopy(addon, path.dirname(require.resolve(file)));
      return addon;
    } catch (error) {
      if (error.code !== 'MODULE_NOT_FOUND' && !/cannot open shared object/.test(error.message)) throw error;
      tried.push(file);
    }
  }
  const error = new Error(
    `nonceforge: no native addon for ${name} (Node ${process.versions.node}). ` +
      `Prebuilt packages exist for linux-x64-gnu; npm installs the one for this platform ` +
      `(nonceforge-${name}) as an optional dependency — check that optional dependencies ` +
      `were not omitted (--omit=optional, --no-optional). To build from source: install Rust ` +
      `1.89 or newer (https://rustup.rs), run \`npm run build\` in node/ of a checkout of the ` +
      `nonceforge repository, and copy node/nonceforge.node into this package's directory ` +
      `(${PACKAGE_DIR}). Tried: ${tried.join(', ')}`
  );
  error.code = 'ERR_NONCEFORGE_NO_ADDON';
  throw error;
}

// Pool jobs read and write the caller's buffers in place where the V8 pin
// built for this Node (nonceforge-v8.abi<NODE_MODULE_VERSION>.node, beside the
// addon) opens, and copy them elsewhere (README, "Buffers and asynchronous
// calls"). NONCEFORGE_ZERO_COPY=0 turns it off. Why it is off, when it is:
// `require('nonceforge/crypto-async').ZERO_COPY_OFF_BECAUSE`.
let zeroCopyOff = 'not tried';
function zeroCopy(addon, dir) {
  if (typeof addon.zeroCopyInit !== 'function') return;
  if (process.env.NONCEFORGE_ZERO_COPY === '0') {
    zeroCopyOff = 'NONCEFORGE_ZERO_COPY=0';
    return;
  }
  const pin = path.join(dir, `nonceforge-v8.abi${process.versions.modules}.node`);
  if (!fs.existsSync(pin)) {
    zeroCopyOff = `no ${path.basename(pin)} beside the addon (not built for Node ${process.versions.node})`;
    return;
  }
  zeroCopyOff = addon.zeroCopyInit(pin, Number(process.versions.modules)) || '';
}

module.exports = load();
Object.defineProperty(module.exports, 'zeroCopyOffBecause', { get: () => zeroCopyOff });
module.exports.platform = platform;
