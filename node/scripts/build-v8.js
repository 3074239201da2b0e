'use strict';
// Builds the V8 pin (crates/nonceforge-node/v8/pin.cc) for the running Node:
//   node scripts/build-v8.js [OUT_DIR]      (default: this package's directory)
// writes nonceforge-v8.abi<NODE_MODULE_VERSION>.node — one per Node major, as
// V8's C++ ABI changes with each. Needs a C++ compiler (CXX, else c++) and
// this Node's headers (NODE_INCLUDE_DIR, else <prefix>/include/node). Without
// either it says so and exits 0: the addon then copies pool jobs' buffers
// (Node-API alone), which is correct, only slower (node/README.md, "Buffers
// and asynchronous calls").
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const out = path.resolve(process.argv[2] || root);
const abi = process.versions.modules;
const file = path.join(out, `nonceforge-v8.abi${abi}.node`);
const source = path.join(root, '..', 'crates', 'nonceforge-node', 'v8', 'pin.cc');
const include = process.env.NODE_INCLUDE_DIR || path.join(path.dirname(path.dirname(fs.realpathSync(process.execPath))), 'include', 'node');

function skip(why) {
  process.stderr.write(`build-v8: ${why}; pool jobs will copy their buffers (no zero-copy on Node ${process.versions.node})\n`);
  fs.rmSync(file, { force: true });
  process.exit(0);
}

if (Number(process.versions.node.split('.')[0]) < 20) skip('Node 20 or newer is needed (resizable ArrayBuffers in V8\'s API)');
if (!fs.existsSync(path.join(include, 'v8.h'))) skip(`no Node headers at ${include} (set NODE_INCLUDE_DIR)`);

// The V8 build options that change what the headers declare, as node-gyp
// passes them (config.gypi beside the headers).
const config = fs.readFileSync(path.join(include, 'config.gypi'), 'utf8');
const on = (name) => new RegExp(`'${name}': (1|'true'|true)`).test(config);
const defines = [];
if (on('v8_enable_pointer_compression')) defines.push('-DV8_COMPRESS_POINTERS', '-DV8_31BIT_SMIS_ON_64BIT_ARCH');
if (on('v8_enable_31bit_smis_on_64bit_arch')) defines.push('-DV8_31BIT_SMIS_ON_64BIT_ARCH');
if (on('v8_enable_sandbox')) defines.push('-DV8_ENABLE_SANDBOX');

const cxx = process.env.CXX || 'c++';
const std = Number(process.versions.node.split('.')[0]) >= 22 ? '-std=c++20' : '-std=c++17';
const args = [std, '-O2', '-fPIC', '-shared', '-fno-exceptions', '-fno-rtti', '-fvisibility=hidden',
  '-Wall', '-Werror', ...defines, `-I${include}`, source, '-o', `${file}.tmp`];
const r = spawnSync(cxx, args, { stdio: ['ignore', 'inherit', 'inherit'] });
if (r.error && r.error.code === 'ENOENT') skip(`no C++ compiler (${cxx}; set CXX)`);
if (r.status !== 0) {
  fs.rmSync(`${file}.tmp`, { force: true });
  process.stderr.write(`build-v8: ${cxx} failed\n`);
  process.exit(1);
}
fs.renameSync(`${file}.tmp`, file);
process.stdout.write(`build-v8: ${path.relative(process.cwd(), file) || file}\n`);
