'use strict';
// Every JavaScript block of node/README.md and of the top README's Node part
// runs as written — in the module system it is written in (an `import` or a
// top-level `await` makes it ESM, else CommonJS) — and again translated into
// the other one; then TypeScript (the 5.x and 7.x lines) checks them all with
// --strict against the package's declarations. A block preceded by
// `<!-- not run: why -->` is skipped, and says why in the README.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = path.join(__dirname, '..');
const readmes = [path.join(here, 'README.md'), path.join(here, '..', 'README.md')];

function blocks(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```js') continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i]);
    const skip = /^<!-- not run: (.+) -->$/.exec((lines[start - 1] || '').trim());
    out.push({ where: `${path.relative(path.join(here, '..'), file)}:${start + 1}`, code: body.join('\n'), skip: skip && skip[1] });
  }
  return out;
}

const isEsm = (code) => /^\s*import\s/m.test(code) || /^(?!\s*\/\/).*\bawait\b/m.test(code.replace(/async[^]*?=>|async function[^]*?\{/g, ''));

// The same code in the other module system: `import` lines ↔ `require` lines,
// and an async wrapper for top-level await in CommonJS.
function toCjs(code) {
  const body = code
    .replace(/^import (\w+) from '([^']+)';$/gm, "const $1 = require('$2');")
    .replace(/^import \{([^}]+)\} from '([^']+)';$/gm, (_, names, m) => `const {${names.replace(/ as /g, ': ')}} = require('${m}');`);
  return `(async () => {\n${body}\n})().catch((e) => { console.error(e); process.exit(1); });\n`;
}
function toEsm(code) {
  const esm = code
    .replace(/^const (\w+) = require\('([^']+)'\);(.*)$/gm, "import $1 from '$2';$3")
    .replace(/^const \{([^}]+)\} = require\('([^']+)'\);(.*)$/gm, (_, names, m, rest) => `import {${names.replace(/:/g, ' as')}} from '${m}';${rest}`);
  // A require() inside an expression: ESM's own require, from createRequire.
  return /\brequire\(/.test(esm)
    ? `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${esm}`
    : esm;
}

const all = readmes.flatMap(blocks);
const runnable = all.filter((b) => !b.skip);

// A project beside the blocks whose node_modules/nonceforge is this package.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nonceforge-readme-'));
fs.mkdirSync(path.join(dir, 'node_modules', '@types'), { recursive: true });
fs.symlinkSync(here, path.join(dir, 'node_modules', 'nonceforge'), 'dir');
fs.symlinkSync(path.join(here, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'), 'dir');
// OpenTelemetry's API and SDK (dev dependencies), for the metrics bridge's block.
fs.symlinkSync(path.join(here, 'node_modules', '@opentelemetry'), path.join(dir, 'node_modules', '@opentelemetry'), 'dir');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

test('the README blocks: every one runs or says why not', () => {
  assert.ok(runnable.length >= 7, `only ${runnable.length} runnable blocks found`);
  for (const b of all.filter((x) => x.skip)) assert.ok(b.skip.length > 10, `${b.where}: say why it is not run`);
});

const files = [];
runnable.forEach((b, i) => {
  const esm = isEsm(b.code);
  const asWritten = path.join(dir, `block${i}${esm ? '.mjs' : '.cjs'}`);
  const other = path.join(dir, `block${i}.other${esm ? '.cjs' : '.mjs'}`);
  fs.writeFileSync(asWritten, `${b.code}\n`);
  fs.writeFileSync(other, esm ? toCjs(b.code) : toEsm(b.code));
  files.push(asWritten);
  for (const [label, file] of [[esm ? 'ESM, as written' : 'CommonJS, as written', asWritten], [esm ? 'CommonJS' : 'ESM', other]]) {
    test(`${b.where} runs (${label})`, () => {
      const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `${b.where} (${label}) failed:\n${r.stderr}\n--- the code:\n${fs.readFileSync(file, 'utf8')}`);
    });
  }
});

for (const [line, tsc] of [['5.x', 'typescript'], ['7.x', 'typescript-7']]) {
  test(`TypeScript ${line} checks the blocks under --strict (checkJs)`, () => {
    const bin = path.join(here, 'node_modules', tsc, 'bin', 'tsc');
    const args = ['--noEmit', '--strict', '--allowJs', '--checkJs', '--module', 'node16', '--moduleResolution', 'node16',
      '--target', 'es2022', '--types', 'node', ...files];
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  });
}
