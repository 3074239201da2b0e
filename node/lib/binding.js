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
      return require(file);
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

module.exports = load();
module.exports.platform = platform;
